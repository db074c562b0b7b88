// File: router.h
// Router maps (method, path) to handlers for an HttpServer without exposing Beast: plain handlers
// (Request -> Response), coroutine handlers (for handlers that await I/O) and event-stream
// handlers (SSE: write events as they happen). Unknown paths get 404, wrong methods 405 with
// Allow, both as OpenAI error JSON. Example:
//   router.get("/api/status", [](const net::Request&) { return net::Response::json(R"({"ok":true})"); });
//   router.post("/hooks/alertmanager", on_webhook); router.get_prefix("/ui/", serve_static);
//   auto server = net::HttpServer::start(options, router.handler());
// Thread-safety: add routes before start(); afterwards the Router is read-only and shared by
// every io thread. Handlers run on an io thread: they must not throw or block for long.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/api_error.h"
#include "net/http_server.h"

namespace inferscope::net {

// Request is a read-only view of one HTTP request, valid only during the handler call.
struct Request {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // as sent: path plus query
  std::string_view path;    // target without the query
  std::string_view query;   // after '?', or empty
  std::string_view body;
  bool peer_loopback = false;
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
  // add_stream registers a GET route answered with a `text/event-stream` that `handler` writes.
  void add_stream(std::string path, StreamHandler handler);

  // handler returns the RequestHandler for HttpServer::start; the Router must outlive the server.
  RequestHandler handler() const;

  // dispatch answers the connection's current request (what handler() calls).
  boost::asio::awaitable<bool> dispatch(Connection& connection) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    bool prefix = false;
    PlainHandler plain;
    AsyncHandler async;
    StreamHandler stream;
  };
  void insert(Route route);
  std::vector<Route> routes_;
};

}  // namespace inferscope::net
