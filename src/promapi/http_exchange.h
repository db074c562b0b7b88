// File: http_exchange.h
// HttpConnection: one blocking HTTP/1.1 keep-alive connection used by PrometheusClient, each
// exchange bounded by a deadline (Beast's tcp_stream timeouts on async operations that the
// calling thread drives to completion). Internal to promapi; Beast stays in the .cpp.
// Also used by the doctor to fetch /metrics directly (accept = the exposition media types).
// Not thread-safe: one connection per thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "inferscope/common/result.h"
#include "promapi/prometheus_client.h"

namespace inferscope::promapi::detail {

// HttpAnswer is the status and body of one response.
struct HttpAnswer {
  int status = 0;
  std::string body;
  std::string content_type;
};

class HttpConnection {
 public:
  // HttpConnection keeps copies of its arguments; `accept` is sent as the Accept header.
  HttpConnection(Endpoint endpoint, ClientOptions options, std::string accept = "application/json");
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // exchange sends GET (form empty) or POST application/x-www-form-urlencoded to
  // path_prefix + path and reads the whole answer. A kept-alive connection that turns out closed
  // is retried once on a fresh one. Errors: "cannot query <url>: <cause>".
  Result<HttpAnswer> exchange(const std::string& path, const std::string& form);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::promapi::detail
