// File: request_runner.h
// RequestRunner executes one bounded benchmark run: a dispatcher coroutine walks the
// ArrivalSchedule on steady-clock timers, holds arrivals while the stage's concurrency cap is
// full (their intended time keeps ticking: coordinated-omission-correct), and runs each request
// through an HttpClient on one of RunConfig::io_threads io threads. It ends by itself at the count/duration bound, or early on
// SIGINT/SIGTERM/stop() with every in-flight request marked cancelled.
// Example: RequestRunner r(config, workload, builder); Result<RunResult> res = r.run();
// run() blocks the calling thread (the io thread); stop() is thread-safe. Never throws from run().
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "inferscope/common/result.h"
#include "loadgen/arrival_schedule.h"
#include "loadgen/base_url.h"
#include "loadgen/http_client.h"
#include "loadgen/request_builder.h"
#include "loadgen/request_record.h"
#include "loadgen/workload.h"

namespace inferscope::loadgen {

// RunBounds ends a run: whichever of the count and the duration comes first (0 = unbounded; at
// least one must be set unless the plan's stages are all timed). Warm-up requests (the first
// warmup_requests, and all intended before warmup_time) are extra: sent but not counted.
struct RunBounds {
  std::uint64_t max_requests = 0;
  Nanos max_duration{0};
  std::uint64_t warmup_requests = 0;
  Nanos warmup_time{0};
};

struct RunConfig {
  Target target;
  ClientOptions client;
  LoadPlan plan;
  std::uint64_t seed = 0;
  RunBounds bounds;
  Nanos request_timeout = std::chrono::minutes(10);
  bool handle_signals = true;        // install SIGINT/SIGTERM handlers for the run
  Nanos tick_interval = std::chrono::milliseconds(500);  // RunObserver::on_tick period
  // io_threads: threads that read, parse and stamp responses, each with its own connection pool;
  // request i runs on thread i % io_threads. The dispatcher and all accounting stay on the thread
  // that calls run(), which is also io thread 0.
  unsigned io_threads = 1;
};

// RunStatus is a live snapshot for progress displays.
struct RunStatus {
  std::int64_t elapsed_ns = 0;
  std::uint64_t dispatched = 0, done = 0, errors = 0, in_flight = 0;
  std::uint64_t target = 0;  // request bound incl. warm-up, 0 if none
  Nanos duration{0};         // time bound incl. warm-up, 0 if none
};

// RunObserver receives completions and ticks on the io thread; implementations must be quick.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_complete(const RequestRecord& record) = 0;
  virtual void on_tick(const RunStatus& status) = 0;
};

// RunResult is the whole run: every record (dispatch order) plus run-level facts.
struct RunResult {
  std::vector<RequestRecord> records;
  bool interrupted = false;
  std::int64_t end_ns = 0;             // last response finished
  std::uint32_t peak_in_flight = 0;
  std::uint32_t configured_concurrency = 0;  // largest stage cap (0 = none)
  // io_loop_lag_us: how late the io thread woke for a probe timer due every kIoLagProbePeriod,
  // one sample per wake. A socket that becomes readable waits about as long before the client
  // reads and stamps it, so this is the client's own share of every measured latency.
  std::vector<std::uint32_t> io_loop_lag_us;
};

// kIoLagProbePeriod is the period of the io-loop lag probe (500 wakes/s: negligible load).
inline constexpr Nanos kIoLagProbePeriod = std::chrono::milliseconds(2);

class RequestRunner {
 public:
  // RequestRunner keeps references to `workload` and `builder`; both must outlive run().
  RequestRunner(RunConfig config, const Workload& workload, const RequestBuilder& builder);
  ~RequestRunner();

  // set_observer registers an observer (kept by reference; may be null). Call before run().
  void set_observer(RunObserver* observer) { observer_ = observer; }

  // run executes the run on the calling thread. Fails only when the client cannot be set up.
  Result<RunResult> run();

  // stop ends the run early as if interrupted (thread-safe; no-op before run() or after it ends).
  void stop();

 private:
  struct State;
  RunConfig config_;
  const Workload& workload_;
  const RequestBuilder& builder_;
  RunObserver* observer_ = nullptr;
  std::unique_ptr<State> state_;
};

}  // namespace inferscope::loadgen
