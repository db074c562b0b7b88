#include "dashboard/dashboard_http.h"

#include <nlohmann/json.hpp>

#include "dashboard/embedded_assets.h"

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

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string query_parameter(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    if (eq == std::string_view::npos) return "";
    std::string out;
    std::string_view raw = pair.substr(eq + 1);
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '+') {
        out += ' ';
      } else if (raw[i] == '%') {
        if (i + 2 >= raw.size()) return "";
        const int hi = hex_value(raw[i + 1]), lo = hex_value(raw[i + 2]);
        if (hi < 0 || lo < 0) return "";
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
      } else {
        out += raw[i];
      }
    }
    return out;
  }
  return "";
}

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
  if (path == "/api/dashboard/data") {
    std::string range = query_parameter(query, "range");
    if (range.empty()) range = "1h";
    auto body = data.data_json(range, query_parameter(query, "target"), query_parameter(query, "model"));
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
