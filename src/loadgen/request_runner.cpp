// The dispatcher, every request and the progress ticker are coroutines on one io_context run by the
// calling thread, so run state needs no locks. Intended times are absolute offsets on RunClock; a
// late timer never shifts later arrivals (no re-anchoring).
#include "loadgen/request_runner.h"

#include <algorithm>
#include <csignal>
#include <deque>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
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

struct RequestRunner::State {
  asio::io_context io{1};
  RunClock clock;
  std::unique_ptr<HttpClient> client;
  ArrivalSchedule schedule;
  asio::steady_timer arrival_timer{io};
  asio::steady_timer slot_timer{io};
  asio::steady_timer tick_timer{io};
  asio::signal_set signals{io};
  std::deque<RequestRecord> records;  // stable addresses while requests are in flight
  std::uint64_t in_flight = 0, done = 0, errors = 0;
  std::uint32_t peak_in_flight = 0;
  std::int64_t end_ns = 0;
  bool stopping = false, interrupted = false, dispatch_finished = false, waiting_for_slot = false;

  State(const LoadPlan& plan, std::uint64_t seed) : schedule(plan, seed) {}
};

RequestRunner::RequestRunner(RunConfig config, const Workload& workload, const RequestBuilder& builder)
    : config_(std::move(config)), workload_(workload), builder_(builder),
      state_(std::make_unique<State>(config_.plan, config_.seed)) {}

RequestRunner::~RequestRunner() = default;

void RequestRunner::stop() {
  State* s = state_.get();
  asio::post(s->io, [s] {
    if (s->stopping) return;
    s->stopping = s->interrupted = true;
    s->arrival_timer.cancel();
    s->slot_timer.cancel();
    s->client->cancel_all();
  });
}

Result<RunResult> RequestRunner::run() {
  State& s = *state_;
  s.clock = RunClock{};
  auto client = HttpClient::create(s.io, config_.target, s.clock, config_.client);
  if (!client) return client.error();
  s.client = std::move(*client);
  const RunBounds& b = config_.bounds;
  const std::uint64_t max_total = b.max_requests > 0 ? b.max_requests + b.warmup_requests : 0;
  Nanos end_at = s.schedule.plan_end();
  if (b.max_duration.count() > 0) end_at = std::min(end_at, b.max_duration + b.warmup_time);
  std::uint32_t max_cap = 0;
  for (std::size_t i = 0; i < s.schedule.stage_count(); ++i) max_cap = std::max(max_cap, s.schedule.stage(i).concurrency);

  auto maybe_finish = [&s] {
    if (!s.dispatch_finished || s.in_flight > 0) return;
    s.end_ns = s.clock.now_ns();
    s.tick_timer.cancel();
    s.signals.cancel();
  };

  auto run_request = [&](RequestRecord& rec) -> asio::awaitable<void> {
    RequestSpec spec = workload_.next(rec.index);
    rec.class_id = spec.class_id;
    if (spec.input_tokens > 0) {  // the server's usage.prompt_tokens replaces it when sent
      rec.input_tokens = spec.input_tokens;
      rec.input_token_source = TokenSource::kEstimated;
    }
    std::string wire = builder_.build(spec);
    rec.started_ns = s.clock.now_ns();
    co_await s.client->execute(wire, rec, s.clock.at(rec.started_ns) + config_.request_timeout);
    --s.in_flight;
    ++s.done;
    if (!rec.ok()) ++s.errors;
    if (observer_ != nullptr) observer_->on_complete(rec);
    if (s.waiting_for_slot) s.slot_timer.cancel();
    maybe_finish();
  };

  auto dispatcher = [&]() -> asio::awaitable<void> {
    Nanos prev{0};
    int burst = 0;
    for (std::uint64_t i = 0; !s.stopping && (max_total == 0 || i < max_total); ++i) {
      Nanos now{s.clock.now_ns()};
      bool closed = s.schedule.stage(s.schedule.stage_index_at(prev)).rate <= 0;
      auto next = s.schedule.next(closed ? std::max(prev, now) : prev);
      if (!next || *next >= end_at) break;
      if (Nanos(s.clock.now_ns()) < *next) {
        burst = 0;
        s.arrival_timer.expires_at(s.clock.at(next->count()));
        error_code ec;
        co_await s.arrival_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (s.stopping) break;
      } else if (++burst >= kSpawnBurst) {
        burst = 0;
        co_await asio::post(s.io, asio::use_awaitable);
      }
      std::int64_t dispatched = s.clock.now_ns();
      // Hold the arrival while the cap of the stage active now is full; wake on a completion or
      // at the stage's end (the next stage may have a larger cap).
      bool expired = false;  // the run's time ran out while this arrival waited: never sent
      for (;;) {
        std::size_t stage = s.schedule.stage_index_at(Nanos(s.clock.now_ns()));
        std::uint32_t cap = s.schedule.stage(stage).concurrency;
        if (s.stopping || cap == 0 || s.in_flight < cap) break;
        s.waiting_for_slot = true;
        Nanos wake = std::min(s.schedule.stage_end(stage), end_at);
        if (wake == Nanos::max()) {
          s.slot_timer.expires_at(std::chrono::steady_clock::time_point::max());
        } else {
          s.slot_timer.expires_at(s.clock.at(wake.count()));
        }
        error_code ec;
        co_await s.slot_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        s.waiting_for_slot = false;
        if (Nanos(s.clock.now_ns()) >= end_at) {
          expired = true;
          break;
        }
      }
      if (s.stopping || expired) break;
      std::int64_t now_ns = s.clock.now_ns();
      RequestRecord& rec = s.records.emplace_back();
      rec.index = i;
      rec.intended_ns = closed ? now_ns : next->count();
      rec.dispatched_ns = closed ? now_ns : dispatched;
      rec.streaming = builder_.streaming();
      rec.warmup = i < b.warmup_requests || Nanos(rec.intended_ns) < b.warmup_time;
      prev = Nanos(rec.intended_ns);
      ++s.in_flight;
      s.peak_in_flight = std::max<std::uint32_t>(s.peak_in_flight, static_cast<std::uint32_t>(s.in_flight));
      asio::co_spawn(s.io, run_request(rec), asio::detached);
    }
    s.dispatch_finished = true;
    maybe_finish();
  };

  auto ticker = [&]() -> asio::awaitable<void> {
    while (!(s.dispatch_finished && s.in_flight == 0)) {
      s.tick_timer.expires_after(config_.tick_interval);
      error_code ec;
      co_await s.tick_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (observer_ != nullptr) {
        observer_->on_tick(RunStatus{s.clock.now_ns(), s.records.size(), s.done, s.errors, s.in_flight, max_total,
                                     end_at == Nanos::max() ? Nanos(0) : end_at});
      }
    }
  };

  if (config_.handle_signals) {
    s.signals.add(SIGINT);
    s.signals.add(SIGTERM);
    s.signals.async_wait([this](const error_code& ec, int) {
      if (!ec) stop();
    });
  }
  asio::co_spawn(s.io, dispatcher(), asio::detached);
  asio::co_spawn(s.io, ticker(), asio::detached);
  s.io.run();
  if (observer_ != nullptr) {
    observer_->on_tick(RunStatus{s.clock.now_ns(), s.records.size(), s.done, s.errors, s.in_flight, max_total,
                                 end_at == Nanos::max() ? Nanos(0) : end_at});
  }

  RunResult result;
  result.interrupted = s.interrupted;
  result.end_ns = s.end_ns;
  result.peak_in_flight = s.peak_in_flight;
  result.configured_concurrency = max_cap;
  result.records.reserve(s.records.size());
  for (RequestRecord& r : s.records) result.records.push_back(std::move(r));
  s.records.clear();
  return result;
}

}  // namespace inferscope::loadgen
