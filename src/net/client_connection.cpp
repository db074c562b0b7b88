// File: client_connection.cpp
// One beast::tcp_stream (optionally under an ssl_stream) whose per-operation expiry gives every
// step its own deadline. A response is read with a buffer_body parser so each read's bytes are
// handed back at once instead of being collected.
#include "net/client_connection.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <limits>
#include <optional>
#include <vector>

namespace inferscope::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string_view to_string(ClientError error) noexcept {
  switch (error) {
    case ClientError::kNone: return "none";
    case ClientError::kRefused: return "refused";
    case ClientError::kConnectTimeout: return "connect_timeout";
    case ClientError::kTls: return "tls";
    case ClientError::kReset: return "reset";
    case ClientError::kHeaderTimeout: return "header_timeout";
    case ClientError::kIdleTimeout: return "idle_timeout";
    case ClientError::kTruncated: return "truncated";
    case ClientError::kProtocol: return "protocol";
    case ClientError::kCancelled: return "cancelled";
  }
  return "none";
}

namespace {
constexpr std::size_t kReadChunk = 16 * 1024;
auto tok(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }
bool is_http_error(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_version).category();
}
}  // namespace

struct ClientConnection::Impl {
  asio::any_io_executor executor;
  std::optional<asio::ip::tcp::resolver> resolver;  // only while resolving, so cancel() can reach it
  std::string detail;                     // failure_detail()
  std::unique_ptr<beast::tcp_stream> tcp;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  // Beast reads max(512, free capacity) bytes at a time: without room reserved up front a stream
  // of small events is read ~512 bytes (two or three events) per syscall, where one read can take
  // everything the upstream has sent since the last one.
  beast::flat_buffer buffer = [] {
    beast::flat_buffer b;
    b.reserve(kReadChunk);
    return b;
  }();
  std::optional<http::response_parser<http::buffer_body>> parser;
  std::vector<char> chunk = std::vector<char>(kReadChunk);
  bool cancelled = false;
  bool failed = false;
  bool received = false;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }

  ClientError fail(const error_code& ec, ClientError on_timeout, bool in_body) {
    failed = true;
    detail = ec.message();
    if (cancelled || ec == asio::error::operation_aborted) return ClientError::kCancelled;
    if (ec == beast::error::timeout) return on_timeout;
    if (in_body) {
      if (is_http_error(ec) && ec != http::error::partial_message && ec != http::error::end_of_stream) {
        return ClientError::kProtocol;
      }
      return ClientError::kTruncated;
    }
    if (is_http_error(ec) && ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return ClientError::kProtocol;
    }
    return ClientError::kReset;
  }

  // send starts a new response and runs `write(stream, token)` on the TLS or the plain stream.
  template <class Write>
  asio::awaitable<ClientError> send(Write write, std::chrono::milliseconds timeout) {
    new_parser();
    error_code ec;
    lowest().expires_after(timeout);
    if (tls) {
      co_await write(*tls, tok(ec));
    } else {
      co_await write(*tcp, tok(ec));
    }
    if (ec) co_return fail(ec, ClientError::kReset, false);
    co_return ClientError::kNone;
  }

  void new_parser() {
    parser.emplace();
    parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    received = false;
  }
};

ClientConnection::ClientConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientConnection::~ClientConnection() = default;

std::unique_ptr<ClientConnection> ClientConnection::create(asio::any_io_executor executor) {
  auto impl = std::make_unique<Impl>();
  impl->executor = executor;
  impl->tcp = std::make_unique<beast::tcp_stream>(executor);
  return std::unique_ptr<ClientConnection>(new ClientConnection(std::move(impl)));
}

asio::awaitable<ClientError> ClientConnection::open(asio::any_io_executor executor, const HttpUrl& url,
                                                    ssl::context* tls, std::chrono::milliseconds timeout,
                                                    std::unique_ptr<ClientConnection>& out) {
  std::unique_ptr<ClientConnection> connection = create(executor);
  const ClientError error = co_await connection->connect(url, tls, timeout, nullptr);
  if (error == ClientError::kNone) out = std::move(connection);
  co_return error;
}

asio::awaitable<ClientError> ClientConnection::connect(const HttpUrl& url, ssl::context* tls,
                                                       std::chrono::milliseconds timeout, ConnectPhases* phases) {
  Impl& s = *impl_;
  auto mark = [phases](std::chrono::steady_clock::time_point ConnectPhases::*step) {
    if (phases != nullptr) phases->*step = std::chrono::steady_clock::now();
  };
  auto give_up = [&s](ClientError error, const error_code& ec) {
    s.failed = true;
    s.detail = ec.message();
    return s.cancelled ? ClientError::kCancelled : error;
  };
  mark(&ConnectPhases::started);
  if (s.cancelled) co_return ClientError::kCancelled;
  s.tcp->expires_after(timeout);
  error_code ec;
  std::vector<tcp::endpoint> endpoints;
  if (auto address = asio::ip::make_address(url.host, ec); !ec) {
    endpoints.emplace_back(address, static_cast<unsigned short>(std::stoi(url.port)));
  } else {
    ec = {};
    s.resolver.emplace(s.executor);
    auto results = co_await s.resolver->async_resolve(url.host, url.port, tok(ec));
    s.resolver.reset();
    if (ec || s.cancelled) co_return give_up(ClientError::kRefused, ec);
    for (const auto& r : results) endpoints.push_back(r.endpoint());
  }
  mark(&ConnectPhases::resolved);
  co_await s.tcp->async_connect(endpoints, tok(ec));
  mark(&ConnectPhases::connected);
  if (ec || s.cancelled) {
    co_return give_up(ec == beast::error::timeout                ? ClientError::kConnectTimeout
                      : ec == asio::error::connection_refused ? ClientError::kRefused
                                                               : ClientError::kReset,
                      ec);
  }
  s.tcp->socket().set_option(tcp::no_delay(true), ec);
  if (url.tls) {
    if (tls == nullptr) co_return give_up(ClientError::kTls, asio::error::no_protocol_option);
    s.tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*s.tcp), *tls);
    s.tcp.reset();
    SSL_set_tlsext_host_name(s.tls->native_handle(), url.host.c_str());
    s.tls->set_verify_callback(ssl::host_name_verification(url.host));
    co_await s.tls->async_handshake(ssl::stream_base::client, tok(ec));
    mark(&ConnectPhases::handshaken);
    if (ec || s.cancelled) {
      co_return give_up(ec == beast::error::timeout ? ClientError::kConnectTimeout : ClientError::kTls, ec);
    }
  }
  s.lowest().expires_never();
  co_return ClientError::kNone;
}

asio::awaitable<ClientError> ClientConnection::write(const ClientRequest& request, std::chrono::milliseconds timeout) {
  return impl_->send(
      [&request](auto& stream, auto token) {
        return http::async_write(stream, const_cast<ClientRequest&>(request), std::move(token));
      },
      timeout);
}

asio::awaitable<ClientError> ClientConnection::write_raw(std::string_view request,
                                                         std::chrono::milliseconds timeout) {
  return impl_->send(
      [request](auto& stream, auto token) { return asio::async_write(stream, asio::buffer(request), std::move(token)); },
      timeout);
}

asio::awaitable<ClientError> ClientConnection::read_head(std::chrono::milliseconds timeout) {
  Impl& s = *impl_;
  error_code ec;
  s.lowest().expires_after(timeout);
  if (s.tls) {
    co_await http::async_read_header(*s.tls, s.buffer, *s.parser, tok(ec));
  } else {
    co_await http::async_read_header(*s.tcp, s.buffer, *s.parser, tok(ec));
  }
  if (ec) {
    if (s.buffer.size() > 0) s.received = true;
    co_return s.fail(ec, ClientError::kHeaderTimeout, false);
  }
  s.received = true;
  co_return ClientError::kNone;
}

const ClientResponseHead& ClientConnection::head() const { return impl_->parser->get().base(); }

asio::awaitable<ClientError> ClientConnection::read_body_some(std::string& out, std::chrono::milliseconds idle) {
  std::string_view read;
  const ClientError error = co_await read_body_view(read, idle);
  out.append(read);
  co_return error;
}

asio::awaitable<ClientError> ClientConnection::read_body_view(std::string_view& out, std::chrono::milliseconds idle) {
  Impl& s = *impl_;
  out = {};
  if (s.parser->is_done()) co_return ClientError::kNone;
  auto& body = s.parser->get().body();
  body.data = s.chunk.data();
  body.size = s.chunk.size();
  error_code ec;
  s.lowest().expires_after(idle);
  if (s.tls) {
    co_await http::async_read_some(*s.tls, s.buffer, *s.parser, tok(ec));
  } else {
    co_await http::async_read_some(*s.tcp, s.buffer, *s.parser, tok(ec));
  }
  if (ec == http::error::need_buffer) ec = {};
  // The read above returns after one chunk of a chunked body; parse the chunks that arrived with
  // it too, so that events streamed together reach the caller (and its client) in one piece.
  // Only bytes already here: nothing waits for more.
  while (!ec && s.buffer.size() > 0 && !s.parser->is_done() && s.parser->get().body().size > 0) {
    const std::size_t used = s.parser->put(s.buffer.data(), ec);
    s.buffer.consume(used);
    if (ec == http::error::need_more || ec == http::error::need_buffer) ec = {};
    if (used == 0) break;
  }
  out = std::string_view(s.chunk.data(), s.chunk.size() - s.parser->get().body().size);
  if (ec) co_return s.fail(ec, ClientError::kIdleTimeout, true);
  co_return ClientError::kNone;
}

bool ClientConnection::done() const { return impl_->parser && impl_->parser->is_done(); }

bool ClientConnection::reusable() const {
  const Impl& s = *impl_;
  return !s.cancelled && !s.failed && s.parser && s.parser->is_done() && s.parser->get().keep_alive() &&
         s.buffer.size() == 0;
}

bool ClientConnection::bytes_received() const { return impl_->received; }

const std::string& ClientConnection::failure_detail() const { return impl_->detail; }

void ClientConnection::cancel() {
  Impl& s = *impl_;
  if (s.cancelled) return;
  s.cancelled = true;
  if (s.resolver) s.resolver->cancel();
  error_code ec;
  s.lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
  s.lowest().socket().close(ec);
}

void ClientConnection::reset_for_reuse() {
  impl_->lowest().expires_never();
  impl_->parser.reset();
}

Result<std::shared_ptr<ssl::context>> make_client_tls_context(const std::string& ca_file, bool verify) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  error_code ec;
  context->set_default_verify_paths(ec);
  if (ec) return make_error("cannot load CA certificates from the system store: " + ec.message());
  if (!ca_file.empty()) {
    context->load_verify_file(ca_file, ec);
    if (ec) return make_error("cannot load CA certificates from " + ca_file + ": " + ec.message());
  }
  context->set_verify_mode(verify ? ssl::verify_peer : ssl::verify_none);
  return context;
}

}  // namespace inferscope::net
