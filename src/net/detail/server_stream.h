// File: detail/server_stream.h
// ServerStream is the byte stream under one server Connection: the accepted TCP socket, or TLS
// over it when the server was started with certificates. It is an Asio AsyncReadStream and
// AsyncWriteStream, so Beast's reads and writes and asio::async_write take it as they take a
// socket. DO NOT INCLUDE THIS FILE DIRECTLY outside src/net.
// Not thread-safe: used on its connection's executor only.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <cstddef>
#include <memory>

namespace inferscope::net::detail {

class ServerStream {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;
  using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>;

  // ServerStream owns `socket`; with `tls` (the server's context, which must outlive it) every
  // byte goes through TLS once handshake() has succeeded.
  ServerStream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls) : socket_(std::move(socket)) {
    if (tls != nullptr) tls_ = std::make_unique<TlsStream>(socket_, *tls);
  }

  executor_type get_executor() { return socket_.get_executor(); }
  // socket is the TCP socket (the lowest layer): addresses, options, wait, cancel, close.
  boost::asio::ip::tcp::socket& socket() { return socket_; }
  bool tls() const { return tls_ != nullptr; }

  // async_handshake runs the server side of the TLS handshake (tls() only).
  template <class Token>
  auto async_handshake(Token&& token) {
    return tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Token>(token));
  }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_) {
            tls_->async_read_some(b, std::move(handler));
          } else {
            socket_.async_read_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_) {
            tls_->async_write_some(b, std::move(handler));
          } else {
            socket_.async_write_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

 private:
  boost::asio::ip::tcp::socket socket_;
  std::unique_ptr<TlsStream> tls_;  // refers to socket_
};

}  // namespace inferscope::net::detail
