// File: span_exporter.cpp
// One sending thread per exporter; a request encodes its own spans and takes the queue mutex only
// to append the bytes to the open batch's buffer. Retry rules:
// opentelemetry-proto docs/specification.md "Failures" (OTLP/HTTP) — only 429/502/503/504 are
// retried, Retry-After honoured, otherwise exponential back-off with jitter.
#include "trace/span_exporter.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <new>
#include <random>
#include <thread>

#include "trace/otlp.h"

namespace inferscope::trace {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

enum class DropReason : std::size_t { kQueueFull, kRejected, kUnavailable, kShutdown };
constexpr std::array<std::string_view, 4> kDropReasons = {"queue_full", "rejected", "unavailable", "shutdown"};

// backoff is attempt 1 -> ~1 s, doubling, capped, times a jitter in [0.5, 1.5).
milliseconds backoff(int attempt, milliseconds cap) {
  thread_local std::mt19937 rng{std::random_device{}()};
  const double base = 1000.0 * static_cast<double>(1u << std::min(attempt - 1, 10));
  const double jittered = base * std::uniform_real_distribution<double>(0.5, 1.5)(rng);
  return std::min(cap, milliseconds(static_cast<std::int64_t>(jittered)));
}

}  // namespace

std::optional<milliseconds> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::uint64_t seconds = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec != std::errc() || end != value.data() + value.size() || seconds > 86400 * 365) return std::nullopt;
    return milliseconds(seconds * 1000);
  }
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  std::tm parts{};
  const std::string text(value);
  const char* rest = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  if (rest == nullptr || *rest != '\0') return std::nullopt;
  const std::time_t at = ::timegm(&parts);
  if (at == static_cast<std::time_t>(-1)) return std::nullopt;
  const auto delay = std::chrono::system_clock::from_time_t(at) - now;
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(delay));
}

bool is_retryable_status(int status) noexcept { return status == 429 || status == 502 || status == 503 || status == 504; }

// Batch is whole requests' encoded spans (encode_spans_field outputs) appended end to end: what
// one POST carries. Its buffer comes from the exporter's spare buffers with a batch's capacity,
// so a request appends without allocating.
struct Batch {
  std::string fields;
  std::size_t spans = 0;
};

// batch_ring_size is how many batches a full queue can hold. A batch is closed when the next
// request does not fit (or it alone is larger than a batch), so any two neighbouring queued
// batches hold more than max_batch spans together; a queue of at most max_queue spans therefore
// holds at most 2 * ceil(max_queue / max_batch) + 1 batches.
std::size_t batch_ring_size(std::size_t max_queue, std::size_t max_batch) {
  return 2 * ((max_queue + max_batch - 1) / max_batch) + 2;
}

// A batch buffer is reserved for this many bytes per span (serve's spans take ~210, the
// gateway's a little more); a larger batch grows it once and keeps the capacity.
constexpr std::size_t kReservedBytesPerSpan = 256;

struct SpanExporter::Impl {
  SpanExporterOptions options;
  net::BlockingClient client;
  std::vector<metrics::Counter> dropped;  // by DropReason; empty without a registry
  std::optional<metrics::Counter> exported;

  mutable std::mutex mu;
  std::condition_variable cv;
  // The queue: `batches` batches from ring[head] on (wrapping), all but the last closed; the last
  // is closed once it holds max_batch spans. Sized at start, never resized.
  std::vector<Batch> ring;      // guarded by mu
  std::size_t head = 0;         // guarded by mu
  std::size_t batches = 0;      // guarded by mu
  std::size_t queued_spans = 0; // guarded by mu: the spans in all queued batches
  // Buffers of sent batches, the last sent on top: a new batch takes the top one. Handed out
  // last-in first-out, an exporter that keeps up uses two or three buffers (the one filling, the
  // one sending); taken in ring order, every ring slot's buffer grew to a batch (18 x ~0.5 MB for
  // the defaults: serve's RSS after 20,000 traced requests was 29.8 MB, now 22.6 MB).
  std::vector<std::string> spare;  // guarded by mu
  bool stopping = false;       // guarded by mu
  bool joined = false;         // guarded by mu
  SteadyClock::time_point drain_deadline;  // guarded by mu, set with stopping
  ExporterStats stats;         // guarded by mu
  bool failing = false;        // sending thread only: the last batch failed (log transitions only)
  std::string body;            // sending thread only: every batch's request body, its capacity kept
  std::thread worker;

  Impl(SpanExporterOptions o, net::BlockingClient c)
      : options(std::move(o)),
        client(std::move(c)),
        ring(batch_ring_size(options.max_queue_spans, options.max_batch_spans)) {
    spare.reserve(ring.size());  // give_back never allocates
  }

  // count_dropped records `n` spans lost for `reason` (mu held).
  void count_dropped(DropReason reason, std::size_t n) {
    if (n == 0) return;
    switch (reason) {
      case DropReason::kQueueFull: stats.dropped_queue_full += n; break;
      case DropReason::kRejected: stats.dropped_rejected += n; break;
      case DropReason::kUnavailable: stats.dropped_unavailable += n; break;
      case DropReason::kShutdown: stats.dropped_shutdown += n; break;
    }
    if (!dropped.empty()) dropped[static_cast<std::size_t>(reason)].add(static_cast<double>(n));
  }

  // The queue's bookkeeping, all with mu held.
  Batch& last() { return ring[(head + batches - 1) % ring.size()]; }
  bool full_batch_queued() const {
    return batches > 1 || (batches == 1 && ring[head].spans >= options.max_batch_spans);
  }
  void clear_queue() {
    for (Batch& b : ring) {
      give_back(std::move(b.fields));
      b.fields = std::string();
      b.spans = 0;
    }
    head = 0;
    batches = 0;
    queued_spans = 0;
  }

  // enqueue appends one request's fields to the last batch, or to a new one when they do not fit
  // beside it (a request larger than a batch goes alone); false when there is no room (mu held).
  bool enqueue(std::string_view fields, std::size_t count) {
    if (queued_spans + count > options.max_queue_spans) return false;
    const bool opens = batches == 0 || last().spans + count > options.max_batch_spans;
    if (opens && batches == ring.size()) return false;  // cannot happen with the ring's size; never overrun it
    Batch& batch = opens ? ring[(head + batches) % ring.size()] : last();
    try {
      if (opens) {
        if (!spare.empty()) {
          batch.fields = std::move(spare.back());
          spare.pop_back();
        }
        batch.fields.clear();
        batch.fields.reserve(options.max_batch_spans * kReservedBytesPerSpan);
      }
      batch.fields.append(fields);  // strong guarantee: unchanged when it throws
    } catch (const std::bad_alloc&) {
      return false;
    }
    if (opens) ++batches;
    batch.spans += count;
    queued_spans += count;
    return true;
  }

  // give_back keeps a sent batch's buffer for a later batch (mu held).
  void give_back(std::string&& buffer) {
    if (spare.size() < ring.size()) spare.push_back(std::move(buffer));
  }

  // take_batch moves the first queued batch's bytes into `out`, whose old buffer (the batch sent
  // before) becomes the top spare, and returns its span count (mu held, batches > 0).
  std::size_t take_batch(std::string& out) {
    Batch& batch = ring[head];
    give_back(std::move(out));
    out = std::move(batch.fields);
    batch.fields = std::string();
    const std::size_t spans = batch.spans;
    batch.spans = 0;
    head = (head + 1) % ring.size();
    --batches;
    queued_spans -= spans;
    return spans;
  }

  bool past_drain() const { return stopping && SteadyClock::now() >= drain_deadline; }

  void run() {
    std::string batch;
    for (;;) {
      std::size_t spans = 0;
      {
        std::unique_lock lock(mu);
        cv.wait_for(lock, options.batch_delay, [this] { return stopping || full_batch_queued(); });
        if (past_drain()) {
          count_dropped(DropReason::kShutdown, queued_spans);
          clear_queue();
          return;
        }
        if (batches == 0) {
          if (stopping) return;
          continue;
        }
        spans = take_batch(batch);  // a full one, or after batch_delay what there is
      }
      send(batch, spans);
    }
  }

  // wait_retry sleeps `delay` unless stop()'s drain deadline comes first (false then).
  bool wait_retry(milliseconds delay) {
    const auto until = SteadyClock::now() + delay;
    std::unique_lock lock(mu);
    for (;;) {
      if (past_drain()) return false;
      const auto limit = stopping ? std::min(until, drain_deadline) : until;
      if (SteadyClock::now() >= limit) return !past_drain();
      cv.wait_until(lock, limit);
    }
  }

  void log_failure(const std::string& what) {
    if (!failing) spdlog::warn("trace export to {} failing: {} (spans are dropped and counted)", client.url_text(), what);
    failing = true;
  }

  // send POSTs `fields` (n spans) in one ExportTraceServiceRequest. Each attempt builds the body
  // (the envelope and one copy of the batch) in the one reused body buffer and lends it to the
  // client, which sends it without copying it and gives it back: a fresh ~100 KB buffer per batch
  // cost more than the copy (its pages trimmed back to the system when freed, faulted in again
  // for the next batch).
  void send(const std::string& fields, std::size_t n) {
    for (int attempt = 1;; ++attempt) {
      encode_export_request(body, options.resource_attributes, options.scope_name, options.scope_version, fields);
      auto reply = client.request_lending_body("POST", "", body, "application/x-protobuf");
      std::unique_lock lock(mu);
      if (reply && reply->status >= 200 && reply->status < 300) {
        stats.exported += n;
        if (exported) exported->add(static_cast<double>(n));
        if (failing) spdlog::info("trace export to {} works again", client.url_text());
        failing = false;
        return;
      }
      if (!reply) {
        log_failure(reply.error().message);
        count_dropped(DropReason::kUnavailable, n);
        return;
      }
      if (!is_retryable_status(reply->status)) {
        log_failure("HTTP " + std::to_string(reply->status));
        count_dropped(DropReason::kRejected, n);
        return;
      }
      if (attempt >= options.max_attempts) {
        log_failure("HTTP " + std::to_string(reply->status) + " after " + std::to_string(attempt) + " attempts");
        count_dropped(DropReason::kUnavailable, n);
        return;
      }
      ++stats.retries;
      const milliseconds delay = std::min(
          options.max_retry_wait,
          parse_retry_after(reply->retry_after, std::chrono::system_clock::now()).value_or(backoff(attempt, options.max_retry_wait)));
      lock.unlock();
      const bool go_on = wait_retry(delay);
      lock.lock();
      if (!go_on) {
        count_dropped(DropReason::kShutdown, n);
        return;
      }
    }
  }
};

Result<std::unique_ptr<SpanExporter>> SpanExporter::start(SpanExporterOptions options, metrics::Registry* registry) {
  if (options.max_queue_spans == 0 || options.max_batch_spans == 0 || options.max_attempts < 1) {
    return make_error("cannot start the trace exporter: queue, batch and attempts must be positive");
  }
  auto client = net::BlockingClient::create(
      options.endpoint, {.timeout = options.request_timeout, .max_body_bytes = 1u << 20, .tls = options.tls},
      "--otlp-endpoint");
  if (!client) return client.error();
  auto impl = std::make_unique<Impl>(std::move(options), std::move(*client));
  if (registry != nullptr) {
    try {
      auto& dropped = registry->counter({.name = "inferscope_traces_dropped_total",
                                         .help = "Spans not exported, by reason: queue_full, rejected, unavailable, "
                                                 "shutdown.",
                                         .label_names = {"reason"}});
      for (std::string_view reason : kDropReasons) impl->dropped.push_back(dropped.with({reason}));
      impl->exported = registry->counter({.name = "inferscope_trace_spans_exported_total",
                                          .help = "Spans the OTLP endpoint accepted."})
                           .with({});
    } catch (const std::invalid_argument& e) {
      return make_error(std::string("cannot register trace exporter metrics: ") + e.what());
    }
  }
  Impl* raw = impl.get();
  impl->worker = std::thread([raw] { raw->run(); });
  // Named so that per-thread CPU (bench/serve/tracing_threads.sh, top -H) tells it apart.
  ::pthread_setname_np(impl->worker.native_handle(), "otlp-exporter");
  return std::unique_ptr<SpanExporter>(new SpanExporter(std::move(impl)));
}

SpanExporter::SpanExporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SpanExporter::~SpanExporter() { stop(milliseconds(0)); }

bool SpanExporter::submit(std::vector<Span> spans) noexcept {
  try {
    return submit_encoded(encode_spans_field(spans), spans.size());  // encoded on the caller's thread
  } catch (const std::bad_alloc&) {
    std::lock_guard lock(impl_->mu);
    impl_->count_dropped(DropReason::kQueueFull, spans.size());
    return false;
  }
}

bool SpanExporter::submit_encoded(std::string_view span_fields, std::size_t span_count) noexcept {
  Impl& s = *impl_;
  if (span_count == 0) return true;
  bool wake = false;
  {
    std::lock_guard lock(s.mu);
    if (s.stopping) {
      s.count_dropped(DropReason::kShutdown, span_count);
      return false;
    }
    // Wake the sender once, when a full batch is first queued: it checks that under the mutex
    // before it sleeps, so later submits need no notify (each one while it sleeps is a futex
    // syscall).
    const bool had_full_batch = s.full_batch_queued();
    if (!s.enqueue(span_fields, span_count)) {
      s.count_dropped(DropReason::kQueueFull, span_count);
      return false;
    }
    wake = !had_full_batch && s.full_batch_queued();
  }
  if (wake) s.cv.notify_one();
  return true;
}

void SpanExporter::stop(milliseconds drain) {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mu);
    if (s.joined) return;
    s.joined = true;
    s.stopping = true;
    s.drain_deadline = SteadyClock::now() + drain;
  }
  s.cv.notify_all();
  if (s.worker.joinable()) s.worker.join();
  std::lock_guard lock(s.mu);
  s.count_dropped(DropReason::kShutdown, s.queued_spans);
  s.clear_queue();
}

ExporterStats SpanExporter::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

}  // namespace inferscope::trace
