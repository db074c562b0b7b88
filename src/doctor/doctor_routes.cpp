#include "doctor/doctor_routes.h"

#include <memory>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/this_coro.hpp>

#include "doctor/doctor_api.h"
#include "net/api_error.h"

namespace inferscope::doctor {

void add_doctor_routes(net::Router& router, std::function<std::string()> prometheus_url) {
  namespace asio = boost::asio;
  // Owned by the handler: lives as long as the router keeps the route.
  auto pool = std::make_shared<asio::thread_pool>(2);
  router.add_async("GET", "/api/doctor",
                   [pool, prometheus_url](const net::Request& request) -> asio::awaitable<net::Response> {
                     std::string query(request.query);  // the request view ends with this call's first suspension
                     std::string url = prometheus_url();
                     if (url.empty()) {
                       net::ApiError e;
                       e.status = 503;
                       e.type = "service_unavailable";
                       e.message = "Prometheus is not ready yet";
                       e.retry_after = 2;
                       co_return net::Response::error(e);
                     }
                     auto home = co_await asio::this_coro::executor;
                     co_await asio::post(pool->get_executor(), asio::use_awaitable);
                     ApiAnswer answer = handle_doctor_api(query, url);
                     co_await asio::post(home, asio::use_awaitable);
                     if (answer.status != 200) {
                       net::ApiError e;
                       e.status = answer.status;
                       e.message = answer.error_message;
                       e.type = answer.error_type;
                       e.param = answer.error_param;
                       co_return net::Response::error(e);
                     }
                     net::Response r;
                     r.content_type = answer.content_type;
                     r.body = std::move(answer.body);
                     co_return r;
                   });
}

}  // namespace inferscope::doctor
