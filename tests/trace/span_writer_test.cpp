// Tests of SpanWriter (span_writer.h): spans of every size class (the reserved two-byte length
// prefix shrunk to one byte, kept, widened to three) read back intact by the decoder, several
// spans appended in order, and the buffer reused across requests.
#include "trace/span_writer.h"

#include <gtest/gtest.h>

#include "trace/otlp.h"

namespace inferscope::trace {
namespace {

Span span_with_value_of(std::size_t value_bytes) {
  Span s;
  s.trace_id[0] = 0x4b;
  s.span_id[7] = 0x01;
  s.name = "x";
  s.kind = SpanKind::kServer;
  s.start_unix_ns = 1;
  s.end_unix_ns = 2;
  if (value_bytes > 0) s.attributes.push_back({"v", std::string(value_bytes, 'a')});
  s.flags = kSampledFlag;
  return s;
}

std::vector<Span> read_back(const SpanBytes& bytes) {
  auto spans = decode_spans_field(bytes.view());
  EXPECT_TRUE(spans) << spans.error().message;
  return spans ? std::move(*spans) : std::vector<Span>{};
}

// Tests spans whose length takes 1, 2 and 3 varint bytes, alone and one after another.
TEST(SpanWriterTest, LengthPrefixFitsEverySpanSize) {
  const std::vector<Span> spans = {span_with_value_of(0), span_with_value_of(300), span_with_value_of(20000),
                                   span_with_value_of(5)};
  SpanBytes bytes;
  SpanWriter writer(bytes);
  for (const Span& s : spans) write_span(writer, s);
  EXPECT_EQ(writer.spans(), spans.size());
  EXPECT_EQ(read_back(bytes), spans);
  // The first span is under 128 bytes: its length is one byte right after the field tag.
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes.view()[0]), 0x12);  // ScopeSpans.spans, length-delimited
  EXPECT_LT(static_cast<unsigned char>(bytes.view()[1]), 0x80);
  EXPECT_EQ(std::string(bytes.view()), encode_spans_field(spans));
}

// Tests every attribute kind and a status with a message, through the typed calls.
TEST(SpanWriterTest, TypedAttributesReadBackAsTheModel) {
  SpanBytes bytes;
  SpanWriter writer(bytes);
  const TraceId trace_id = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const SpanId span_id = {1, 1, 1, 1, 1, 1, 1, 1};
  const SpanId parent = {2, 2, 2, 2, 2, 2, 2, 2};
  writer.open(trace_id, span_id, parent, "chat m", SpanKind::kInternal, 10, 20);
  writer.string_attribute("s", "");
  writer.int_attribute("i", -3);
  writer.double_attribute("d", 0.25);
  writer.bool_attribute("b", false);
  const std::string_view reasons[] = {"stop", "length"};
  writer.string_array_attribute("a", reasons);
  writer.close(StatusCode::kError, "502", kSampledFlag | 0x100);
  const auto spans = read_back(bytes);
  ASSERT_EQ(spans.size(), 1u);
  const Span& s = spans[0];
  EXPECT_EQ(s.trace_id, trace_id);
  EXPECT_EQ(s.parent_span_id, parent);
  EXPECT_EQ(s.name, "chat m");
  EXPECT_EQ(s.start_unix_ns, 10u);
  EXPECT_EQ(s.end_unix_ns, 20u);
  EXPECT_EQ(*s.attribute("s"), AttributeValue(std::string()));
  EXPECT_EQ(*s.attribute("i"), AttributeValue(std::int64_t{-3}));
  EXPECT_EQ(*s.attribute("d"), AttributeValue(0.25));
  EXPECT_EQ(*s.attribute("b"), AttributeValue(false));
  EXPECT_EQ(*s.attribute("a"), AttributeValue(StringList{"stop", "length"}));
  EXPECT_EQ(s.status, (SpanStatus{StatusCode::kError, "502"}));
  EXPECT_EQ(s.flags, kSampledFlag | 0x100);
}

// Tests the thread's buffer: emptied on each call, its bytes kept until the next.
TEST(SpanWriterTest, ThreadBufferStartsEmptyEachTime) {
  {
    SpanWriter writer(thread_span_buffer());
    write_span(writer, span_with_value_of(3000));
  }
  SpanWriter writer(thread_span_buffer());
  EXPECT_TRUE(writer.bytes().empty());
  write_span(writer, span_with_value_of(1));
  auto spans = decode_spans_field(writer.bytes());
  ASSERT_TRUE(spans);
  EXPECT_EQ(*spans, std::vector<Span>{span_with_value_of(1)});
}

}  // namespace
}  // namespace inferscope::trace
