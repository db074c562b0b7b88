// MetricsServer: one accept coroutine plus one coroutine per connection, all on a single-threaded
// io_context run by the server's own thread, so connection bookkeeping needs no locks. Every read
// and write runs under a tcp_stream deadline; each connection's errors end that connection only.
#include <utility>  // first: Boost 1.74's asio/awaitable.hpp uses std::exchange without including it

#include <inferscope/metrics/metrics_server.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

namespace inferscope::metrics {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

constexpr const char* kServerName = "inferscope";
// A scrape request is a request line and a few headers; anything bigger is not a scraper.
constexpr std::uint32_t kMaxHeaderBytes = 16 * 1024;
constexpr std::uint64_t kMaxBodyBytes = 4 * 1024;
// Pause after a failed accept (EMFILE, ENOBUFS) so a persistent failure does not spin the thread.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(50);
constexpr std::string_view kRefusal =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";

std::string_view to_std(boost::beast::string_view view) { return {view.data(), view.size()}; }

// finish sets Content-Length and, for HEAD, drops the body (the length stays: RFC 9110 9.3.2).
Response finish(Response response, const Request& request) {
  response.set(http::field::server, kServerName);
  response.keep_alive(request.keep_alive());
  response.prepare_payload();
  if (request.method() == http::verb::head) response.body().clear();
  return response;
}

Response plain(const Request& request, http::status status, std::string text) {
  Response response{status, request.version()};
  response.set(http::field::content_type, "text/plain; charset=utf-8");
  response.body() = std::move(text);
  return finish(std::move(response), request);
}

}  // namespace

struct MetricsServer::Impl {
  Impl(Registry& registry_in, MetricsServerOptions options_in)
      : registry(registry_in), options(std::move(options_in)) {}

  Registry& registry;
  const MetricsServerOptions options;
  // Declared before ioc: coroutine frames destroyed with ioc still unregister from these.
  std::unordered_set<beast::tcp_stream*> live;  // serving thread only
  // Written on the serving thread only, under connections_mutex so tests can wait for a close.
  std::size_t connections = 0;  // includes not-yet-started ones
  mutable std::mutex connections_mutex;
  mutable std::condition_variable connections_closed;
  bool stopping = false;                        // serving thread only
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::uint16_t port = 0;
  std::string address;
  std::mutex stop_mutex;
  std::thread thread;

  Response scrape(const Request& request);
  Response respond(const Request& request);
  asio::awaitable<void> serve(tcp::socket socket);
  asio::awaitable<void> accept_loop();
  void close_all();
};

Response MetricsServer::Impl::scrape(const Request& request) {
  ScrapeResponse scraped;
  try {
    scraped = render_scrape(registry, to_std(request[http::field::accept]),
                            to_std(request[http::field::accept_encoding]));
  } catch (const std::exception& e) {
    return plain(request, http::status::internal_server_error, std::string("cannot render metrics: ") + e.what() + "\n");
  } catch (...) {
    return plain(request, http::status::internal_server_error, "cannot render metrics: unknown exception\n");
  }
  Response response{http::status::ok, request.version()};
  response.set(http::field::content_type, scraped.content_type);
  if (scraped.gzipped) response.set(http::field::content_encoding, "gzip");
  response.set(http::field::vary, "Accept, Accept-Encoding");
  response.body() = std::move(scraped.body);
  return finish(std::move(response), request);
}

Response MetricsServer::Impl::respond(const Request& request) {
  std::string_view target = to_std(request.target());
  target = target.substr(0, target.find('?'));
  if (target != options.path) return plain(request, http::status::not_found, "not found\n");
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    Response response = plain(request, http::status::method_not_allowed, "method not allowed\n");
    response.set(http::field::allow, "GET, HEAD");
    return response;
  }
  return scrape(request);
}

asio::awaitable<void> MetricsServer::Impl::serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  live.insert(&stream);
  struct Unregister {
    Impl& impl;
    beast::tcp_stream* stream;
    ~Unregister() {
      impl.live.erase(stream);
      {
        std::lock_guard lock(impl.connections_mutex);
        --impl.connections;
      }
      impl.connections_closed.notify_all();
    }
  } unregister{*this, &stream};
  try {
    beast::flat_buffer buffer;
    error_code ec;
    while (!stopping) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(kMaxHeaderBytes);
      parser.body_limit(kMaxBodyBytes);
      stream.expires_after(options.read_timeout);  // also bounds the keep-alive idle wait
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      // Malformed or oversized requests get a 400 and a close; timeouts and closes just end.
      const bool malformed = ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
                             ec != http::error::end_of_stream;
      if (ec && !malformed) break;
      Response response = malformed ? plain(parser.get(), http::status::bad_request, "bad request\n")
                                    : respond(parser.get());
      if (malformed) response.keep_alive(false);
      stream.expires_after(options.write_timeout);
      co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
      if (ec || !response.keep_alive()) break;
    }
  } catch (...) {
    // Only std::bad_alloc can get here; dropping this connection is the whole recovery.
  }
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> MetricsServer::Impl::accept_loop() {
  asio::steady_timer backoff(ioc);
  while (acceptor.is_open()) {
    error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (stopping || ec == asio::error::operation_aborted) co_return;
    if (ec) {
      backoff.expires_after(kAcceptBackoff);
      co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (connections >= options.max_connections) {
      // A fresh socket's send buffer is empty, so this non-blocking write cannot stall the loop.
      socket.non_blocking(true, ec);
      socket.write_some(asio::buffer(kRefusal.data(), kRefusal.size()), ec);
      socket.close(ec);
      continue;
    }
    {
      std::lock_guard lock(connections_mutex);
      ++connections;
    }
    asio::co_spawn(ioc, serve(std::move(socket)), asio::detached);
  }
}

void MetricsServer::Impl::close_all() {
  stopping = true;
  error_code ignored;
  acceptor.close(ignored);
  for (beast::tcp_stream* stream : live) stream->close();  // pending reads/writes end with an error
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(Registry& registry, MetricsServerOptions options) {
  const bool v6 = options.bind_address.find(':') != std::string::npos;
  const std::string where = (v6 ? "[" + options.bind_address + "]" : options.bind_address) + ":" +
                            std::to_string(options.port);
  auto fail = [&where](const std::string& cause) {
    return make_error("cannot listen for metrics scrapes on " + where + ": " + cause);
  };
  if (options.path.empty() || options.path.front() != '/') return fail("path must start with '/'");
  if (options.max_connections == 0) return fail("max_connections must be at least 1");
  if (options.read_timeout.count() <= 0 || options.write_timeout.count() <= 0) return fail("timeouts must be > 0");
  error_code ec;
  const asio::ip::address address = asio::ip::make_address(options.bind_address, ec);
  if (ec) return fail("not a numeric IP address");

  auto impl = std::make_unique<Impl>(registry, std::move(options));
  const tcp::endpoint endpoint(address, impl->options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail(ec.message());
  const tcp::endpoint bound = impl->acceptor.local_endpoint(ec);
  if (ec) return fail(ec.message());
  impl->port = bound.port();
  impl->address = bound.address().to_string();

  asio::co_spawn(impl->ioc, impl->accept_loop(), asio::detached);
  impl->thread = std::thread([&ioc = impl->ioc] {
    // Handlers catch their own exceptions; this loop is the last line so the thread never dies.
    for (;;) {
      try {
        ioc.run();
        return;
      } catch (...) {
      }
    }
  });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() { stop(); }

std::uint16_t MetricsServer::port() const noexcept { return impl_->port; }

std::string MetricsServer::local_address() const { return impl_->address; }

void MetricsServer::stop() {
  std::lock_guard lock(impl_->stop_mutex);
  if (!impl_->thread.joinable()) return;
  // Closing on the serving thread avoids racing its handlers; run() then returns once every
  // coroutine has seen its aborted operation and finished.
  asio::post(impl_->ioc, [impl = impl_.get()] { impl->close_all(); });
  impl_->thread.join();
}

bool MetricsServer::wait_connections_at_most_for_test(std::size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(impl_->connections_mutex);
  return impl_->connections_closed.wait_for(lock, limit, [&] { return impl_->connections <= count; });
}

}  // namespace inferscope::metrics
