// The dispatcher, every request's bookkeeping and the progress ticker are coroutines on one
// io_context run by the calling thread, so run state needs no locks. With io_threads > 1 a
// request's HTTP exchange runs on a shard's io_context (its own thread and connection pool); the
// awaiting coroutine resumes on the calling thread, and that hand-over orders the record's
// writes before any read of them. Intended times are absolute offsets on RunClock; a
// late timer never shifts later arrivals (no re-anchoring).
#include "loadgen/request_runner.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <deque>
#include <optional>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace inferscope::loadgen {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// Spawning this many requests back to back (a backlog or a herd) yields once so reads and
// writes of requests already in flight are not starved.
constexpr int kSpawnBurst = 64;
}  // namespace

// Shard is one extra io thread with its own connection pool and io-loop lag probe.
struct Shard {
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::unique_ptr<HttpClient> client;
  asio::steady_timer probe_timer{io};
  std::vector<std::uint32_t> io_loop_lag_us;
  std::thread thread;
};

// State is one run: its io_context, timers, records and counters, and the coroutine steps that
// drive them (dispatch -> wait_until_due -> wait_for_slot -> launch -> run_request; tick).
struct RequestRunner::State {
  // Limits are the run's bounds resolved once: the request count and end offset (both incl.
  // warm-up) and the largest stage cap.
  struct Limits {
    std::uint64_t max_total = 0;  // 0 = no count bound
    Nanos end_at = Nanos::max();
    std::uint32_t max_cap = 0;
  };
  // Arrival is the next request the dispatcher is about to send.
  struct Arrival {
    std::uint64_t index = 0;
    Nanos intended{0};
    bool closed = false;  // closed loop: sent as soon as a slot frees, intended = actual
    std::int64_t dispatched_ns = 0;
  };

  const RunConfig& config;
  const Workload& workload;
  const RequestBuilder& builder;
  RunObserver* observer = nullptr;
  Limits limits;
  asio::io_context io{1};
  RunClock clock;
  std::unique_ptr<HttpClient> client;
  ArrivalSchedule schedule;
  asio::steady_timer arrival_timer{io};
  asio::steady_timer slot_timer{io};
  asio::steady_timer tick_timer{io};
  asio::steady_timer probe_timer{io};
  asio::signal_set signals{io};
  std::deque<RequestRecord> records;  // stable addresses while requests are in flight
  std::vector<std::uint32_t> io_loop_lag_us;
  std::uint64_t in_flight = 0, done = 0, errors = 0;
  std::uint32_t peak_in_flight = 0;
  std::int64_t end_ns = 0;
  std::vector<std::unique_ptr<Shard>> shards;  // io threads 1..n-1
  std::atomic<bool> finished{false};            // the run is over: shard probes stop
  bool stopping = false, interrupted = false, dispatch_finished = false, waiting_for_slot = false;

  State(const RunConfig& c, const Workload& w, const RequestBuilder& b)
      : config(c), workload(w), builder(b), schedule(c.plan, c.seed) {}

  void resolve_limits();
  RunStatus status() const;
  void maybe_finish();
  asio::awaitable<void> dispatch();
  asio::awaitable<std::optional<Arrival>> next_arrival(std::uint64_t index, Nanos previous, int& burst);
  asio::awaitable<bool> wait_for_slot();
  RequestRecord& launch(const Arrival& arrival);
  asio::awaitable<void> run_request(RequestRecord& rec);
  asio::awaitable<void> tick();
  asio::awaitable<void> probe_io_lag(asio::steady_timer& timer, std::vector<std::uint32_t>& lag_us, bool main);
  Result<void> start_shards(unsigned count);
  void stop_shards();
  asio::awaitable<void> execute_on(Shard& shard, const std::string& wire, RequestRecord& rec);
  RunResult take_result();
};

void RequestRunner::State::resolve_limits() {
  const RunBounds& b = config.bounds;
  limits.max_total = b.max_requests > 0 ? b.max_requests + b.warmup_requests : 0;
  limits.end_at = schedule.plan_end();
  if (b.max_duration.count() > 0) limits.end_at = std::min(limits.end_at, b.max_duration + b.warmup_time);
  for (std::size_t i = 0; i < schedule.stage_count(); ++i) limits.max_cap = std::max(limits.max_cap, schedule.stage(i).concurrency);
}

RunStatus RequestRunner::State::status() const {
  return RunStatus{clock.now_ns(), records.size(), done, errors, in_flight, limits.max_total,
                   limits.end_at == Nanos::max() ? Nanos(0) : limits.end_at};
}

// maybe_finish ends the run once nothing is left to dispatch and nothing is in flight.
void RequestRunner::State::maybe_finish() {
  if (!dispatch_finished || in_flight > 0) return;
  end_ns = clock.now_ns();
  tick_timer.cancel();
  probe_timer.cancel();
  signals.cancel();
}

asio::awaitable<void> RequestRunner::State::dispatch() {
  Nanos previous{0};
  int burst = 0;
  for (std::uint64_t i = 0; !stopping && (limits.max_total == 0 || i < limits.max_total); ++i) {
    std::optional<Arrival> arrival = co_await next_arrival(i, previous, burst);
    if (!arrival || stopping) break;
    if (!co_await wait_for_slot()) break;
    RequestRecord& rec = launch(*arrival);
    previous = Nanos(rec.intended_ns);
    asio::co_spawn(io, run_request(rec), asio::detached);
  }
  dispatch_finished = true;
  maybe_finish();
}

// next_arrival finds arrival `index`'s intended time and waits until it is due; empty when the
// schedule or the run's time has ended. A late timer never shifts later arrivals.
asio::awaitable<std::optional<RequestRunner::State::Arrival>> RequestRunner::State::next_arrival(
    std::uint64_t index, Nanos previous, int& burst) {
  Nanos now{clock.now_ns()};
  bool closed = schedule.stage(schedule.stage_index_at(previous)).rate <= 0;
  auto next = schedule.next(closed ? std::max(previous, now) : previous);
  if (!next || *next >= limits.end_at) co_return std::nullopt;
  if (Nanos(clock.now_ns()) < *next) {
    burst = 0;
    arrival_timer.expires_at(clock.at(next->count()));
    error_code ec;
    co_await arrival_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  } else if (++burst >= kSpawnBurst) {
    burst = 0;
    co_await asio::post(io, asio::use_awaitable);
  }
  co_return Arrival{index, *next, closed, clock.now_ns()};
}

// wait_for_slot holds the arrival while the cap of the stage active now is full, waking on a
// completion or at the stage's end (the next stage may have a larger cap). False when the run
// stopped or its time ran out meanwhile (the arrival is then never sent).
asio::awaitable<bool> RequestRunner::State::wait_for_slot() {
  for (;;) {
    std::size_t stage = schedule.stage_index_at(Nanos(clock.now_ns()));
    std::uint32_t cap = schedule.stage(stage).concurrency;
    if (stopping) co_return false;
    if (cap == 0 || in_flight < cap) co_return true;
    waiting_for_slot = true;
    Nanos wake = std::min(schedule.stage_end(stage), limits.end_at);
    slot_timer.expires_at(wake == Nanos::max() ? std::chrono::steady_clock::time_point::max() : clock.at(wake.count()));
    error_code ec;
    co_await slot_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    waiting_for_slot = false;
    if (Nanos(clock.now_ns()) >= limits.end_at) co_return false;
  }
}

// launch creates the record of an arrival that got its slot and counts it in flight.
RequestRecord& RequestRunner::State::launch(const Arrival& arrival) {
  const RunBounds& b = config.bounds;
  std::int64_t now_ns = clock.now_ns();
  RequestRecord& rec = records.emplace_back();
  rec.index = arrival.index;
  rec.intended_ns = arrival.closed ? now_ns : arrival.intended.count();
  rec.dispatched_ns = arrival.closed ? now_ns : arrival.dispatched_ns;
  rec.streaming = builder.streaming();
  rec.warmup = arrival.index < b.warmup_requests || Nanos(rec.intended_ns) < b.warmup_time;
  ++in_flight;
  peak_in_flight = std::max<std::uint32_t>(peak_in_flight, static_cast<std::uint32_t>(in_flight));
  return rec;
}

// run_request builds the request, runs it through the client and accounts for its completion.
asio::awaitable<void> RequestRunner::State::run_request(RequestRecord& rec) {
  RequestSpec spec = workload.next(rec.index);
  rec.class_id = spec.class_id;
  if (spec.input_tokens > 0) {  // the server's usage.prompt_tokens replaces it when sent
    rec.input_tokens = spec.input_tokens;
    rec.input_token_source = TokenSource::kEstimated;
  }
  std::string wire = builder.build(spec);
  std::size_t thread = rec.index % (shards.size() + 1);
  if (thread == 0) {
    rec.started_ns = clock.now_ns();
    co_await client->execute(wire, rec, clock.at(rec.started_ns) + config.request_timeout);
  } else {
    co_await asio::co_spawn(shards[thread - 1]->io, execute_on(*shards[thread - 1], wire, rec), asio::use_awaitable);
  }
  --in_flight;
  ++done;
  if (!rec.ok()) ++errors;
  if (observer != nullptr) observer->on_complete(rec);
  if (waiting_for_slot) slot_timer.cancel();
  maybe_finish();
}

// execute_on runs one exchange on a shard's thread; `wire` and `rec` outlive it (the caller awaits).
asio::awaitable<void> RequestRunner::State::execute_on(Shard& shard, const std::string& wire, RequestRecord& rec) {
  rec.started_ns = clock.now_ns();
  co_await shard.client->execute(wire, rec, clock.at(rec.started_ns) + config.request_timeout);
}

// start_shards creates io threads 1..count-1, each with its client and lag probe; fails (with no
// thread started) when a client cannot be set up.
Result<void> RequestRunner::State::start_shards(unsigned count) {
  for (unsigned i = 1; i < count; ++i) {
    auto shard = std::make_unique<Shard>();
    auto c = HttpClient::create(shard->io, config.target, clock, config.client);
    if (!c) return c.error();
    shard->client = std::move(*c);
    shards.push_back(std::move(shard));
  }
  for (auto& shard : shards) {
    Shard* sh = shard.get();
    asio::co_spawn(sh->io, probe_io_lag(sh->probe_timer, sh->io_loop_lag_us, false), asio::detached);
    sh->thread = std::thread([sh] { sh->io.run(); });
  }
  return {};
}

// stop_shards ends the shard threads once every request has finished.
void RequestRunner::State::stop_shards() {
  finished.store(true);
  for (auto& shard : shards) {
    Shard* sh = shard.get();
    asio::post(sh->io, [sh] { sh->probe_timer.cancel(); });
    sh->work.reset();
  }
  for (auto& shard : shards) {
    if (shard->thread.joinable()) shard->thread.join();
  }
}

// tick reports progress every tick_interval until the run ends.
asio::awaitable<void> RequestRunner::State::tick() {
  while (!(dispatch_finished && in_flight == 0)) {
    tick_timer.expires_after(config.tick_interval);
    error_code ec;
    co_await tick_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (observer != nullptr) observer->on_tick(status());
  }
}

// probe_io_lag wakes every kIoLagProbePeriod on absolute deadlines and records how late each wake
// was: the time its io thread spent on other work before returning to its event loop. The main
// thread's probe ends with the run; a shard's when its timer is cancelled at the end.
asio::awaitable<void> RequestRunner::State::probe_io_lag(asio::steady_timer& timer, std::vector<std::uint32_t>& lag_us,
                                                        bool main) {
  std::int64_t due = clock.now_ns();
  while (main ? !(dispatch_finished && in_flight == 0) : !finished.load(std::memory_order_relaxed)) {
    due += kIoLagProbePeriod.count();
    timer.expires_at(clock.at(due));
    error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    std::int64_t late = clock.now_ns() - due;
    lag_us.push_back(static_cast<std::uint32_t>(std::clamp<std::int64_t>(late / 1000, 0, UINT32_MAX)));
    // After a long stall, skip the missed periods instead of firing back to back.
    if (late > kIoLagProbePeriod.count()) due += late / kIoLagProbePeriod.count() * kIoLagProbePeriod.count();
  }
}

RunResult RequestRunner::State::take_result() {
  RunResult result;
  result.interrupted = interrupted;
  result.end_ns = end_ns;
  result.peak_in_flight = peak_in_flight;
  result.configured_concurrency = limits.max_cap;
  result.io_loop_lag_us = std::move(io_loop_lag_us);
  for (auto& shard : shards) {
    result.io_loop_lag_us.insert(result.io_loop_lag_us.end(), shard->io_loop_lag_us.begin(), shard->io_loop_lag_us.end());
  }
  result.records.reserve(records.size());
  for (RequestRecord& r : records) result.records.push_back(std::move(r));
  records.clear();
  return result;
}

RequestRunner::RequestRunner(RunConfig config, const Workload& workload, const RequestBuilder& builder)
    : config_(std::move(config)), workload_(workload), builder_(builder),
      state_(std::make_unique<State>(config_, workload_, builder_)) {}

RequestRunner::~RequestRunner() = default;

void RequestRunner::stop() {
  State* s = state_.get();
  asio::post(s->io, [s] {
    if (s->stopping) return;
    s->stopping = s->interrupted = true;
    s->arrival_timer.cancel();
    s->slot_timer.cancel();
    s->probe_timer.cancel();
    s->client->cancel_all();
    for (auto& shard : s->shards) {
      HttpClient* c = shard->client.get();
      asio::post(shard->io, [c] { c->cancel_all(); });
    }
  });
}

Result<RunResult> RequestRunner::run() {
  State& s = *state_;
  s.clock = RunClock{};
  s.observer = observer_;
  auto client = HttpClient::create(s.io, config_.target, s.clock, config_.client);
  if (!client) return client.error();
  s.client = std::move(*client);
  if (auto started = s.start_shards(std::max(1u, config_.io_threads)); !started) {
    s.stop_shards();
    return started.error();
  }
  s.resolve_limits();
  if (config_.handle_signals) {
    s.signals.add(SIGINT);
    s.signals.add(SIGTERM);
    s.signals.async_wait([this](const error_code& ec, int) {
      if (!ec) stop();
    });
  }
  asio::co_spawn(s.io, s.dispatch(), asio::detached);
  asio::co_spawn(s.io, s.tick(), asio::detached);
  asio::co_spawn(s.io, s.probe_io_lag(s.probe_timer, s.io_loop_lag_us, true), asio::detached);
  s.io.run();
  s.stop_shards();
  if (observer_ != nullptr) observer_->on_tick(s.status());
  return s.take_result();
}

}  // namespace inferscope::loadgen
