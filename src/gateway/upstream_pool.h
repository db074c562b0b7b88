// File: upstream_pool.h
// UpstreamPool holds the gateway's upstreams and what it knows about each: admission (a limit on
// concurrent requests plus a bounded FIFO queue with a deadline), passive health (N consecutive
// failures -> skipped for a back-off), least-outstanding choice among a model's upstreams, and
// idle keep-alive connections per io thread. Example:
//   Upstream* u = pool.choose(model); auto a = co_await pool.admit(*u, signal, deadline, gone);
// Thread-safe: each Upstream's counters and queue sit under its mutex; a grant wakes its waiter
// on the waiter's own executor. Idle connections are kept per io_context and touched only there.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gateway/gateway_config.h"
#include "gateway/gateway_metrics.h"
#include "net/async_signal.h"

namespace boost::asio::ssl {
class context;
}

namespace inferscope::net {
class ClientConnection;
}

namespace inferscope::gateway {

// AdmitResult says how a wait for an upstream slot ended.
enum class AdmitResult { kAdmitted, kQueueFull, kTimeout, kCancelled };

class Upstream {
 public:
  Upstream(const UpstreamConfig& config, std::size_t index, unsigned max_concurrency, unsigned max_queue,
           UpstreamGauges& gauges);
  ~Upstream();

  const UpstreamConfig& config() const { return config_; }
  std::size_t index() const { return index_; }
  // authorization is the Authorization header value for this upstream ("Bearer ..."), or empty.
  const std::string& authorization() const { return authorization_; }
  boost::asio::ssl::context* tls() const { return tls_.get(); }
  // outstanding returns in-flight plus queued requests (the balancing key).
  unsigned outstanding();
  // release frees one admitted slot (and hands it to the first waiter, if any).
  void release();
  // record_success / record_failure feed passive health.
  void record_success();
  void record_failure(unsigned threshold, std::chrono::milliseconds backoff);
  // healthy_at reports whether the upstream is in rotation at `now`.
  bool healthy_at(std::chrono::steady_clock::time_point now);
  std::chrono::steady_clock::time_point unhealthy_until();

  // take_idle returns an idle connection opened on `context` (this io thread), or null.
  std::unique_ptr<net::ClientConnection> take_idle(void* context);
  // put_idle keeps a reusable connection for the next request on `context` (at most a few).
  void put_idle(void* context, std::unique_ptr<net::ClientConnection> connection);

  UpstreamGauges& gauges() { return gauges_; }

 private:
  friend class UpstreamPool;
  struct Waiter {
    boost::asio::any_io_executor executor;
    net::AsyncSignal* signal = nullptr;  // touched only on `executor`
    bool granted = false;                // guarded by the upstream's mutex
    bool abandoned = false;
  };

  const UpstreamConfig& config_;
  std::size_t index_;
  unsigned max_concurrency_;
  unsigned max_queue_;
  UpstreamGauges& gauges_;
  std::string authorization_;
  std::shared_ptr<boost::asio::ssl::context> tls_;

  std::mutex mu_;
  unsigned in_flight_ = 0;
  std::deque<std::shared_ptr<Waiter>> waiters_;
  unsigned consecutive_failures_ = 0;
  std::chrono::steady_clock::time_point unhealthy_until_{};
  std::map<void*, std::vector<std::unique_ptr<net::ClientConnection>>> idle_;
};

class UpstreamPool {
 public:
  // create builds one Upstream per config entry: reads its key (env/file), loads its TLS trust.
  static Result<std::unique_ptr<UpstreamPool>> create(const GatewayConfig& config, GatewayMetrics& metrics);
  ~UpstreamPool();

  // choose picks the healthy upstream with the fewest outstanding requests among those serving
  // `model` (all upstreams when the model is not configured), ties taken in turn (as nginx's
  // least_conn does), so a light load still reaches every replica; when none is healthy, the one
  // whose back-off ends first (a probe). Never null.
  Upstream* choose(std::string_view model);
  // all returns the upstreams in config order.
  std::vector<std::unique_ptr<Upstream>>& all() { return upstreams_; }
  // clear_idle closes every idle connection; call after the io threads stopped, before their
  // io_contexts are destroyed.
  void clear_idle();

  // admit waits for a slot on `upstream`: at once when below the limit, else in its queue until
  // granted, `deadline` passes (kTimeout), `gone()` turns true (kCancelled; `signal` is notified
  // when the client leaves) or the queue is full (kQueueFull). kAdmitted must be paired with
  // upstream.release().
  boost::asio::awaitable<AdmitResult> admit(Upstream& upstream, net::AsyncSignal& signal,
                                            std::chrono::steady_clock::time_point deadline,
                                            const std::function<bool()>& gone);

 private:
  std::vector<std::unique_ptr<Upstream>> upstreams_;
  std::map<std::string, std::vector<Upstream*>, std::less<>> by_model_;
  const GatewayConfig* config_ = nullptr;
  // Where the next choice starts scanning: without it every tie goes to the first upstream and
  // a replica behind a lightly loaded gateway may never see a request.
  std::atomic<std::size_t> next_start_{0};
};

}  // namespace inferscope::gateway
