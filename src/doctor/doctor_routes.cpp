#include "doctor/doctor_routes.h"

#include "doctor/doctor_api.h"
#include "net/api_error.h"

namespace inferscope::doctor {

void add_doctor_routes(net::Router& router, std::function<std::string()> prometheus_url, const std::string& lane,
                       net::TlsOptions tls, CustomTargets custom_targets, std::function<std::string()> traces_url) {
  // A diagnosis blocks for its Prometheus round trips: it runs on the router's bounded lane
  // (503 + Retry-After when full), never on an io thread and never in an unbounded queue.
  router.get_blocking("/api/doctor", [prometheus_url, tls, custom_targets, traces_url](const net::Request& request) {
    std::string url = prometheus_url();
    if (url.empty()) {
      net::ApiError e;
      e.status = 503;
      e.type = "service_unavailable";
      e.message = "Prometheus is not ready yet";
      e.retry_after = 2;
      return net::Response::error(e);
    }
    ApiAnswer answer = handle_doctor_api(request.query, url, tls, custom_targets,
                                           traces_url ? traces_url() : std::string());
    if (answer.status != 200) {
      net::ApiError e;
      e.status = answer.status;
      e.message = answer.error_message;
      e.type = answer.error_type;
      e.param = answer.error_param;
      return net::Response::error(e);
    }
    net::Response r;
    r.content_type = answer.content_type;
    r.body = std::move(answer.body);
    return r;
  }, lane);
}

}  // namespace inferscope::doctor
