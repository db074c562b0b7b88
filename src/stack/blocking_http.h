// File: blocking_http.h
// blocking_http_request does one small HTTP request with libcurl and returns status and body:
// for up's readiness probes, its queries of the Prometheus/Alertmanager it runs and `up --status`.
// Example: Result<HttpReply> r = blocking_http_request("GET", "http://127.0.0.1:9090/-/ready");
// Thread-safe (one curl handle per call). Blocking by design: these calls run on the supervisor
// thread or the CLI, never on an io thread. Not for chat robots (the relay owns those).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <inferscope/common/result.h>

namespace inferscope::stack {

// HttpReply is the status code and body of a completed request (any status, 4xx/5xx included).
struct HttpReply {
  long status = 0;
  std::string body;
};

// blocking_http_request sends `method` to `url` with `body` (Content-Type `content_type` when
// non-empty). Fails with "cannot <method> <url>: <curl's reason>" on connect/timeout errors;
// bodies over 64 MiB are cut off with an error.
Result<HttpReply> blocking_http_request(std::string_view method, const std::string& url, std::string_view body = {},
                                        std::string_view content_type = {},
                                        std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace inferscope::stack
