// File: router.cpp
// Route lookup is a linear scan: an up/dashboard server has tens of routes, and a scan over them
// costs less than the request parse that precedes it.
#include "net/router.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/connection.h"

namespace inferscope::net {
namespace asio = boost::asio;
namespace http = boost::beast::http;

std::string_view Request::header(std::string_view name) const {
  const auto* request = static_cast<const HttpRequest*>(native);
  if (request == nullptr) return {};
  auto it = request->find(boost::beast::string_view(name.data(), name.size()));
  if (it == request->end()) return {};
  return to_std(it->value());
}

Response Response::json(std::string body, int status) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::text(std::string body, int status) {
  Response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

Response Response::error(const ApiError& error) {
  Response r = json(api_error_body(error), error.status);
  if (error.retry_after) r.headers.emplace_back("Retry-After", std::to_string(*error.retry_after));
  return r;
}

namespace {

class ConnectionEventStream final : public EventStream {
 public:
  explicit ConnectionEventStream(Connection& c) : c_(c) {}
  asio::awaitable<bool> send(std::string_view bytes) override { co_return co_await c_.write_stream_data(bytes); }
  bool client_gone() const override { return c_.peer_closed(); }
  asio::any_io_executor executor() override { return c_.executor(); }
  bool draining() const override { return c_.draining(); }

 private:
  Connection& c_;
};

asio::awaitable<bool> write_response(Connection& c, const HttpRequest& request, const Response& r) {
  HttpResponse response{static_cast<http::status>(r.status), request.version()};
  response.set(http::field::content_type, r.content_type);
  for (const auto& [name, value] : r.headers) response.set(name, value);
  response.body() = r.body;
  co_return co_await c.send(response);
}

asio::awaitable<bool> run_stream(Connection& c, const HttpRequest& request, const Request& view,
                                 const StreamHandler& handler) {
  if (!co_await c.write_stream_head(request)) co_return false;
  AsyncSignal signal(c.executor());
  c.watch_peer(&signal);
  ConnectionEventStream stream(c);
  co_await handler(view, stream);
  co_await c.stop_watching_peer(signal);
  if (c.peer_closed()) co_return false;
  co_return co_await c.write_stream_end();
}

}  // namespace

void Router::insert(Route route) {
  for (Route& existing : routes_) {
    if (existing.method == route.method && existing.path == route.path && existing.prefix == route.prefix) {
      existing = std::move(route);
      return;
    }
  }
  routes_.push_back(std::move(route));
}

void Router::add(std::string method, std::string path, PlainHandler handler) {
  insert(Route{std::move(method), std::move(path), false, std::move(handler), {}, {}});
}

void Router::add_async(std::string method, std::string path, AsyncHandler handler) {
  insert(Route{std::move(method), std::move(path), false, {}, std::move(handler), {}});
}

void Router::add_prefix(std::string method, std::string prefix, PlainHandler handler) {
  insert(Route{std::move(method), std::move(prefix), true, std::move(handler), {}, {}});
}

void Router::add_stream(std::string path, StreamHandler handler) {
  insert(Route{"GET", std::move(path), false, {}, {}, std::move(handler)});
}

RequestHandler Router::handler() const {
  return [this](Connection& c) { return dispatch(c); };
}

asio::awaitable<bool> Router::dispatch(Connection& c) const {
  const HttpRequest& request = c.request();
  Request view;
  view.method = to_std(request.method_string());
  view.target = to_std(request.target());
  const std::size_t q = view.target.find('?');
  view.path = view.target.substr(0, q);
  if (q != std::string_view::npos) view.query = view.target.substr(q + 1);
  view.body = request.body();
  view.peer_loopback = c.peer_is_loopback();
  view.native = &request;

  const Route* match = nullptr;
  std::string allow;
  for (const Route& route : routes_) {
    const bool path_ok = route.prefix ? view.path.starts_with(route.path) : view.path == route.path;
    if (!path_ok) continue;
    if (route.method == view.method) {
      if (match == nullptr || (match->prefix && !route.prefix) || route.path.size() > match->path.size()) match = &route;
    } else if (allow.find(route.method) == std::string::npos) {
      allow += allow.empty() ? route.method : ", " + route.method;
    }
  }
  if (match == nullptr && !allow.empty()) {
    const ApiError error = ApiError::method_not_allowed("cannot serve method " + std::string(view.method) + " on " +
                                                        std::string(view.path) + ": use " + allow);
    co_return co_await c.send_error(error, request, allow);
  }
  if (match == nullptr) {
    const ApiError error = ApiError::not_found("cannot find route " + std::string(view.path));
    co_return co_await c.send_error(error, request);
  }
  if (match->stream) co_return co_await run_stream(c, request, view, match->stream);
  // Plain statements around co_await: g++ 12 mishandles temporaries in conditional co_awaits.
  Response response;
  if (match->plain) {
    response = match->plain(view);
  } else {
    response = co_await match->async(view);
  }
  const bool keep = co_await write_response(c, request, response);
  co_return keep;
}

}  // namespace inferscope::net
