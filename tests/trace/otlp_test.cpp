// Tests of the OTLP/HTTP protobuf encoder and decoder (otlp.h): exact bytes of a small message,
// round trips of every attribute kind, unknown fields skipped, malformed input refused.
#include "trace/otlp.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "trace/otlp_sample_span.h"

namespace inferscope::trace {
namespace {

// Tests the exact wire bytes of a minimal span (checked by hand against the proto field numbers).
TEST(OtlpTest, EncodesTheDocumentedFieldNumbers) {
  ExportRequest r;
  Span s;
  s.trace_id[15] = 1;
  s.span_id[7] = 2;
  s.name = "x";
  s.kind = SpanKind::kServer;
  s.start_unix_ns = 1;
  s.end_unix_ns = 2;
  r.resources.push_back(ResourceSpans{{}, {ScopeSpans{"", "", {s}}}});
  const std::string bytes = encode_export_request(r);
  std::string span;
  span += std::string("\x0a\x10", 2) + std::string(15, '\0') + "\x01";  // 1: trace_id
  span += std::string("\x12\x08", 2) + std::string(7, '\0') + "\x02";   // 2: span_id
  span += "\x2a\x01x";                                                   // 5: name
  span += "\x30\x02";                                                    // 6: kind SERVER
  span += std::string("\x39\x01\0\0\0\0\0\0\0", 9);                      // 7: start (fixed64)
  span += std::string("\x41\x02\0\0\0\0\0\0\0", 9);                      // 8: end (fixed64)
  std::string scope_spans = std::string("\x0a\x00", 2) + "\x12" + static_cast<char>(span.size()) + span;
  std::string resource_spans = std::string("\x0a\x00", 2) + "\x12" + static_cast<char>(scope_spans.size()) + scope_spans;
  const std::string want = "\x0a" + std::string(1, static_cast<char>(resource_spans.size())) + resource_spans;
  EXPECT_EQ(bytes, want);
}

// Tests that every field and attribute kind survives encode -> decode.
TEST(OtlpTest, RoundTripsEveryField) {
  const ExportRequest r = otlp_sample_request();
  const auto back = decode_export_request(encode_export_request(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, r);
  EXPECT_EQ(back->resources[0].service_name(), "inferscope-serve");
  EXPECT_EQ(back->span_count(), 2U);
  EXPECT_TRUE(back->resources[0].scopes[0].spans[1].is_root());
}

// Tests that spans encoded in pieces (as the exporter does, one piece per request) and appended
// end to end make the same bytes as the whole request encoded at once, so the join is the same
// message; and that a batch of no spans is still a valid request of that resource and scope.
TEST(OtlpTest, JoinedSpanPiecesEqualTheWholeRequest) {
  const ExportRequest r = otlp_sample_request();
  const ResourceSpans& resource = r.resources[0];
  const ScopeSpans& scope = resource.scopes[0];
  const std::string pieces = encode_spans_field({scope.spans[0]}) + encode_spans_field({scope.spans[1]});
  const std::string joined = encode_export_request(resource.resource_attributes, scope.scope_name, scope.scope_version, pieces);
  EXPECT_EQ(joined, encode_export_request(r));
  EXPECT_EQ(encode_export_request(resource.resource_attributes, scope.scope_name, scope.scope_version,
                                  encode_spans_field(scope.spans)),
            joined);
  ExportRequest none = r;
  none.resources[0].scopes[0].spans.clear();
  EXPECT_EQ(encode_export_request(resource.resource_attributes, scope.scope_name, scope.scope_version, ""),
            encode_export_request(none));
}

// wrap writes one length-delimited field whose number and length fit one byte each.
std::string wrap(int field, const std::string& body) {
  EXPECT_LT(body.size(), 128U);
  return std::string(1, static_cast<char>(field << 3 | 2)) + static_cast<char>(body.size()) + body;
}

// Tests that fields the model does not keep (trace_state, events, kvlist and bytes values, an
// unknown field number) are skipped, as protobuf's unknown-field rule requires.
TEST(OtlpTest, SkipsFieldsItDoesNotKeep) {
  Span s = otlp_sample_span();
  s.attributes.clear();
  ExportRequest one;
  one.resources.push_back(ResourceSpans{{}, {ScopeSpans{"s", "", {s}}}});
  const std::string encoded = encode_export_request(one);
  // request{1: resource_spans{1: resource{}, 2: scope_spans{1: scope{1: "s"}, 2: span}}}: the span
  // is the tail of the encoding, after 2 + 2 + 2 + 5 + 2 header bytes.
  std::string span = encoded.substr(13);
  ASSERT_EQ(encoded, wrap(1, wrap(1, "") + wrap(2, wrap(1, wrap(1, "s")) + wrap(2, span))));
  span += wrap(3, "k=v");                                        // trace_state
  span += wrap(11, wrap(2, "ev"));                               // an event with a name
  span += std::string("\x98\x06\x05", 3);                        // field 99, varint 5
  span += wrap(9, wrap(1, "k") + wrap(2, wrap(6, "")));          // attribute with a kvlist value
  span += wrap(9, wrap(1, "b") + wrap(2, wrap(7, "z")));         // attribute with a bytes value
  const std::string request = wrap(1, wrap(1, "") + wrap(2, wrap(1, wrap(1, "s")) + wrap(2, span)));
  const auto back = decode_export_request(request);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->span_count(), 1U);
  EXPECT_EQ(back->resources[0].scopes[0].spans[0], s);
}

// Tests that malformed wire data is refused with one line naming the problem.
TEST(OtlpTest, RefusesMalformedInput) {
  const std::string good = encode_export_request(otlp_sample_request());
  const auto expect_error = [](std::string_view bytes, std::string_view needle) {
    const auto r = decode_export_request(bytes);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.error().message.rfind("cannot decode OTLP traces: ", 0), 0U) << r.error().message;
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  };
  for (std::size_t cut : {1UL, 2UL, good.size() / 2, good.size() - 1}) {
    const auto r = decode_export_request(std::string_view(good).substr(0, cut));
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
  }
  expect_error(std::string("\x0b", 1), "wire type 3");                       // a group start
  expect_error(std::string("\x0a\x05\x12\x03\x12\x01", 6), "runs past the end");
  // a span whose trace id is 3 bytes
  expect_error(std::string("\x0a\x0b\x12\x09\x12\x07\x0a\x03\x01\x02\x03\x12\x00", 13), "trace_id is 3 bytes");
  // a span without ids
  expect_error(std::string("\x0a\x06\x12\x04\x12\x02\x2a\x00", 8), "no trace_id");
  // a span name that is not UTF-8
  Span s = otlp_sample_span();
  s.name = "\xff";
  ExportRequest r;
  r.resources.push_back(ResourceSpans{{}, {ScopeSpans{"", "", {s}}}});
  expect_error(encode_export_request(r), "UTF-8");
  expect_error(std::string("\x0a\x01", 2), "runs past the end");
  expect_error(std::string(11, '\xff'), "varint");
}

// Tests that a span without a kind field decodes as UNSPECIFIED and re-encodes to the same bytes
// (a fuzz finding: it used to come back INTERNAL, which re-encoded as kind 1).
TEST(OtlpTest, AbsentKindIsUnspecified) {
  Span s = otlp_sample_span();
  s.kind = SpanKind::kUnspecified;
  ExportRequest r;
  r.resources.push_back(ResourceSpans{{}, {ScopeSpans{"", "", {s}}}});
  const std::string bytes = encode_export_request(r);
  const auto back = decode_export_request(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->resources[0].scopes[0].spans[0].kind, SpanKind::kUnspecified);
  EXPECT_EQ(encode_export_request(*back), bytes);
}

// Tests that an empty body is an empty, valid request (OTLP allows it).
TEST(OtlpTest, EmptyBodyIsAnEmptyRequest) {
  const auto r = decode_export_request("");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->span_count(), 0U);
}

// Tests that a request encoded by a real OTel encoder (protobufjs in @opentelemetry/otlp-transformer
// 0.52.1, the fuzz seed js_two_spans.bin, made from an object with flags 257, trace_state, an
// event and a kvlist attribute) decodes field by field; the last three are skipped.
TEST(OtlpTest, DecodesWhatTheJsEncoderWrote) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/fuzz/corpus/otlp_traces/js_two_spans.bin", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const auto r = decode_export_request(bytes.str());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->span_count(), 2U);
  EXPECT_EQ(r->resources[0].service_name(), "js-sdk");
  const ScopeSpans& scope = r->resources[0].scopes[0];
  EXPECT_EQ(scope.scope_name, "manual");
  EXPECT_EQ(scope.scope_version, "1.0.0");
  const Span& root = scope.spans[0];
  EXPECT_EQ(to_hex(root.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(root.span_id), "00f067aa0ba902b7");
  EXPECT_TRUE(root.is_root());
  EXPECT_EQ(root.name, "chat llama");
  EXPECT_EQ(root.kind, SpanKind::kServer);
  EXPECT_EQ(root.start_unix_ns, 1796140000000000000ULL);
  EXPECT_EQ(root.end_unix_ns, 1796140001500000000ULL);
  EXPECT_EQ(root.flags, 0U);  // 0.52.1's schema predates Span.flags (field 16): its encoder drops it
  EXPECT_EQ(root.status, (SpanStatus{StatusCode::kError, "boom"}));
  const std::vector<Attribute> want = {{"gen_ai.usage.input_tokens", std::int64_t{42}},
                                       {"gen_ai.latency.e2e", 1.5},
                                       {"stream", true},
                                       {"gen_ai.response.finish_reasons", StringList{"stop"}}};
  EXPECT_EQ(root.attributes, want);
  const Span& child = scope.spans[1];
  EXPECT_EQ(child.parent_span_id, root.span_id);
  EXPECT_EQ(child.name, "decode");
  EXPECT_EQ(child.kind, SpanKind::kInternal);
}

}  // namespace
}  // namespace inferscope::trace
