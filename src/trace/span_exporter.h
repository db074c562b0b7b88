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

// Batch sizes, by measurement (bench/serve/tracing_overhead.sh and tracing_threads.sh, serve at
// 100 % sampling; docs/tracing.md "The exporter's batches"): 512 spans a POST, OpenTelemetry's
// BatchSpanProcessor default. 2048-span batches halve the sending thread's own CPU per request
// (it pays ~100 us a batch, ~0.08 us a span), but the whole process came out ~3 % higher over
// ten alternated runs, which the per-thread figures do not place. The queue is 8192 spans, four
// times OpenTelemetry's 2048: a 2048-span queue filled while the sender waited for the
// endpoint's answer and dropped up to 6 % of the spans as queue_full; a larger queue costs
// nothing until it fills (a full one is ~2 MB of encoded spans). The 1 s batch delay is
// OpenTelemetry's default.
struct SpanExporterOptions {
  std::string endpoint = {};                       // full URL, e.g. http://127.0.0.1:4318/v1/traces
  std::vector<Attribute> resource_attributes = {};  // service.name at least
  std::string scope_name = "inferscope";
  std::string scope_version = {};
  std::size_t max_queue_spans = 8192;  // see "Batch sizes" above
  std::size_t max_batch_spans = 512;
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
