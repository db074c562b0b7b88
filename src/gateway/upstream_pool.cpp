// File: upstream_pool.cpp
// Admission is a counter and a FIFO under one mutex per upstream. A release hands its slot
// straight to the first live waiter (in_flight stays the same), so a burst cannot overtake the
// queue, and wakes that waiter by posting to its executor.
#include "gateway/upstream_pool.h"

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/ssl/context.hpp>

#include <algorithm>

#include "net/client_connection.h"

namespace inferscope::gateway {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {
constexpr std::size_t kMaxIdlePerThread = 256;
}

Upstream::Upstream(const UpstreamConfig& config, std::size_t index, unsigned max_concurrency, unsigned max_queue,
                   UpstreamGauges& gauges)
    : config_(config), index_(index), max_concurrency_(max_concurrency), max_queue_(max_queue), gauges_(gauges) {}

Upstream::~Upstream() = default;

unsigned Upstream::outstanding() {
  std::lock_guard lock(mu_);
  return in_flight_ + static_cast<unsigned>(waiters_.size());
}

void Upstream::release() {
  std::shared_ptr<Waiter> next;
  {
    std::lock_guard lock(mu_);
    while (!waiters_.empty()) {
      auto w = std::move(waiters_.front());
      waiters_.pop_front();
      if (!w->abandoned) {
        w->granted = true;  // the slot passes to it: in_flight_ unchanged
        next = std::move(w);
        break;
      }
    }
    if (!next) --in_flight_;
    gauges_.in_flight.set(in_flight_);
    gauges_.queued.set(static_cast<double>(waiters_.size()));
  }
  if (next) {
    asio::post(next->executor, [next] {
      if (next->signal != nullptr) next->signal->notify();
    });
  }
}

void Upstream::record_success() {
  std::lock_guard lock(mu_);
  consecutive_failures_ = 0;
  if (unhealthy_until_ != Clock::time_point{}) {
    unhealthy_until_ = {};
    gauges_.healthy.set(1);
  }
}

void Upstream::record_failure(unsigned threshold, std::chrono::milliseconds backoff) {
  std::lock_guard lock(mu_);
  if (++consecutive_failures_ >= threshold) {
    unhealthy_until_ = Clock::now() + backoff;
    gauges_.healthy.set(0);
  }
}

bool Upstream::healthy_at(Clock::time_point now) {
  std::lock_guard lock(mu_);
  return unhealthy_until_ == Clock::time_point{} || now >= unhealthy_until_;
}

Clock::time_point Upstream::unhealthy_until() {
  std::lock_guard lock(mu_);
  return unhealthy_until_;
}

std::unique_ptr<net::ClientConnection> Upstream::take_idle(void* context) {
  std::lock_guard lock(mu_);
  auto it = idle_.find(context);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  auto connection = std::move(it->second.back());
  it->second.pop_back();
  return connection;
}

void Upstream::put_idle(void* context, std::unique_ptr<net::ClientConnection> connection) {
  std::unique_ptr<net::ClientConnection> dropped;  // closed outside the lock
  std::lock_guard lock(mu_);
  auto& list = idle_[context];
  if (list.size() >= kMaxIdlePerThread) {
    dropped = std::move(connection);
    return;
  }
  list.push_back(std::move(connection));
}

Result<std::unique_ptr<UpstreamPool>> UpstreamPool::create(const GatewayConfig& config, GatewayMetrics& metrics) {
  auto pool = std::make_unique<UpstreamPool>();
  pool->config_ = &config;
  for (std::size_t i = 0; i < config.upstreams.size(); ++i) {
    const UpstreamConfig& u = config.upstreams[i];
    auto upstream = std::make_unique<Upstream>(u, i, u.max_concurrency.value_or(config.max_concurrency),
                                               u.max_queue.value_or(config.max_queue), metrics.upstream(i));
    auto key = read_secret(u.api_key_env, u.api_key_file);
    if (!key) return make_error("cannot configure upstream '" + u.name + "': " + key.error().message);
    if (!key->empty()) upstream->authorization_ = "Bearer " + *key;
    if (u.target.tls) {
      auto tls = net::make_client_tls_context(u.ca_file, u.verify_tls);
      if (!tls) return make_error("cannot configure upstream '" + u.name + "': " + tls.error().message);
      upstream->tls_ = *tls;
    }
    pool->upstreams_.push_back(std::move(upstream));
  }
  for (const auto& [model, names] : config.models) {
    auto& list = pool->by_model_[model];
    for (const std::string& name : names) {
      for (auto& u : pool->upstreams_) {
        if (u->config().name == name) list.push_back(u.get());
      }
    }
  }
  return pool;
}

UpstreamPool::~UpstreamPool() = default;

void UpstreamPool::clear_idle() {
  for (auto& u : upstreams_) {
    std::lock_guard lock(u->mu_);
    u->idle_.clear();
  }
}

Upstream* UpstreamPool::choose(std::string_view model) {
  std::vector<Upstream*> all;
  const std::vector<Upstream*>* candidates = nullptr;
  if (auto it = by_model_.find(model); it != by_model_.end() && !it->second.empty()) {
    candidates = &it->second;
  } else {
    for (auto& u : upstreams_) all.push_back(u.get());
    candidates = &all;
  }
  const auto now = Clock::now();
  Upstream* best = nullptr;
  unsigned best_load = 0;
  const std::size_t n = candidates->size();
  const std::size_t start = n == 0 ? 0 : next_start_.fetch_add(1, std::memory_order_relaxed) % n;
  for (std::size_t k = 0; k < n; ++k) {
    Upstream* u = (*candidates)[(start + k) % n];
    if (!u->healthy_at(now)) continue;
    const unsigned load = u->outstanding();
    if (best == nullptr || load < best_load) {
      best = u;
      best_load = load;
    }
  }
  if (best != nullptr) return best;
  // All in back-off: probe the one that has waited longest.
  for (Upstream* u : *candidates) {
    if (best == nullptr || u->unhealthy_until() < best->unhealthy_until()) best = u;
  }
  return best;
}

asio::awaitable<AdmitResult> UpstreamPool::admit(Upstream& u, net::AsyncSignal& signal, Clock::time_point deadline,
                                                 const std::function<bool()>& gone) {
  auto waiter = std::make_shared<Upstream::Waiter>();
  waiter->executor = co_await asio::this_coro::executor;
  {
    std::lock_guard lock(u.mu_);
    if (u.in_flight_ < u.max_concurrency_ && u.waiters_.empty()) {
      ++u.in_flight_;
      u.gauges_.in_flight.set(u.in_flight_);
      co_return AdmitResult::kAdmitted;
    }
    if (u.waiters_.size() >= u.max_queue_) co_return AdmitResult::kQueueFull;
    waiter->signal = &signal;
    u.waiters_.push_back(waiter);
    u.gauges_.queued.set(static_cast<double>(u.waiters_.size()));
  }
  for (;;) {
    {
      std::lock_guard lock(u.mu_);
      if (waiter->granted) break;
      if (gone() || Clock::now() >= deadline) {
        waiter->abandoned = true;
        u.waiters_.erase(std::remove(u.waiters_.begin(), u.waiters_.end(), waiter), u.waiters_.end());
        u.gauges_.queued.set(static_cast<double>(u.waiters_.size()));
        waiter->signal = nullptr;
        co_return gone() ? AdmitResult::kCancelled : AdmitResult::kTimeout;
      }
    }
    co_await signal.wait(deadline);
  }
  waiter->signal = nullptr;
  co_return AdmitResult::kAdmitted;
}

}  // namespace inferscope::gateway
