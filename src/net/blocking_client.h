// File: blocking_client.h
// BlockingClient does HTTP/1.1 requests to one base URL (http or https) and waits for each whole
// answer: for the CLI and the blocking lanes (Prometheus queries, /metrics scrapes, readiness
// probes, reloads, the drill). It drives a ClientConnection on its own io_context, so TLS, SNI,
// certificate verification and failure classification are the gateway's and bench's.
// Example:
//   auto c = BlockingClient::create("https://prom:9090", {.tls = {.ca_file = "ca.pem"}}, "--prometheus");
//   Result<HttpReply> r = c->request("POST", "/api/v1/query", "query=up", "application/x-www-form-urlencoded");
//   Result<HttpReply> p = blocking_http_request("GET", "http://127.0.0.1:9090/-/ready");
// Not thread-safe: one BlockingClient per thread (it keeps one keep-alive connection); sibling()
// gives another thread its own connection to the same place. Beast-free; never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <inferscope/common/result.h>

#include "net/http_url.h"

namespace inferscope::net {

// TlsOptions is how an outbound client checks an https server, the same for every subcommand
// (flags --ca-file and --insecure): verification against the system store plus `ca_file`.
struct TlsOptions {
  std::string ca_file;  // PEM CA certificates trusted besides the system store
  bool verify = true;   // false: accept any certificate (--insecure)
};

// HttpReply is a whole answer, any status (4xx/5xx included).
struct HttpReply {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after = {};  // the Retry-After header as sent (seconds or an HTTP-date); empty when absent
};

struct BlockingClientOptions {
  std::chrono::milliseconds timeout{10000};  // per request: connect + write + the whole answer
  std::size_t max_body_bytes = 64u << 20;    // a larger answer is an error, not an OOM
  TlsOptions tls = {};
  std::string accept = {};  // Accept header; none when empty
};

class BlockingClient {
 public:
  // create parses `base_url` (errors name `where`, e.g. "--prometheus") and, for https, loads the
  // CA certificates (errors name the CA file). It does not connect; the first request does.
  static Result<BlockingClient> create(std::string_view base_url, BlockingClientOptions options = {},
                                       std::string_view where = "URL");
  BlockingClient(BlockingClient&&) noexcept;
  BlockingClient& operator=(BlockingClient&&) noexcept;
  ~BlockingClient();

  // sibling returns a client to the same URL with the same options and TLS context but its own
  // connection (for another thread).
  BlockingClient sibling() const;

  // request sends `method` to base path + `target` ("/api/v1/query?x=1"; "" = the base path
  // itself) with `body` (Content-Type `content_type` when non-empty) and reads the whole answer.
  // A kept-alive connection found closed before any answer byte is retried once on a fresh one.
  // Errors: "cannot <METHOD> <url>: <cause>", the cause naming TLS verification failures.
  Result<HttpReply> request(std::string_view method, std::string_view target, std::string_view body = {},
                            std::string_view content_type = {});
  // request_lending_body is request() for a body the caller lends: it is moved into the HTTP
  // request instead of copied, and moved back into `body` when the call returns, capacity and
  // all (the trace exporter sends batches of ~100 KB from one reused buffer: no allocation, and
  // no freed and refaulted pages, per batch).
  Result<HttpReply> request_lending_body(std::string_view method, std::string_view target, std::string& body,
                                         std::string_view content_type = {});

  const HttpUrl& url() const;
  // url_text is the base URL as given to create().
  const std::string& url_text() const;

 private:
  struct Shared;
  struct Impl;
  explicit BlockingClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// blocking_http_request does one request to a full URL on a fresh connection (probes, reloads).
// Errors as BlockingClient::request; a bad URL names itself.
Result<HttpReply> blocking_http_request(std::string_view method, std::string_view url, std::string_view body = {},
                                        std::string_view content_type = {},
                                        std::chrono::milliseconds timeout = std::chrono::seconds(5),
                                        const TlsOptions& tls = {});

}  // namespace inferscope::net
