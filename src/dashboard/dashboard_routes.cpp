#include "dashboard/dashboard_routes.h"

#include <memory>
#include <mutex>

#include "dashboard/dashboard_http.h"

namespace inferscope::dashboard {
namespace {

// LazyData creates the DashboardData once the stack knows its Prometheus URL.
class LazyData {
 public:
  LazyData(std::function<std::string()> url, DashboardOptions options)
      : url_(std::move(url)), options_(std::move(options)) {}

  // get returns the data source, or nullptr with `why` set while none can be made.
  DashboardData* get(std::string& why) {
    std::lock_guard lock(mutex_);
    if (data_) return data_.get();
    const std::string url = url_();
    if (url.empty()) {
      why = "the monitoring stack is still starting (Prometheus is not ready yet)";
      return nullptr;
    }
    DashboardOptions options = options_;
    options.prometheus_url = url;
    auto created = DashboardData::create(std::move(options));
    if (!created) {
      why = created.error().message;
      return nullptr;
    }
    data_ = std::move(*created);
    return data_.get();
  }

 private:
  std::function<std::string()> url_;
  DashboardOptions options_;
  std::mutex mutex_;
  std::unique_ptr<DashboardData> data_;
};

net::Response to_response(DashboardAnswer answer) {
  net::Response r;
  r.status = answer.status;
  r.content_type = std::move(answer.content_type);
  r.body = std::move(answer.body);
  r.headers = std::move(answer.headers);
  return r;
}

}  // namespace

void add_dashboard_routes(net::Router& router, std::function<std::string()> prometheus_url, DashboardOptions options,
                          const std::string& lane) {
  auto lazy = std::make_shared<LazyData>(std::move(prometheus_url), std::move(options));
  auto handler = [lazy](const net::Request& request) {
    if (auto page = answer_page_request(request.path)) return to_response(std::move(*page));
    std::string why;
    DashboardData* data = lazy->get(why);
    if (data == nullptr) return net::Response::error(net::ApiError::overloaded("cannot serve dashboard data: " + why, 2));
    return to_response(answer_dashboard_request(*data, request.path, request.query));
  };
  // The page and assets are embedded (plain routes); the data routes wait on Prometheus, so they
  // run on the router's blocking lane `lane`, never on an io thread.
  for (std::string_view path : kDashboardPaths) {
    if (path.starts_with("/api/")) {
      router.get_blocking(std::string(path), handler, lane);
    } else {
      router.get(std::string(path), handler);
    }
  }
  router.get("/assets/app.js", handler);
  router.get("/assets/app.css", handler);
}

}  // namespace inferscope::dashboard
