#include "promapi/http_exchange.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <optional>

namespace inferscope::promapi::detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct HttpConnection::Impl {
  Endpoint endpoint;
  ClientOptions options;
  std::string accept;
  asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  std::string where(const std::string& path) const {
    return "http://" + endpoint.host + ":" + endpoint.port + endpoint.path_prefix + path;
  }

  // run drives the io_context until every pending operation finished (the stream's deadline
  // guarantees they do).
  void run() {
    io.restart();
    io.run();
  }

  beast::error_code connect() {
    beast::error_code result;
    tcp::resolver resolver(io);
    tcp::resolver::results_type endpoints;
    resolver.async_resolve(endpoint.host, endpoint.port, [&](beast::error_code ec, tcp::resolver::results_type r) {
      result = ec;
      endpoints = std::move(r);
    });
    run();
    if (result) return result;
    stream.emplace(io);
    stream->expires_after(options.timeout);
    stream->async_connect(endpoints, [&](beast::error_code ec, const tcp::endpoint&) { result = ec; });
    run();
    if (result) stream.reset();
    return result;
  }

  // once performs one exchange on the current connection; `sent_nothing_back` tells the caller
  // that a retry on a fresh connection is safe (the server closed a kept-alive connection).
  Result<HttpAnswer> once(const std::string& path, const std::string& form, bool& sent_nothing_back) {
    sent_nothing_back = false;
    http::request<http::string_body> req{form.empty() ? http::verb::get : http::verb::post,
                                         endpoint.path_prefix + path, 11};
    req.set(http::field::host, endpoint.host + ":" + endpoint.port);
    req.set(http::field::user_agent, "inferscope-promapi");
    req.set(http::field::accept, accept);
    if (!form.empty()) {
      req.set(http::field::content_type, "application/x-www-form-urlencoded");
      req.body() = form;
    }
    req.prepare_payload();
    beast::error_code write_ec, read_ec;
    stream->expires_after(options.timeout);
    http::async_write(*stream, req, [&](beast::error_code ec, std::size_t) { write_ec = ec; });
    run();
    http::response_parser<http::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    if (!write_ec) {
      stream->expires_after(options.timeout);
      http::async_read(*stream, buffer, parser, [&](beast::error_code ec, std::size_t) { read_ec = ec; });
      run();
    }
    beast::error_code ec = write_ec ? write_ec : read_ec;
    if (ec) {
      stream.reset();
      buffer.clear();
      sent_nothing_back = (ec == http::error::end_of_stream || ec == asio::error::connection_reset ||
                           ec == asio::error::broken_pipe || ec == asio::error::eof);
      if (ec == beast::error::timeout)
        return make_error("cannot query " + where(path) + ": no answer within " +
                          std::to_string(options.timeout.count()) + " ms");
      return make_error("cannot query " + where(path) + ": " + ec.message());
    }
    HttpAnswer answer{static_cast<int>(parser.get().result_int()), std::move(parser.get().body()),
                      std::string(parser.get()[http::field::content_type])};
    if (!parser.get().keep_alive()) stream.reset();
    return answer;
  }
};

HttpConnection::HttpConnection(Endpoint endpoint, ClientOptions options, std::string accept)
    : impl_(std::make_unique<Impl>()) {
  impl_->endpoint = std::move(endpoint);
  impl_->options = options;
  impl_->accept = std::move(accept);
}

HttpConnection::~HttpConnection() = default;

Result<HttpAnswer> HttpConnection::exchange(const std::string& path, const std::string& form) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = impl_->stream.has_value();
    if (!reused) {
      if (auto ec = impl_->connect())
        return make_error("cannot query " + impl_->where(path) + ": cannot connect: " + ec.message());
    }
    bool retry_safe = false;
    auto answer = impl_->once(path, form, retry_safe);
    if (answer || !(reused && retry_safe)) return answer;
  }
  return make_error("cannot query " + impl_->where(path) + ": connection closed twice");
}

}  // namespace inferscope::promapi::detail
