// File: prometheus_client.h
// PrometheusClient is the one client of the Prometheus HTTP API (v1) in inferscope: instant and
// range queries, series, targets, alerts, exemplars, and a batch call that runs many queries
// concurrently on a small bounded pool of keep-alive connections. Works with Prometheus and compatible query APIs
// (Thanos Query, VictoriaMetrics, Mimir: base URL with a path prefix, e.g. http://h:8481/select/0/prometheus).
// Example: auto c = PrometheusClient::create("http://127.0.0.1:9090"); auto r = c->query("up");
// http:// and https:// (net::BlockingClient: verification on unless tls.verify is false, a CA file).
// Thread-safe: every call opens its own connection. Never throws; network failures,
// timeouts, HTTP errors and API errors come back as Error.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/common/result.h"
#include "net/blocking_client.h"
#include "promapi/api_response.h"

namespace inferscope::promapi {

// ClientOptions bounds every call.
struct ClientOptions {
  std::chrono::milliseconds timeout{10000};  // per HTTP exchange: connect + write + read
  unsigned max_parallel = 8;                 // connections used by query_all at most
  std::size_t max_body_bytes = 64u << 20;    // larger answers are an error, not an OOM
  net::TlsOptions tls = {};                  // for an https:// URL
};

// QueryRequest is one query of a batch: instant when step_s == 0 (at `end`), range otherwise.
struct QueryRequest {
  std::string expr;
  double end = 0;       // Unix seconds; instant queries evaluate here
  double start = 0;     // range only
  double step_s = 0;    // range only; 0 = instant
};

class PrometheusClient {
 public:
  // create parses the URL ("http(s)://host[:port][/prefix]"; errors name --prometheus) and loads
  // the CA certificates for https; it does not connect (the first call does).
  static Result<PrometheusClient> create(std::string_view url, ClientOptions options = {});

  // query runs an instant query at `time` (Unix seconds; server's now when absent).
  Result<QueryResult> query(std::string_view expr, std::optional<double> time = std::nullopt) const;

  // query_range runs a range query; step_s > 0. Prometheus caps a range at 11,000 points per series.
  Result<QueryResult> query_range(std::string_view expr, double start, double end, double step_s) const;

  // series lists the label sets matching any of `matchers` between start and end.
  Result<std::vector<Labels>> series(const std::vector<std::string>& matchers, double start, double end) const;

  // targets lists the active scrape targets (Prometheus only; compatible APIs may answer 404).
  Result<std::vector<TargetHealth>> targets() const;

  // alerts lists the pending and firing alerts with their annotations (GET /api/v1/alerts).
  Result<std::vector<AlertInfo>> alerts() const;

  // query_exemplars returns the exemplars of the series `selector` (or expression) selects between
  // start and end (Unix seconds); empty when Prometheus runs without exemplar storage.
  Result<std::vector<ExemplarSeries>> query_exemplars(std::string_view selector, double start, double end) const;

  // query_all runs every request concurrently on at most options.max_parallel connections and
  // returns one Result per request, in order. Cost: about one round trip per
  // ceil(n / max_parallel) requests.
  std::vector<Result<QueryResult>> query_all(const std::vector<QueryRequest>& requests) const;

  const net::HttpUrl& url() const { return http_->url(); }

 private:
  PrometheusClient(std::shared_ptr<const net::BlockingClient> http, ClientOptions options)
      : http_(std::move(http)), options_(options) {}
  std::shared_ptr<const net::BlockingClient> http_;  // shared settings; each call takes a sibling()
  ClientOptions options_;
};

// url_encode percent-encodes a query-string value (RFC 3986 unreserved characters kept).
std::string url_encode(std::string_view value);

}  // namespace inferscope::promapi
