// File: trace_receiver.h
// TraceReceiver: up's OTLP/HTTP trace receiver and query routes over a TraceStore.
//   POST /v1/traces           OTLP protobuf or JSON (gzip accepted) → 200 ExportTraceServiceResponse;
//                             400/413/415 with a google.rpc.Status body, in the request's encoding
//   GET  /api/traces          ?job=&model=&min_duration=&since=&limit= → {"traces":[...]} slowest first
//   GET  /api/traces/{id}     → {"trace_id", "spans":[...]}; 404 unknown, 400 not 32 lowercase hex
// A request is decoded on the receive lane and handed to one writer thread through a bounded queue
// (counted in spans); when the queue is full its spans are dropped and counted, never waited for.
// The writer also prunes the store every prune_interval. With forward_url (`up --otlp-forward`) each
// accepted body (inflated) is also queued, bounded by bytes, for one forwarding thread that POSTs
// it unchanged, with its Content-Type, to a real backend (Jaeger, Tempo, a Collector); a full queue or a failed POST drops
// and counts it, the receiver never waits. Example:
//   TraceReceiver receiver(*store, registry);  add_trace_routes(router, receiver);  receiver.start();
// Thread-safe; start() once, stop() before the store goes away.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <inferscope/metrics/registry.h>

#include "net/blocking_client.h"
#include "net/router.h"
#include "trace/otlp.h"
#include "trace/trace_store.h"

namespace inferscope::trace {

struct TraceReceiverOptions {
  std::size_t queue_spans = 20000;               // spans waiting for the writer at most
  std::size_t max_body_bytes = 64u << 20;        // decompressed; OTLP's recommended limit
  std::chrono::milliseconds prune_interval{std::chrono::seconds(10)};
  std::string receive_lane = "traces";           // POST /v1/traces (decoding)
  std::string query_lane = "trace-queries";      // GET /api/traces* (SQLite reads)
  std::string forward_url = {};                  // empty: no forwarding
  std::size_t forward_queue_bytes = 16u << 20;   // bodies waiting to be forwarded at most
  std::chrono::milliseconds forward_timeout{std::chrono::seconds(10)};
};

class TraceReceiver {
 public:
  // Registers up's trace series in `registry` (one receiver per registry).
  TraceReceiver(TraceStore& store, metrics::Registry& registry, TraceReceiverOptions options = {});
  ~TraceReceiver();
  TraceReceiver(const TraceReceiver&) = delete;
  TraceReceiver& operator=(const TraceReceiver&) = delete;

  // start runs the writer thread and, with forward_url, the forwarding thread; fails (naming
  // --otlp-forward) on a forward URL that is not http(s). stop writes what is queued, then joins.
  Result<void> start();
  void stop();

  // receive answers one POST /v1/traces.
  net::Response receive(const net::Request& request);
  // list answers GET /api/traces; trace answers GET /api/traces/{id}.
  net::Response list(const net::Request& request);
  net::Response trace(const net::Request& request);

  const TraceReceiverOptions& options() const { return options_; }

 private:
  struct Queued {
    ExportRequest request;
    std::size_t spans = 0;
  };
  struct Forward {
    std::string body;
    std::string_view content_type;  // one of the receiver's static media types
    std::size_t spans = 0;
  };
  void write_loop();
  void forward_loop(net::BlockingClient client);
  void queue_forward(std::string_view body, std::string_view content_type, std::size_t spans);
  void prune(std::uint64_t now_ns);

  TraceStore& store_;
  const TraceReceiverOptions options_;
  metrics::Counter spans_received_, spans_dropped_queue_full_, spans_dropped_store_error_;
  metrics::Counter rejected_malformed_, rejected_too_large_, rejected_unsupported_;
  metrics::Counter traces_stored_, traces_not_slowest_, traces_evicted_, traces_retention_, traces_max_mb_;
  metrics::Gauge store_bytes_;
  metrics::Counter forwarded_, forward_dropped_queue_full_, forward_dropped_rejected_, forward_dropped_unavailable_,
      forward_dropped_shutdown_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  std::size_t queued_spans_ = 0;
  bool stopping_ = false;
  std::thread writer_;
  std::deque<Forward> forward_queue_;
  std::size_t forward_queued_bytes_ = 0;
  std::condition_variable forward_wake_;
  std::thread forwarder_;
};

// add_trace_routes creates the receiver's two lanes and registers its three routes on `router`.
void add_trace_routes(net::Router& router, TraceReceiver& receiver);

}  // namespace inferscope::trace
