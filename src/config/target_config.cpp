// File: target_config.cpp
// The --target forms: "[NAME=][KIND@]http(s)://host:port[/path]" and "[NAME=]redis://HOST[:PORT][/DB]".
#include "config/target_config.h"

#include <algorithm>

#include "config/detail/yaml_reader.h"
#include "dialect/dialect.h"
#include "queue/redis_target.h"

namespace inferscope::config {

using detail::printable_ascii;
using detail::valid_name;

std::vector<std::string> dialect_kinds() {
  std::vector<std::string> kinds;
  for (dialect::DialectId id : dialect::kAllDialects) kinds.emplace_back(dialect::to_string(id));
  return kinds;
}

bool is_dialect_kind(std::string_view kind) {
  return std::any_of(dialect::kAllDialects.begin(), dialect::kAllDialects.end(),
                     [&](dialect::DialectId id) { return dialect::to_string(id) == kind; });
}

std::string dialect_kind_list() {
  std::string list;
  for (const std::string& kind : dialect_kinds()) list += (list.empty() ? "" : ", ") + kind;
  return list;
}

Result<TargetConfig> parse_target_url(std::string_view text) {
  TargetConfig t;
  std::string_view url = text;
  const std::size_t eq = text.find('=');
  const std::size_t scheme_pos = text.find("://");
  if (eq != std::string_view::npos && (scheme_pos == std::string_view::npos || eq < scheme_pos)) {
    t.name = std::string(text.substr(0, eq));
    url = text.substr(eq + 1);
    if (!valid_name(t.name)) {
      return make_error("bad target name \"" + t.name + "\" in \"" + std::string(text) +
                        "\": use letters, digits, '_', '-', '.'");
    }
  }
  // KIND@ before the scheme names the kind (NAME=vllm@http://...): that target skips detection.
  if (const std::size_t at = url.find('@'), scheme = url.find("://"); at != std::string_view::npos &&
                                                                        scheme != std::string_view::npos && at < scheme) {
    t.kind = std::string(url.substr(0, at));
    url.remove_prefix(at + 1);
    if (!is_dialect_kind(t.kind)) {
      return make_error("unknown kind \"" + t.kind + "\" in \"" + std::string(text) + "\" (" + dialect_kind_list() +
                        "; leave KIND@ out to detect it)");
    }
  }
  const auto bad = [&](std::string_view why) {
    return make_error("bad target URL \"" + std::string(url) + "\": " + std::string(why) +
                      " (expected [NAME=][KIND@]http://host:port[/path])");
  };
  if (!printable_ascii(url)) return bad("only printable ASCII without spaces is allowed (percent-encode the rest)");
  if (url.starts_with("http://")) {
    t.scheme = "http";
    url.remove_prefix(7);
  } else if (url.starts_with("https://")) {
    t.scheme = "https";
    url.remove_prefix(8);
  } else {
    return bad("scheme must be http:// or https://");
  }
  const std::size_t slash = url.find('/');
  t.host_port = std::string(url.substr(0, slash));
  t.metrics_path = slash == std::string_view::npos ? "/metrics" : std::string(url.substr(slash));
  if (t.metrics_path.find_first_of("?#") != std::string::npos) return bad("query strings are not supported");
  const std::size_t colon = t.host_port.rfind(':');
  if (t.host_port.empty() || colon == std::string::npos || colon == 0 || colon + 1 == t.host_port.size()) {
    return bad("host and port are required");
  }
  const std::string port_text = t.host_port.substr(colon + 1);
  if (!std::all_of(port_text.begin(), port_text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      port_text.size() > 5 || std::stoi(port_text) == 0 || std::stoi(port_text) > 65535) {
    return bad("port must be 1..65535");
  }
  t.url = t.scheme + "://" + t.host_port + t.metrics_path;
  if (t.name.empty()) {
    t.name = t.host_port;
    std::replace(t.name.begin(), t.name.end(), ':', '_');
    std::replace(t.name.begin(), t.name.end(), '[', '_');
    std::replace(t.name.begin(), t.name.end(), ']', '_');
  }
  return t;
}

bool is_queue_target_url(std::string_view text) {
  const std::size_t scheme = text.find("://");
  return scheme != std::string_view::npos && scheme >= 5 && text.substr(scheme - 5, 8) == "redis://" &&
         (scheme == 5 || text[scheme - 6] == '=');
}

Result<QueueTargetConfig> parse_queue_target_url(std::string_view text) {
  QueueTargetConfig t;
  std::string_view url = text;
  if (const std::size_t eq = text.find('='); eq != std::string_view::npos && eq < text.find("://")) {
    t.name = std::string(text.substr(0, eq));
    url = text.substr(eq + 1);
    if (!valid_name(t.name)) {
      return make_error("bad target name \"" + t.name + "\": use letters, digits, '_', '-', '.'");
    }
  }
  auto target = queue::parse_redis_url(url);
  if (!target) return target.error();
  if (!target->password.empty()) {
    return make_error("the redis URL " + queue::describe(*target) + " carries a password: keep it off the command "
                      "line and out of the config, and give it as password_file: or password_env: of the target");
  }
  if (!printable_ascii(target->host)) return make_error("bad redis URL " + queue::describe(*target) + ": bad host");
  t.url = queue::describe(*target);
  if (t.name.empty()) {
    t.name = target->host + "_" + std::to_string(target->port);
    std::replace(t.name.begin(), t.name.end(), ':', '_');
  }
  return t;
}

}  // namespace inferscope::config
