// File: span_exporter.h
// SpanExporter sends finished spans to an OTLP/HTTP endpoint (`--otlp-endpoint`, protobuf, POST)
// from one background thread: a bounded queue, batches of up to max_batch_spans sent when full or
// every batch_delay, retries only on 429/502/503/504 honouring Retry-After (else exponential
// back-off), and spans that cannot go counted in inferscope_traces_dropped_total{reason}:
//   queue_full   the queue had no room when a request ended (the request never waits)
//   rejected     the endpoint answered a status that must not be retried (400, 404, 413, ...)
//   unavailable  connection failures, and retryable answers after the last attempt
//   shutdown     still queued or being retried when stop() gave up
// Example: auto e = SpanExporter::start({.endpoint = "http://127.0.0.1:4318/v1/traces",
//                                        .resource_attributes = {{"service.name", std::string("serve")}}}, &registry);
//          (*e)->submit(std::move(spans));
// Thread-safe: submit() and submit_encoded() from any thread, never block on the network (one
// short mutex).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "net/blocking_client.h"
#include "trace/span.h"

namespace inferscope::trace {

// Batch sizes, by measurement (docs/tracing.md "Overhead"): 2048 spans a POST, four times
// OpenTelemetry's BatchSpanProcessor default. The sending thread pays ~100 us a POST (its wakeup,
// the HTTP exchange, the loopback send) and ~0.08 us a span, so at 512 spans it cost serve
// 2.5 us per request at 100 % sampling and at 2048 spans 1.05 us; two tracing servers driven at
// once, one sending 512-span and the other 2048-span batches, put the second 2 % lower in CPU per
// request (bench/serve/tracing_overhead.sh's paired runs; earlier runs one after the other could
// not resolve it). A 2048-span body is ~430 KB, well under what OTLP receivers take (up's: 8 MiB).
// The queue holds eight batches (16384 spans, ~3.5 MB encoded at most): it must absorb what
// requests end while one batch waits for the endpoint's answer, and costs nothing until it fills.
// The 1 s batch delay is OpenTelemetry's default.
struct SpanExporterOptions {
  std::string endpoint = {};                       // full URL, e.g. http://127.0.0.1:4318/v1/traces
  std::vector<Attribute> resource_attributes = {};  // service.name at least
  std::string scope_name = "inferscope";
  std::string scope_version = {};
  std::size_t max_queue_spans = 16384;  // see "Batch sizes" above
  std::size_t max_batch_spans = 2048;
  std::chrono::milliseconds batch_delay{1000};
  std::chrono::milliseconds request_timeout{10000};
  int max_attempts = 5;                               // per batch, the first try included
  std::chrono::milliseconds max_retry_wait{30000};   // a longer Retry-After is cut to this
  net::TlsOptions tls = {};
};

// ExporterStats counts spans (not batches) since start.
struct ExporterStats {
  std::uint64_t exported = 0;
  std::uint64_t dropped_queue_full = 0;
  std::uint64_t dropped_rejected = 0;
  std::uint64_t dropped_unavailable = 0;
  std::uint64_t dropped_shutdown = 0;
  std::uint64_t retries = 0;  // batches sent again after a retryable answer
};

// parse_retry_after reads a Retry-After value: delay-seconds or an IMF-fixdate (RFC 9110),
// relative to `now`; nullopt when absent or unreadable (the caller backs off instead).
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);

// is_retryable_status: the OTLP/HTTP retryable codes (429, 502, 503, 504).
bool is_retryable_status(int status) noexcept;

class SpanExporter {
 public:
  // start checks the endpoint URL (errors name --otlp-endpoint), registers
  // inferscope_traces_dropped_total{reason} and inferscope_trace_spans_exported_total in
  // `registry` when given (it must outlive the exporter), and starts the sending thread.
  static Result<std::unique_ptr<SpanExporter>> start(SpanExporterOptions options, metrics::Registry* registry);
  ~SpanExporter();  // stop(0)
  SpanExporter(const SpanExporter&) = delete;
  SpanExporter& operator=(const SpanExporter&) = delete;

  // submit queues one request's spans, all or none: false when they do not fit (counted as
  // queue_full) or after stop() (counted as shutdown). It encodes them (encode_spans_field) on the
  // caller's thread, then queues them as submit_encoded does.
  bool submit(std::vector<Span> spans) noexcept;

  // submit_encoded queues one request's `span_count` spans already written as ScopeSpans.spans
  // fields (span_writer.h's bytes, or otlp.h encode_spans_field's), all or none, counted as
  // submit() counts; it copies the bytes (the caller may reuse its buffer) into the open batch's
  // buffer, which allocates nothing once the buffers have grown to a batch.
  bool submit_encoded(std::string_view span_fields, std::size_t span_count) noexcept;

  // stop sends what is queued for at most `drain`, then ends the thread; spans left are counted
  // as shutdown. Idempotent.
  void stop(std::chrono::milliseconds drain = std::chrono::seconds(5));

  ExporterStats stats() const;

 private:
  struct Impl;
  explicit SpanExporter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::trace
