// File: notification_links.cpp
#include "up/notification_links.h"

#include <nlohmann/json.hpp>

namespace inferscope::up {

std::string replace_port_zero_origin(std::string_view url, std::string_view base) {
  const std::size_t scheme_end = url.find("://");
  if (base.empty() || scheme_end == std::string_view::npos) return std::string(url);
  const std::size_t host_start = scheme_end + 3;
  std::size_t origin_end = url.find_first_of("/?#", host_start);
  if (origin_end == std::string_view::npos) origin_end = url.size();
  const std::string_view authority = url.substr(host_start, origin_end - host_start);
  if (!authority.ends_with(":0")) return std::string(url);
  while (base.ends_with('/')) base.remove_suffix(1);
  return std::string(base) + std::string(url.substr(origin_end));
}

std::string fix_local_links(std::string_view webhook_body, std::string_view prometheus_url,
                            std::string_view alertmanager_url) {
  nlohmann::json body = nlohmann::json::parse(webhook_body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) return std::string(webhook_body);
  bool changed = false;
  const auto fix = [&changed](nlohmann::json& object, const char* key, std::string_view base) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_string()) return;
    std::string fixed = replace_port_zero_origin(it->get_ref<const std::string&>(), base);
    if (fixed == it->get_ref<const std::string&>()) return;
    *it = std::move(fixed);
    changed = true;
  };
  fix(body, "externalURL", alertmanager_url);
  if (auto alerts = body.find("alerts"); alerts != body.end() && alerts->is_array()) {
    for (nlohmann::json& alert : *alerts) {
      if (alert.is_object()) fix(alert, "generatorURL", prometheus_url);
    }
  }
  if (!changed) return std::string(webhook_body);
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace inferscope::up
