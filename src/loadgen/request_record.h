// File: request_record.h
// RequestRecord is everything measured about one request, kept for the whole (bounded) run so
// every statistic is computed exactly afterwards. Times are nanoseconds on the run's steady clock
// (0 = the run's start); kNoTime marks a moment that never happened.
// Example: if (r.ok()) ttft = r.first_content_ns - r.started_ns;
// Plain value type; thread-compatible. Never holds prompt or output text.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace inferscope::loadgen {

inline constexpr std::int64_t kNoTime = -1;

// ErrorKind classifies a failed request; names are stable (JSON, CSV, metrics labels).
enum class ErrorKind : std::uint8_t {
  kNone,
  kRefused,          // TCP connection refused
  kConnect,          // DNS, other connect or TLS handshake failure
  kTimeout,          // the per-request deadline passed
  kReset,            // connection reset, or closed before a response started
  kHttpStatus,       // a non-2xx status
  kMalformedStream,  // unparsable HTTP, SSE event or JSON body
  kTruncatedStream,  // the body ended before [DONE] / a finish_reason
  kStreamError,      // the server reported an error inside a 200 response: a JSON "error" member
                     // (vLLM's data: {"error": ...}) or llama.cpp's non-standard "error:" SSE line
  kCancelled,        // the run was interrupted (Ctrl-C) while the request was in flight
  kEmptyResponse,    // the response ended cleanly ([DONE] / a full body) with neither output nor a
                     // finish_reason: nothing was generated and nothing says why
};
inline constexpr int kErrorKindCount = 11;

// to_string returns the stable snake_case name ("none", "refused", "http_status", ...).
std::string_view to_string(ErrorKind kind);

// TokenSource says where a token count (output_tokens, input_tokens) came from.
enum class TokenSource : std::uint8_t {
  kNone,       // no output
  kUsage,      // the server's usage.completion_tokens
  kCounted,    // counted content-bearing stream events (one token each)
  kEstimated,  // the client's estimate: output content bytes / 4, or the workload's input estimate
};
std::string_view to_string(TokenSource source);

// RequestRecord is one request's measurements. Durations of connection setup are kNoTime when a
// kept-alive connection was reused.
struct RequestRecord {
  std::uint64_t index = 0;       // order of dispatch
  std::uint16_t class_id = 0;    // workload class (mix)
  bool warmup = false;           // excluded from statistics
  bool streaming = false;
  std::int64_t intended_ns = kNoTime;    // when the schedule wanted it sent
  std::int64_t dispatched_ns = kNoTime;  // when the dispatcher got to it (lag = this - intended)
  std::int64_t started_ns = kNoTime;     // when it got a concurrency slot and began (service t0)
  std::int64_t dns_ns = kNoTime, connect_ns = kNoTime, tls_ns = kNoTime;  // durations
  std::int64_t sent_ns = kNoTime;          // request fully written
  std::int64_t headers_ns = kNoTime;       // response status line and headers read
  std::int64_t first_event_ns = kNoTime;   // first SSE event with a non-empty choices array
  std::int64_t first_content_ns = kNoTime; // first event carrying output (TTFT anchor)
  std::int64_t last_token_ns = kNoTime;    // last event carrying output (E2E anchor)
  std::int64_t end_ns = kNoTime;           // response complete or failed
  std::uint32_t input_tokens = 0;          // server usage.prompt_tokens, else the client estimate
  TokenSource input_token_source = TokenSource::kNone;  // kUsage or kEstimated (the workload's estimate)
  std::uint32_t output_tokens = 0;
  std::uint32_t events = 0;                // SSE events (incl. [DONE])
  std::uint32_t token_events = 0;          // events carrying output
  std::vector<std::uint32_t> token_event_us;  // output events, microseconds after started_ns
  std::uint16_t http_status = 0;
  ErrorKind error = ErrorKind::kNone;
  TokenSource token_source = TokenSource::kNone;
  bool reused_connection = false;

  bool ok() const { return error == ErrorKind::kNone && end_ns != kNoTime; }
  // e2e_anchor_ns is the last output event, or the end for responses without output events.
  std::int64_t e2e_anchor_ns() const { return last_token_ns != kNoTime ? last_token_ns : end_ns; }
  // ttft_anchor_ns is the first output event, or the end for non-streamed responses.
  std::int64_t ttft_anchor_ns() const { return first_content_ns != kNoTime ? first_content_ns : end_ns; }
};

}  // namespace inferscope::loadgen
