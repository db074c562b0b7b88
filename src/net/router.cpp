// File: router.cpp
// Route lookup is a linear scan: an up/dashboard server has tens of routes, and a scan over them
// costs less than the request parse that precedes it.
#include "net/router.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <spdlog/spdlog.h>

#include <optional>

#include "net/connection.h"
#include "net/detail/server_core.h"
#include "net/worker_pool.h"

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
  // Set-Cookie is the one header a response repeats (one line per cookie, RFC 6265 section 3);
  // the others replace what is there.
  for (const auto& [name, value] : r.headers) {
    if (boost::beast::iequals(name, "Set-Cookie")) {
      response.insert(name, value);
    } else {
      response.set(name, value);
    }
  }
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

struct Router::Lane {
  Lane(const std::string& name, LaneOptions o) : options(o), pool(name, o.threads, o.max_waiting) {}
  LaneOptions options;
  WorkerPool pool;
};

namespace {

// run_on_lane runs `handler(view)` on the lane's workers and resumes on the connection's io
// thread with its answer; nullopt when the lane is full (or the server stopped before it ran).
// The awaiting coroutine (and so the Connection and its request, which `view` points into) stays
// alive until the job hands the answer back; the tracked executor keeps the io thread running
// for it, and ServerCore counts the job so stop() outlives it.
asio::awaitable<std::optional<Response>> run_on_lane(Connection& c, WorkerPool& pool, const PlainHandler& handler,
                                                     const Request& view) {
  detail::ServerCore& core = c.core();
  asio::any_io_executor io = c.executor();
  auto initiate = [&core, &pool, &handler, &view, io](auto completion) {
    using Completion = decltype(completion);
    auto shared = std::make_shared<Completion>(std::move(completion));
    auto work = asio::prefer(io, asio::execution::outstanding_work.tracked);
    core.blocking_started();
    auto job = [shared, work, &core, &handler, view]() mutable {
      std::optional<Response> answer;
      if (!core.stopped.load()) {
        try {
          answer = handler(view);
        } catch (const std::exception& e) {
          spdlog::error("{}: blocking handler of {} threw: {}", core.options.log_name, view.path, e.what());
          answer = Response::error(ApiError::server_error("cannot answer " + std::string(view.path) + ": internal error"));
        }
      }
      asio::post(work, [shared, answer = std::move(answer)]() mutable { (*shared)(std::move(answer)); });
      // Drop this job's hold on the io_context before stop() may see the count reach zero and
      // destroy it (the job object itself is destroyed later, on the worker).
      work = asio::any_io_executor();
      shared.reset();
      core.blocking_finished();
    };
    if (!pool.try_submit(std::move(job))) {
      core.blocking_finished();
      asio::post(io, [shared]() mutable { (*shared)(std::optional<Response>()); });
    }
  };
  co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(std::optional<Response>)>(
      std::move(initiate), asio::use_awaitable);
}

}  // namespace

std::shared_ptr<Router::Lane> Router::lane(const std::string& name) {
  for (const auto& existing : lanes_) {
    if (existing->pool.name() == name) return existing;
  }
  lanes_.push_back(std::make_shared<Lane>(name, LaneOptions{}));
  return lanes_.back();
}

std::size_t Router::lane_busy(const std::string& name) const {
  for (const auto& existing : lanes_) {
    if (existing->pool.name() == name) return existing->pool.busy();
  }
  return 0;
}

void Router::set_lane(const std::string& name, LaneOptions options) {
  for (const auto& existing : lanes_) {
    if (existing->pool.name() == name) return;
  }
  lanes_.push_back(std::make_shared<Lane>(name, options));
}

void Router::add_blocking(std::string method, std::string path, PlainHandler handler, const std::string& lane_name) {
  insert(Route{std::move(method), std::move(path), false, std::move(handler), {}, {}, lane(lane_name)});
}

void Router::add_prefix_blocking(std::string method, std::string prefix, PlainHandler handler,
                                 const std::string& lane_name) {
  insert(Route{std::move(method), std::move(prefix), true, std::move(handler), {}, {}, lane(lane_name)});
}

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
  insert(Route{std::move(method), std::move(path), false, std::move(handler), {}, {}, {}});
}

void Router::add_async(std::string method, std::string path, AsyncHandler handler) {
  insert(Route{std::move(method), std::move(path), false, {}, std::move(handler), {}, {}});
}

void Router::add_prefix(std::string method, std::string prefix, PlainHandler handler) {
  insert(Route{std::move(method), std::move(prefix), true, std::move(handler), {}, {}, {}});
}

void Router::add_stream(std::string path, StreamHandler handler) {
  insert(Route{"GET", std::move(path), false, {}, {}, std::move(handler), {}});
}

RequestHandler Router::handler() const {
  return [this](Connection& c) { return dispatch(c); };
}

RequestHandler Router::handler(RouteGuard guard, const std::string& guard_lane) {
  if (!guard) return handler();
  auto shared = std::make_shared<const Guard>(Guard{std::move(guard), guard_lane.empty() ? nullptr : lane(guard_lane)});
  return [this, shared](Connection& c) { return dispatch_guarded(c, shared.get()); };
}

std::vector<RouteInfo> Router::routes() const {
  std::vector<RouteInfo> out;
  out.reserve(routes_.size());
  for (const Route& route : routes_) out.push_back(info_of(route));
  return out;
}

RouteInfo Router::info_of(const Route& route) {
  RouteInfo info{route.method, route.path, route.prefix, RouteInfo::Kind::plain};
  if (route.stream) {
    info.kind = RouteInfo::Kind::stream;
  } else if (route.async) {
    info.kind = RouteInfo::Kind::async;
  } else if (route.lane) {
    info.kind = RouteInfo::Kind::blocking;
  }
  return info;
}

asio::awaitable<bool> Router::dispatch_guarded(Connection& c, const Guard* guard) const {
  const HttpRequest& request = c.request();
  Request view;
  view.method = to_std(request.method_string());
  view.target = to_std(request.target());
  const std::size_t q = view.target.find('?');
  view.path = view.target.substr(0, q);
  if (q != std::string_view::npos) view.query = view.target.substr(q + 1);
  view.body = request.body();
  view.peer_loopback = c.peer_is_loopback();
  view.client_ip = c.peer_address();
  view.tls = c.is_tls();
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
  // Plain statements around co_await: g++ 12 mishandles temporaries in conditional co_awaits.
  Response response;
  std::optional<Response> refused;
  if (guard != nullptr && guard->lane) {
    // On the lane, the guard's answer travels as a Response; status 0 stands for "let it through".
    const RouteInfo info = info_of(*match);
    const PlainHandler check = [guard, &info](const Request& r) {
      std::optional<Response> answer = guard->check(r, info);
      return answer ? std::move(*answer) : Response{.status = 0};
    };
    std::optional<Response> answer = co_await run_on_lane(c, guard->lane->pool, check, view);
    if (!answer) {
      const ApiError error = ApiError::overloaded("cannot serve " + std::string(view.path) +
                                                      ": too many requests wait for their access check; retry later",
                                                  guard->lane->options.retry_after_s);
      refused = Response::error(error);
    } else if (answer->status != 0) {
      refused = std::move(*answer);
    }
  } else if (guard != nullptr) {
    refused = guard->check(view, info_of(*match));
  }
  if (refused) {
    response = std::move(*refused);
  } else if (match->stream) {
    co_return co_await run_stream(c, request, view, match->stream);
  } else if (match->lane) {
    std::optional<Response> answer = co_await run_on_lane(c, match->lane->pool, match->plain, view);
    if (answer) {
      response = std::move(*answer);
    } else {
      const ApiError error = ApiError::overloaded("cannot serve " + std::string(view.path) + ": too many requests wait for " +
                                                      match->lane->pool.name() + " handlers; retry later",
                                                  match->lane->options.retry_after_s);
      response = Response::error(error);
    }
  } else if (match->plain) {
    response = match->plain(view);
  } else {
    response = co_await match->async(view);
  }
  const bool keep = co_await write_response(c, request, response);
  co_return keep;
}

}  // namespace inferscope::net
