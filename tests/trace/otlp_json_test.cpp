// Tests of the OTLP JSON decoder (otlp_json.h): the spec's shape decodes to exactly what the
// protobuf decoder yields for the same request; null, absent and unknown keys; the values span.h
// has no room for skipped; wrong shapes refused with one line naming the field.
#include "trace/otlp_json.h"

#include <gtest/gtest.h>

#include <cmath>

#include "trace/otlp_sample_span.h"

namespace inferscope::trace {
namespace {

// The request of otlp_test.cpp's sample, written as the OTLP JSON encoding gives it: ids hex (the
// trace id in upper case, which the spec allows), 64-bit values as a string and as a number, enums
// as integers, attributes as {key, value: {<kind>Value}}.
constexpr std::string_view kSampleJson = R"({
  "resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "inferscope-serve"}}],
                 "droppedAttributesCount": 0},
    "scopeSpans": [{
      "scope": {"name": "inferscope", "version": "0.1.0"},
      "spans": [{
        "traceId": "0102030405060708090A0B0C0D0E0F10",
        "spanId": "a0a1a2a3a4a5a6a7",
        "parentSpanId": "0102030405060708",
        "name": "decode",
        "kind": 1,
        "startTimeUnixNano": "1796140000123456789",
        "endTimeUnixNano": 1796140000987654321,
        "attributes": [
          {"key": "gen_ai.request.model", "value": {"stringValue": "llama"}},
          {"key": "stream", "value": {"boolValue": true}},
          {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "-7"}},
          {"key": "gen_ai.latency.e2e", "value": {"doubleValue": 0.125}},
          {"key": "gen_ai.response.finish_reasons",
           "value": {"arrayValue": {"values": [{"stringValue": "stop"}, {"stringValue": "length"}]}}},
          {"key": "empty", "value": {"stringValue": ""}}
        ],
        "events": [], "links": [], "droppedAttributesCount": 0,
        "status": {"code": 2, "message": "500"},
        "flags": 769
      }, {
        "traceId": "0102030405060708090a0b0c0d0e0f10",
        "spanId": "0909090909090909",
        "parentSpanId": "",
        "kind": 2
      }]
    }]
  }]
})";

// Tests that the JSON form and the protobuf form of one request decode to equal models.
TEST(OtlpJsonTest, DecodesToWhatTheProtobufDecoderYields) {
  const auto from_json = decode_export_request_json(kSampleJson);
  ASSERT_TRUE(from_json) << from_json.error().message;
  const auto from_protobuf = decode_export_request(encode_export_request(otlp_sample_request()));
  ASSERT_TRUE(from_protobuf) << from_protobuf.error().message;
  EXPECT_EQ(*from_json, *from_protobuf);
  EXPECT_EQ(from_json->span_count(), 2u);
  EXPECT_EQ(from_json->resources[0].service_name(), "inferscope-serve");
}

// Tests proto3 JSON defaults: null is the field's default, absent fields are zero (kind
// unspecified, not the model's internal), unknown keys are ignored, and an empty body object is
// an empty request.
TEST(OtlpJsonTest, NullAbsentAndUnknownKeysAreDefaults) {
  const auto empty = decode_export_request_json("{}");
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_EQ(empty->span_count(), 0u);
  const auto r = decode_export_request_json(R"({"resourceSpans":[{"resource":null,"schemaUrl":"x","scopeSpans":[
      {"scope":null,"spans":[{"traceId":"00000000000000000000000000000001","spanId":"0000000000000002",
       "parentSpanId":null,"name":null,"status":null,"attributes":null,"futureField":{"a":[1,2]}}]}]}],
      "anotherFutureField":true})");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->span_count(), 1u);
  const Span& s = r->resources[0].scopes[0].spans[0];
  EXPECT_EQ(s.kind, SpanKind::kUnspecified);
  EXPECT_TRUE(s.is_root());
  EXPECT_EQ(s.name, "");
  EXPECT_EQ(s.start_unix_ns, 0u);
  EXPECT_EQ(s.status.code, StatusCode::kUnset);
  EXPECT_TRUE(s.attributes.empty());
}

// Tests that values span.h has no room for are skipped as the protobuf decoder skips them, and
// that doubleValue takes proto3's string forms.
TEST(OtlpJsonTest, SkipsUnkeptValueKindsAndReadsDoubleStrings) {
  const auto r = decode_export_request_json(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{
      "traceId":"00000000000000000000000000000001","spanId":"0000000000000002","attributes":[
        {"key":"map","value":{"kvlistValue":{"values":[{"key":"a","value":{"intValue":1}}]}}},
        {"key":"raw","value":{"bytesValue":"AAE="}},
        {"key":"ints","value":{"arrayValue":{"values":[{"intValue":"1"},{"stringValue":"x"}]}}},
        {"key":"none","value":{}},
        {"key":"novalue"},
        {"key":"nan","value":{"doubleValue":"NaN"}},
        {"key":"inf","value":{"doubleValue":"-Infinity"}},
        {"key":"text","value":{"doubleValue":"0.5"}},
        {"key":"big","value":{"intValue":9223372036854775807}}]}]}]}]})");
  ASSERT_TRUE(r) << r.error().message;
  const Span& s = r->resources[0].scopes[0].spans[0];
  ASSERT_EQ(s.attributes.size(), 4u);
  EXPECT_TRUE(std::isnan(std::get<double>(*s.attribute("nan"))));
  EXPECT_EQ(std::get<double>(*s.attribute("inf")), -INFINITY);
  EXPECT_EQ(std::get<double>(*s.attribute("text")), 0.5);
  EXPECT_EQ(std::get<std::int64_t>(*s.attribute("big")), INT64_MAX);
}

// Tests the refusals: each is one line starting with the decoder's prefix and naming the field.
TEST(OtlpJsonTest, RefusesWrongShapesNamingTheField) {
  const std::string span_head = R"({"resourceSpans":[{"scopeSpans":[{"spans":[{)";
  const std::string ids = R"("traceId":"00000000000000000000000000000001","spanId":"0000000000000002")";
  const std::string span_tail = "}]}]}]}";
  const auto check = [](const std::string& body, std::string_view want) {
    const auto r = decode_export_request_json(body);
    ASSERT_FALSE(r) << body;
    const std::string& message = r.error().message;
    EXPECT_EQ(message.rfind("cannot decode OTLP JSON traces: ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(want), std::string::npos) << "got: " << message << "\nwant: " << want;
  };
  check("{\"resourceSpans\":[", "not valid JSON at byte");
  check("\xff", "not valid JSON");
  check("[]", "not a JSON object");
  check(R"({"resourceSpans":{}})", "resourceSpans is not an array");
  check(R"({"resourceSpans":[1]})", "resourceSpans holds a number");
  check(R"({"resourceSpans":[{"resource":[]}]})", "resource is not an object");
  check(span_head + R"("traceId":"AAECAwQFBgcICQoLDA0ODw==","spanId":"0000000000000002")" + span_tail,
        "traceId has 24 characters, expected 32");
  check(span_head + R"("traceId":"zz000000000000000000000000000001","spanId":"0000000000000002")" + span_tail,
        "traceId is not hex");
  check(span_head + R"("traceId":"00000000000000000000000000000001")" + span_tail, "a span has no spanId");
  check(span_head + R"("spanId":"0000000000000002")" + span_tail, "a span has no traceId");
  check(span_head + ids + R"(,"parentSpanId":"01")" + span_tail, "parentSpanId has 2 characters");
  check(span_head + ids + R"(,"kind":"SPAN_KIND_SERVER")" + span_tail, "kind is given by name");
  check(span_head + ids + R"(,"kind":6)" + span_tail, "kind 6 is out of range");
  check(span_head + ids + R"(,"kind":1.5)" + span_tail, "kind 1.5 is out of range");
  check(span_head + ids + R"(,"startTimeUnixNano":"-1")" + span_tail, "startTimeUnixNano is not a whole number");
  check(span_head + ids + R"(,"endTimeUnixNano":1.5)" + span_tail, "endTimeUnixNano is not a whole number");
  check(span_head + ids + R"(,"endTimeUnixNano":"18446744073709551616")" + span_tail, "endTimeUnixNano");
  check(span_head + ids + R"(,"flags":4294967296)" + span_tail, "flags is not a whole number");
  check(span_head + ids + R"(,"name":7)" + span_tail, "name is not a string");
  check(span_head + ids + R"(,"status":{"code":"STATUS_CODE_ERROR"})" + span_tail, "code is given by name");
  check(span_head + ids + R"(,"attributes":[{"key":"a","value":{"stringValue":5}}])" + span_tail,
        "stringValue is not a string");
  check(span_head + ids + R"(,"attributes":[{"key":"a","value":{"boolValue":"true"}}])" + span_tail,
        "boolValue is not true or false");
  check(span_head + ids + R"(,"attributes":[{"key":"a","value":{"intValue":"9223372036854775808"}}])" + span_tail,
        "intValue is not a whole number");
  check(span_head + ids + R"(,"attributes":[{"key":"a","value":{"doubleValue":"fast"}}])" + span_tail,
        "doubleValue is not a number");
  check(span_head + ids + R"(,"attributes":[{"key":1,"value":{"stringValue":"x"}}])" + span_tail,
        "key is not a string");
  check(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"00000000000000000000000000000001","spanId":"0000000000000002","startTimeUnixNano":1e999}]}]}]})",
        "out of range");
}

}  // namespace
}  // namespace inferscope::trace
