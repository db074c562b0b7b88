// File: http_poster.h
// HttpPoster: JSON POSTs to robots and webhooks over libcurl, keeping the connection alive
// between messages of one channel. Example:
//   HttpPoster poster(10s);  Result<net::HttpReply> a = poster.post(url, body);
// Not thread-safe: one poster per delivery thread. Never follows redirects, never logs the URL
// (it carries the robot's token); only http:// and https:// are allowed.
#pragma once

#include <chrono>
#include <string>

#include <inferscope/common/result.h>

#include "net/blocking_client.h"

namespace inferscope::relay {

// ensure_curl_initialized runs curl_global_init once per process (thread-safe).
void ensure_curl_initialized();

class HttpPoster {
 public:
  explicit HttpPoster(std::chrono::milliseconds timeout);
  ~HttpPoster();
  HttpPoster(const HttpPoster&) = delete;
  HttpPoster& operator=(const HttpPoster&) = delete;

  // post sends body as application/json; the answer keeps the first 64 KiB of the body. Errors ("cannot POST to channel: <curl message>") cover
  // connect/TLS/timeout failures; any HTTP status is an answer, judged by the caller.
  Result<net::HttpReply> post(const std::string& url, const std::string& body);

 private:
  void* curl_;  // CURL*, reused for keep-alive
  std::chrono::milliseconds timeout_;
};

}  // namespace inferscope::relay
