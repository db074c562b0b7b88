// File: up_context.h
// UpContext is what the routes of `inferscope up`'s HTTP API (its own and those other parts add:
// the relay webhook, /api/doctor, the dashboard) may read: the URLs of the Prometheus and
// Alertmanager it runs or uses, and up's metrics registry. Example:
//   router.get("/api/doctor", [&ctx](const net::Request&) { auto url = ctx.prometheus_url(); ... });
// Thread-safe. The URLs are empty until the stack is ready (answer 503 then) and never change after.
#pragma once

#include <mutex>
#include <string>

#include <inferscope/metrics/registry.h>

#include "net/blocking_client.h"

namespace inferscope::up {

class UpContext {
 public:
  // `prometheus_tls` is how an https:// --prometheus is reached (--ca-file, --insecure).
  explicit UpContext(metrics::Registry& registry, net::TlsOptions prometheus_tls = {})
      : registry_(registry), prometheus_tls_(std::move(prometheus_tls)) {}

  // prometheus_url is the Prometheus-compatible query API ("http://127.0.0.1:9090"), or empty
  // before the stack is ready.
  std::string prometheus_url() const {
    std::lock_guard lock(mutex_);
    return prometheus_url_;
  }
  const net::TlsOptions& prometheus_tls() const { return prometheus_tls_; }
  // alertmanager_url is the Alertmanager up runs, or empty (none, or not ready yet).
  std::string alertmanager_url() const {
    std::lock_guard lock(mutex_);
    return alertmanager_url_;
  }
  // api_url is up's own API base ("http://127.0.0.1:9300"), or empty before its server listens;
  // the doctor reads example traces from its store there.
  std::string api_url() const {
    std::lock_guard lock(mutex_);
    return api_url_;
  }
  void set_api_url(std::string url) {
    std::lock_guard lock(mutex_);
    api_url_ = std::move(url);
  }
  // registry is up's own registry, exposed on its /metrics and scraped by its Prometheus.
  metrics::Registry& registry() const { return registry_; }

  // set_ready publishes the URLs once the stack runs (up_command only).
  void set_ready(std::string prometheus_url, std::string alertmanager_url) {
    std::lock_guard lock(mutex_);
    prometheus_url_ = std::move(prometheus_url);
    alertmanager_url_ = std::move(alertmanager_url);
  }

 private:
  metrics::Registry& registry_;
  const net::TlsOptions prometheus_tls_;
  mutable std::mutex mutex_;
  std::string prometheus_url_;
  std::string alertmanager_url_;
  std::string api_url_;
};

}  // namespace inferscope::up
