// Tests of SseRelay: bytes pass through unchanged whatever the read boundaries, the gateway's own
// usage chunk is dropped, content events, usage and finish reasons are read, bad streams flagged.
#include "gateway/sse_relay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>

// Counts the heap allocations of the whole gateway_unit_tests executable, for the allocation-free
// relay test below. Every scalar form is replaced, the nothrow ones too: a library that allocates
// with new(nothrow) (simdjson's parser does) must get memory that the replaced delete may free().
namespace {
std::atomic<std::size_t> g_allocations{0};
}  // namespace
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
// Out of line, so that g++ does not pair the inlined free() with operator new and warn.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace inferscope::gateway {
namespace {

using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// relay_in_pieces feeds `stream` in pieces of `piece` bytes and returns what would be forwarded.
std::string relay_in_pieces(SseRelay& relay, const std::string& stream, std::size_t piece) {
  std::string out;
  std::string scratch;
  for (std::size_t i = 0; i < stream.size(); i += piece) out.append(relay.feed(stream.substr(i, piece), Clock::now(), scratch));
  return out;
}

// Tests that a recorded llama.cpp stream passes byte for byte at every read size, with its
// content events, usage (64 tokens) and finish reason read on the way.
TEST(SseRelayTest, LlamaCppStreamPassesByteExact) {
  const std::string stream = read_file(INFERSCOPE_SOURCE_DIR "/tests/gateway/testdata/llamacpp-b4748-chat-stream.sse");
  ASSERT_FALSE(stream.empty());
  for (std::size_t piece : {1u, 7u, 100u, 4096u, 1u << 20}) {
    SseRelay relay(/*strip_usage=*/true);
    const std::string out = relay_in_pieces(relay, stream, piece);
    EXPECT_EQ(out, stream) << "piece " << piece;
    EXPECT_EQ(relay.content_events(), 5u);  // the capture keeps the first and last events of 64
    EXPECT_EQ(relay.completion_tokens().value_or(0), 64u);
    EXPECT_EQ(relay.prompt_tokens().value_or(0), 71u);
    EXPECT_EQ(relay.finish_reason(), "length");
    EXPECT_TRUE(relay.done_seen());
    EXPECT_FALSE(relay.malformed());
    EXPECT_FALSE(relay.stripped_usage());  // llama.cpp's usage rides on a choices chunk: kept
    ASSERT_TRUE(relay.engine_timings().has_value());  // its final event's timings
    EXPECT_DOUBLE_EQ(relay.engine_timings()->prompt_ms.value_or(0), 1.369);
    EXPECT_DOUBLE_EQ(relay.engine_timings()->predicted_ms.value_or(0), 13.27);
    EXPECT_EQ(relay.engine_timings()->prompt_n.value_or(0), 71u);
    EXPECT_EQ(relay.engine_timings()->predicted_n.value_or(0), 64u);
  }
}

// Tests that a usage-only chunk is dropped when the gateway asked for it, kept otherwise.
TEST(SseRelayTest, UsageOnlyChunkIsStrippedOnlyWhenAsked) {
  const std::string content = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n";
  const std::string finish = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
  const std::string usage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n";
  const std::string done = "data: [DONE]\n\n";
  const std::string stream = content + finish + usage + done;
  // Pieces of 5 bytes go through the held-back copy; the whole stream in one read is relayed in
  // place until the usage chunk, then copied.
  for (std::size_t piece : {std::size_t{5}, stream.size()}) {
    SseRelay relay(true);
    EXPECT_EQ(relay_in_pieces(relay, stream, piece), content + finish + done) << "piece " << piece;
    EXPECT_TRUE(relay.stripped_usage());
    EXPECT_EQ(relay.completion_tokens().value_or(0), 1u);
    EXPECT_EQ(relay.finish_reason(), "stop");
  }
  {
    SseRelay relay(false);
    EXPECT_EQ(relay_in_pieces(relay, stream, 5), stream);
  }
}

// Tests that role-only and empty chunks are not content, and that CRLF framing is understood.
TEST(SseRelayTest, RoleChunkIsNotContentAndCrlfWorks) {
  const std::string stream =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n"
      ": keep-alive\r\n\r\n"
      "data: {\"choices\":[{\"index\":0,\"text\":\"a\"}]}\r\n\r\n"
      "data: [DONE]\r\n\r\n";
  SseRelay relay(false);
  EXPECT_EQ(relay_in_pieces(relay, stream, 3), stream);
  EXPECT_EQ(relay.content_events(), 1u);
  EXPECT_TRUE(relay.done_seen());
}

// Tests that non-JSON data makes the stream malformed and is not forwarded, and that an
// unfinished event is held back (pending) rather than forwarded half.
TEST(SseRelayTest, MalformedAndPartialEvents) {
  SseRelay relay(false);
 std::string scratch;
  const std::string_view out =
      relay.feed("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"choices\":[{\"delta\":\n\n", Clock::now(), scratch);
  EXPECT_TRUE(relay.malformed());
  EXPECT_EQ(out, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n");
  SseRelay partial(false);
  partial.feed("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"cho", Clock::now(), scratch);
  EXPECT_EQ(partial.pending_bytes(), 11u);  // 'data: {"cho'
  EXPECT_FALSE(partial.done_seen());
}

// Tests that llama.cpp's `error:` field and an {"error":...} payload are seen as error events.
TEST(SseRelayTest, ErrorEventsAreSeen) {
  SseRelay a(false);
  std::string scratch;
  a.feed("error: {\"code\":500,\"message\":\"boom\"}\n\ndata: [DONE]\n\n", Clock::now(), scratch);
  EXPECT_TRUE(a.error_event_seen());
  SseRelay b(false);
  b.feed("data: {\"error\":{\"message\":\"boom\"}}\n\n", Clock::now(), scratch);
  EXPECT_TRUE(b.error_event_seen());
}

// Tests that a whole (non-streamed) completion body yields usage, content and finish reason.
TEST(SseRelayTest, WholeResponseUsage) {
  const WholeResponse r = read_whole_response(
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":7}})");
  EXPECT_TRUE(r.parsed);
  EXPECT_TRUE(r.has_content);
  EXPECT_EQ(r.completion_tokens.value_or(0), 7u);
  EXPECT_EQ(r.prompt_tokens.value_or(0), 5u);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_FALSE(read_whole_response("not json").parsed);
}

// Tests that events split anywhere across reads (inside a key, an escape, a CRLF, "[DONE]") are
// read once each, with the same fields as when they arrive whole.
TEST(SseRelayTest, EventsSplitAcrossReads) {
  const std::string stream =
      "data: {\"choices\":[{\"delta\":{\"content\":\"\\\"}]}\\n\\n\"}}]}\r\n\r\n"  // content: "}]}\n\n
      "data: {\"choices\":[{\"delta\":{\"content\":\"\\u00e9\"},\"finish_reason\":\"\\u006cength\"}]}\r\n\r\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}\r\n\r\n"
      "data: [DONE]\r\n\r\n";
  for (std::size_t piece = 1; piece <= stream.size(); ++piece) {
    SseRelay relay(true);
    const std::string out = relay_in_pieces(relay, stream, piece);
    EXPECT_EQ(relay.content_events(), 2u) << "piece " << piece;
    EXPECT_EQ(relay.finish_reason(), "length") << "piece " << piece;
    EXPECT_EQ(relay.completion_tokens().value_or(0), 2u) << "piece " << piece;
    EXPECT_TRUE(relay.stripped_usage()) << "piece " << piece;
    EXPECT_TRUE(relay.done_seen()) << "piece " << piece;
    EXPECT_FALSE(relay.malformed()) << "piece " << piece;
    EXPECT_EQ(relay.pending_bytes(), 0u) << "piece " << piece;
    EXPECT_EQ(out.find("usage"), std::string::npos) << "piece " << piece;
  }
}

// Tests that an event whose JSON is spread over several data lines is joined before it is read.
TEST(SseRelayTest, MultiLineDataIsJoined) {
  SseRelay relay(false);
  std::string scratch;
  const std::string event = "data: {\"choices\":\ndata: [{\"delta\":{\"content\":\"a\"},\ndata: \"finish_reason\":\"stop\"}]}\n\n";
  EXPECT_EQ(relay.feed(event, Clock::now(), scratch), event);
  EXPECT_EQ(relay.content_events(), 1u);
  EXPECT_EQ(relay.finish_reason(), "stop");
  EXPECT_FALSE(relay.malformed());
}

// Tests that relaying whole events allocates nothing once the output buffer has grown: the
// gateway's per-event cost has no heap allocation in it (a content, a finish, a usage chunk).
TEST(SseRelayTest, RelayingWholeEventsDoesNotAllocate) {
  const std::string events =
      "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
      "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" more\"},\"finish_reason\":\"length\"}]}\n\n"
      "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n";
  SseRelay relay(true);
  std::string scratch;
  scratch.reserve(4096);
  const auto now = Clock::now();
  relay.feed(events, now, scratch);  // the first time may size buffers
  const std::size_t before = g_allocations.load();
  for (int i = 0; i < 100; ++i) relay.feed(events, now, scratch);
  EXPECT_EQ(g_allocations.load() - before, 0u);
  EXPECT_EQ(relay.content_events(), 202u);
  EXPECT_EQ(relay.finish_reason(), "length");
  const std::string body =
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7}})";
  const std::size_t before_whole = g_allocations.load();
  const WholeResponse r = read_whole_response(body);
  EXPECT_EQ(g_allocations.load() - before_whole, 0u);
  EXPECT_EQ(r.completion_tokens.value_or(0), 7u);
}

}  // namespace
}  // namespace inferscope::gateway
