#include "dashboard/dashboard_http.h"

#include <nlohmann/json.hpp>

#include "dashboard/embedded_assets.h"
#include "net/query_parameter.h"

namespace inferscope::dashboard {
namespace {

DashboardAnswer error_answer(int status, std::string message, std::string_view param) {
  nlohmann::json body = {{"error",
                          {{"message", std::move(message)},
                           {"type", status == 404 ? "not_found_error" : "invalid_request_error"},
                           {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
                           {"code", nullptr}}}};
  return {status, "application/json", body.dump(), {}};
}

DashboardAnswer asset_answer(std::string_view name, std::string content_type, bool immutable) {
  const EmbeddedAsset* asset = find_asset(name);
  if (asset == nullptr) return error_answer(404, "no such dashboard asset: " + std::string(name), "");
  DashboardAnswer a{200, std::move(content_type), std::string(asset->bytes), {}};
  // The page itself is never cached (it names the assets); the assets are small and change only
  // with the binary, so a short max-age keeps reloads cheap without serving a stale bundle for long.
  a.headers.emplace_back("Cache-Control", immutable ? "max-age=300" : "no-cache");
  a.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return a;
}

}  // namespace


std::optional<DashboardAnswer> answer_page_request(std::string_view path) {
  if (path == "/" || path == "/index.html") {
    auto a = asset_answer("index.html", "text/html; charset=utf-8", false);
    a.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'");
    return a;
  }
  if (path == "/assets/app.js") return asset_answer("app.js", "text/javascript; charset=utf-8", true);
  if (path == "/assets/app.css") return asset_answer("app.css", "text/css; charset=utf-8", true);
  if (path.rfind(kAssetPrefix, 0) == 0) return error_answer(404, "no such dashboard asset: " + std::string(path), "");
  return std::nullopt;
}

DashboardAnswer answer_dashboard_request(DashboardData& data, std::string_view path, std::string_view query) {
  if (auto page = answer_page_request(path)) return std::move(*page);
  if (path == "/api/dashboard/meta") {
    DashboardAnswer a{200, "application/json", data.meta_json(), {}};
    a.headers.emplace_back("Cache-Control", "no-store");
    return a;
  }
  if (path == "/api/dashboard/data" || path == "/api/dashboard/exemplars") {
    std::string range = net::query_parameter(query, "range");
    if (range.empty()) range = "1h";
    const std::string target = net::query_parameter(query, "target");
    const std::string model = net::query_parameter(query, "model");
    auto body = path == "/api/dashboard/data" ? data.data_json(range, target, model)
                                              : data.exemplars_json(range, target, model);
    if (!body) {
      const bool range_error = body.error().message.rfind("unknown range", 0) == 0;
      return error_answer(400, body.error().message, range_error ? "range" : "target");
    }
    DashboardAnswer a{200, "application/json", std::move(*body), {}};
    a.headers.emplace_back("Cache-Control", "no-store");
    return a;
  }
  return error_answer(404, "no dashboard resource at " + std::string(path), "");
}

}  // namespace inferscope::dashboard
