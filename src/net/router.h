// File: router.h
// Router maps (method, path) to handlers for an HttpServer without exposing Beast: plain handlers
// (Request -> Response), coroutine handlers (for handlers that await I/O) and event-stream
// handlers (SSE: write events as they happen). Unknown paths get 404, wrong methods 405 with
// Allow, both as OpenAI error JSON. Example:
//   router.get("/api/status", [](const net::Request&) { return net::Response::json(R"({"ok":true})"); });
//   router.post("/hooks/alertmanager", on_webhook); router.get_prefix("/ui/", serve_static);
//   auto server = net::HttpServer::start(options, router.handler());
// Blocking handlers (a database fsync, a synchronous query of another server) go on a blocking
// route: they run on a bounded worker pool ("lane"), never on an io thread; a full lane answers
// 503 + Retry-After at once. Routes that stall on different dependencies get different lanes:
//   router.set_lane("prometheus", {.threads = 2, .max_waiting = 16});
//   router.add_blocking("GET", "/api/status", status_handler, "prometheus");
// Thread-safety: add routes before start(); afterwards the Router is read-only and shared by
// every io thread. Plain handlers run on an io thread: they must not throw or block for long.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/api_error.h"
#include "net/http_server.h"

namespace inferscope::net {

class WorkerPool;

// LaneOptions sizes one lane of blocking routes: its worker threads and how many requests may wait
// for one; a request beyond that gets 503 overloaded with Retry-After `retry_after_s`.
struct LaneOptions {
  unsigned threads = 2;
  std::size_t max_waiting = 16;
  int retry_after_s = 1;
};

// Request is a read-only view of one HTTP request, valid only during the handler call.
struct Request {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // as sent: path plus query
  std::string_view path;    // target without the query
  std::string_view query;   // after '?', or empty
  std::string_view body;
  bool peer_loopback = false;
  std::string_view client_ip;  // the peer's IP address as text ("127.0.0.1", "2001:db8::1")
  bool tls = false;            // the request came over TLS
  // header returns the value of header `name` (case-insensitive), or empty.
  std::string_view header(std::string_view name) const;
  const void* native = nullptr;  // the Beast request behind it (router.cpp only)
};

// Response is a whole answer; Content-Length, Server and keep-alive are set by the server.
struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  // json builds a 200 (or `status`) answer with an application/json body.
  static Response json(std::string body, int status = 200);
  // text builds a text/plain answer.
  static Response text(std::string body, int status = 200);
  // error builds the OpenAI error JSON answer of `error` (Retry-After included when set).
  static Response error(const ApiError& error);
};

// EventStream writes one streamed response (Server-Sent Events by default); each send() goes to
// the client at once. Valid only during its handler.
class EventStream {
 public:
  // send writes `bytes` (e.g. "data: {...}\n\n") as one chunk. False: the client is gone.
  virtual boost::asio::awaitable<bool> send(std::string_view bytes) = 0;
  // client_gone reports whether the client hung up (checked without writing).
  virtual bool client_gone() const = 0;
  // executor is the connection's io thread executor (for timers in the handler).
  virtual boost::asio::any_io_executor executor() = 0;
  // draining reports whether the server is shutting down: end the stream soon.
  virtual bool draining() const = 0;

 protected:
  ~EventStream() = default;
};

// RouteInfo describes one registered route (Router::routes(), and what a RouteGuard is asked
// about): its method, its path (a prefix when `prefix`), and how it is answered.
struct RouteInfo {
  enum class Kind { plain, async, stream, blocking };
  std::string method;
  std::string path;
  bool prefix = false;
  Kind kind = Kind::plain;
};

// RouteGuard runs before the handler of every matched route of a server started with
// Router::handler(guard): nullopt lets the request through, a Response answers it instead (401,
// 403, 429...). It runs on the io thread, so it must not throw or block for long. Requests that
// match no route get their 404/405 without it.
using RouteGuard = std::function<std::optional<Response>(const Request&, const RouteInfo&)>;

using PlainHandler = std::function<Response(const Request&)>;
using AsyncHandler = std::function<boost::asio::awaitable<Response>(const Request&)>;
using StreamHandler = std::function<boost::asio::awaitable<void>(const Request&, EventStream&)>;

class Router {
 public:
  // get/post/add register an exact path; add_prefix matches every path starting with `prefix`.
  // A later registration of the same method and path replaces the earlier one.
  void get(std::string path, PlainHandler handler) { add("GET", std::move(path), std::move(handler)); }
  void post(std::string path, PlainHandler handler) { add("POST", std::move(path), std::move(handler)); }
  void add(std::string method, std::string path, PlainHandler handler);
  void add_async(std::string method, std::string path, AsyncHandler handler);
  void add_prefix(std::string method, std::string prefix, PlainHandler handler);
  // add_blocking registers an exact path whose plain handler runs on the worker pool of `lane`
  // (created with default LaneOptions unless set_lane came first), off the io threads. The
  // Request view stays valid during the call; the handler must not throw.
  void add_blocking(std::string method, std::string path, PlainHandler handler, const std::string& lane = "default");
  void get_blocking(std::string path, PlainHandler handler, const std::string& lane = "default") {
    add_blocking("GET", std::move(path), std::move(handler), lane);
  }
  // add_prefix_blocking is add_prefix on a lane.
  void add_prefix_blocking(std::string method, std::string prefix, PlainHandler handler,
                           const std::string& lane = "default");
  // set_lane creates lane `name` with `options` (starting its threads); call it before the routes
  // that use it. Setting an existing lane again is an error of the caller and keeps the first.
  void set_lane(const std::string& name, LaneOptions options);

  // lane_busy returns the requests running plus waiting on lane `name` (0 for an unknown lane).
  std::size_t lane_busy(const std::string& name) const;

  // add_stream registers a GET route answered with a `text/event-stream` that `handler` writes.
  void add_stream(std::string path, StreamHandler handler);

  // handler returns the RequestHandler for HttpServer::start; the Router must outlive the server.
  RequestHandler handler() const;
  // handler(guard) is handler() with `guard` asked before each matched route's handler: one Router
  // can serve a loopback server without a guard and a public one with it. With `guard_lane`, the
  // guard runs on that lane's workers (for a guard that may block, e.g. a bcrypt check; a full
  // lane answers 503 + Retry-After); without, on the io thread.
  RequestHandler handler(RouteGuard guard, const std::string& guard_lane = {});

  // routes lists the registered routes in registration order (a replaced route keeps its place).
  std::vector<RouteInfo> routes() const;

  // dispatch answers the connection's current request (what handler() calls).
  boost::asio::awaitable<bool> dispatch(Connection& connection) const { return dispatch_guarded(connection, nullptr); }

 private:
  struct Lane;
  struct Route {
    std::string method;
    std::string path;
    bool prefix = false;
    PlainHandler plain;
    AsyncHandler async;
    StreamHandler stream;
    std::shared_ptr<Lane> lane;  // set: `plain` runs on this lane's workers
  };
  struct Guard {
    RouteGuard check;
    std::shared_ptr<Lane> lane;  // null: on the io thread
  };
  boost::asio::awaitable<bool> dispatch_guarded(Connection& connection, const Guard* guard) const;
  static RouteInfo info_of(const Route& route);
  void insert(Route route);
  std::shared_ptr<Lane> lane(const std::string& name);
  std::vector<Route> routes_;
  std::vector<std::shared_ptr<Lane>> lanes_;
};

}  // namespace inferscope::net
