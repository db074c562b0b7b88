// File: blocking_client.cpp
// Each request runs one coroutine on the client's own io_context and drives it to completion on
// the calling thread; one deadline covers connect, write and the whole answer, so the calling
// thread never waits longer than the timeout.
#include "net/blocking_client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "net/client_connection.h"

namespace inferscope::net {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct BlockingClient::Shared {
  HttpUrl url;
  std::string url_text;
  BlockingClientOptions options;
  std::shared_ptr<asio::ssl::context> tls;  // https only
};

struct BlockingClient::Impl {
  std::shared_ptr<const Shared> shared;
  asio::io_context io;
  std::unique_ptr<ClientConnection> connection;
};

namespace {

// Outcome is what one exchange coroutine leaves behind.
struct Outcome {
  ClientError error = ClientError::kNone;
  std::string detail;      // the system's words for the failure
  bool too_large = false;  // the body passed max_body_bytes
  bool retry = false;      // a reused connection was closed before answering
  HttpReply reply;
};

milliseconds left(Clock::time_point deadline) {
  return std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

asio::awaitable<void> exchange(ClientConnection& connection, const ClientRequest& request, bool reused,
                               std::size_t max_body, Clock::time_point deadline, Outcome& out) {
  auto failed = [&](ClientError error) {
    out.error = error;
    out.detail = connection.failure_detail();
    out.retry = reused && error == ClientError::kReset && !connection.bytes_received();
  };
  if (ClientError e = co_await connection.write(request, left(deadline)); e != ClientError::kNone) {
    failed(e);
    co_return;
  }
  if (ClientError e = co_await connection.read_head(left(deadline)); e != ClientError::kNone) {
    failed(e);
    co_return;
  }
  const ClientResponseHead& head = connection.head();
  out.reply.status = static_cast<int>(head.result_int());
  out.reply.content_type = std::string(head[http::field::content_type]);
  out.reply.retry_after = std::string(head[http::field::retry_after]);
  while (!connection.done()) {
    if (ClientError e = co_await connection.read_body_some(out.reply.body, left(deadline)); e != ClientError::kNone) {
      out.error = e;
      out.detail = connection.failure_detail();
      co_return;
    }
    if (out.reply.body.size() > max_body) {
      out.too_large = true;
      co_return;
    }
  }
}

// drive runs `task` on `io` until it finished; an exception inside (out of memory) is rethrown here.
void drive(asio::io_context& io, asio::awaitable<void> task) {
  std::exception_ptr thrown;
  asio::co_spawn(io, std::move(task), [&thrown](std::exception_ptr e) { thrown = e; });
  io.restart();
  io.run();
  if (thrown) std::rethrow_exception(thrown);
}

std::string cause(ClientError error, const std::string& detail, milliseconds timeout) {
  const std::string because = detail.empty() ? "" : ": " + detail;
  switch (error) {
    case ClientError::kRefused: return "cannot connect" + because;
    case ClientError::kConnectTimeout: return fmt::format("no connection within {} ms", timeout.count());
    case ClientError::kTls:
      if (detail.find("certificate verify failed") != std::string::npos) {
        return "TLS handshake failed" + because + " (the server's certificate is not signed by a trusted CA; "
               "--ca-file names one)";
      }
      return "TLS handshake failed" + because;
    case ClientError::kHeaderTimeout:
    case ClientError::kIdleTimeout: return fmt::format("no answer within {} ms", timeout.count());
    case ClientError::kReset: return "connection closed before the answer" + because;
    case ClientError::kTruncated: return "connection closed inside the answer" + because;
    case ClientError::kProtocol: return "malformed HTTP answer" + because;
    case ClientError::kCancelled: return "cancelled";
    case ClientError::kNone: break;
  }
  return "failed" + because;
}

}  // namespace

BlockingClient::BlockingClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockingClient::BlockingClient(BlockingClient&&) noexcept = default;
BlockingClient& BlockingClient::operator=(BlockingClient&&) noexcept = default;
BlockingClient::~BlockingClient() = default;

Result<BlockingClient> BlockingClient::create(std::string_view base_url, BlockingClientOptions options,
                                              std::string_view where) {
  auto url = parse_http_url(base_url, where);
  if (!url) return url.error();
  auto shared = std::make_shared<Shared>();
  shared->url = std::move(*url);
  shared->url_text = std::string(base_url);
  if (shared->url.tls) {
    auto tls = make_client_tls_context(options.tls.ca_file, options.tls.verify);
    if (!tls) return tls.error();
    shared->tls = std::move(*tls);
  }
  shared->options = std::move(options);
  auto impl = std::make_unique<Impl>();
  impl->shared = std::move(shared);
  return BlockingClient(std::move(impl));
}

BlockingClient BlockingClient::sibling() const {
  auto impl = std::make_unique<Impl>();
  impl->shared = impl_->shared;
  return BlockingClient(std::move(impl));
}

const HttpUrl& BlockingClient::url() const { return impl_->shared->url; }
const std::string& BlockingClient::url_text() const { return impl_->shared->url_text; }

Result<HttpReply> BlockingClient::request(std::string_view method, std::string_view target, std::string_view body,
                                          std::string_view content_type) {
  std::string copy(body);
  return request_lending_body(method, target, copy, content_type);
}

Result<HttpReply> BlockingClient::request_lending_body(std::string_view method, std::string_view target,
                                                       std::string& body, std::string_view content_type) {
  Impl& s = *impl_;
  const Shared& shared = *s.shared;
  const BlockingClientOptions& o = shared.options;
  std::string path = shared.url.base_path + std::string(target);
  if (path.empty()) path = "/";
  const std::string where = fmt::format("cannot {} {}://{}{}: ", method, shared.url.tls ? "https" : "http",
                                        shared.url.host_header, path);
  const http::verb verb = http::string_to_verb(boost::beast::string_view(method.data(), method.size()));
  if (verb == http::verb::unknown) return make_error(where + "unknown method");
  ClientRequest request{verb, path, 11};
  request.set(http::field::host, shared.url.host_header);
  request.set(http::field::user_agent, "inferscope");
  if (!o.accept.empty()) request.set(http::field::accept, o.accept);
  if (!content_type.empty()) request.set(http::field::content_type, std::string(content_type));
  request.body().swap(body);
  request.prepare_payload();
  // Every way out of here hands the body back.
  struct GiveBack {
    ClientRequest& request;
    std::string& body;
    ~GiveBack() { body.swap(request.body()); }
  } give_back{request, body};

  const Clock::time_point deadline = Clock::now() + o.timeout;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = s.connection != nullptr;
    if (!reused) {
      s.connection = ClientConnection::create(s.io.get_executor());
      ClientError error = ClientError::kNone;
      auto connect = [&]() -> asio::awaitable<void> {
        error = co_await s.connection->connect(shared.url, shared.tls.get(), left(deadline), nullptr);
      };
      drive(s.io, connect());
      if (error != ClientError::kNone) {
        std::string detail = s.connection->failure_detail();
        s.connection.reset();
        return make_error(where + cause(error, detail, o.timeout));
      }
    }
    Outcome out;
    drive(s.io, exchange(*s.connection, request, reused, o.max_body_bytes, deadline, out));
    if (out.error == ClientError::kNone && !out.too_large) {
      if (s.connection->reusable()) {
        s.connection->reset_for_reuse();
      } else {
        s.connection.reset();
      }
      return std::move(out.reply);
    }
    s.connection.reset();
    if (out.too_large) return make_error(where + fmt::format("answer larger than {} bytes", o.max_body_bytes));
    if (!out.retry) return make_error(where + cause(out.error, out.detail, o.timeout));
  }
  return make_error(where + "connection closed twice before the answer");
}

Result<HttpReply> blocking_http_request(std::string_view method, std::string_view url, std::string_view body,
                                        std::string_view content_type, milliseconds timeout, const TlsOptions& tls) {
  // The client's base is scheme and authority; the URL's own path and query are the target, kept
  // exactly (a base path loses its trailing slash).
  const std::size_t scheme_end = url.find("://");
  const std::size_t path_start = scheme_end == std::string_view::npos ? url.size() : url.find('/', scheme_end + 3);
  const std::string_view base = url.substr(0, path_start);
  const std::string_view target = path_start == std::string_view::npos ? "/" : url.substr(path_start);
  BlockingClientOptions options;
  options.timeout = timeout;
  options.tls = tls;
  auto client = BlockingClient::create(base, std::move(options), "the request URL");
  if (!client) return make_error(fmt::format("cannot {} {}: {}", method, url, client.error().message));
  return client->request(method, target, body, content_type);
}

}  // namespace inferscope::net
