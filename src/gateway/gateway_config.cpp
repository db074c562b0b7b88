// File: gateway_config.cpp
// YAML through yaml-cpp; every node carries its line (Mark), so each error names file:line and
// the key. Unknown keys are errors too: a typo must not silently fall back to a default.
#include "gateway/gateway_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "common/duration_text.h"

namespace inferscope::gateway {

Result<Millis> parse_duration(std::string_view text) {
  // A bare number is seconds here (the config's and the flags' documented form); the rest is the
  // shared duration syntax.
  const std::string with_unit = std::string(text) + (common::has_duration_unit(text) ? "" : "s");
  const auto d = common::parse_duration(with_unit, "the gateway config");
  if (!d) return d.error();
  return std::chrono::duration_cast<Millis>(*d);
}

namespace {

struct Reader {
  std::string file;
  Error at(const YAML::Node& node, std::string_view key, std::string_view what) const {
    return make_error("cannot load gateway config from " + file + ":" + std::to_string(node.Mark().line + 1) +
                      ": key '" + std::string(key) + "' " + std::string(what));
  }
  Result<std::string> text(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) return at(n, key, "must be a string");
    return n.Scalar();
  }
  Result<unsigned> positive(const YAML::Node& n, std::string_view key, unsigned max = 1000000) const {
    if (!n.IsScalar()) return at(n, key, "must be a positive integer");
    const std::string& s = n.Scalar();
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      return at(n, key, "must be a positive integer (got '" + s + "')");
    }
    const unsigned long v = std::stoul(s);
    if (v == 0 || v > max) return at(n, key, "must be between 1 and " + std::to_string(max) + " (got " + s + ")");
    return static_cast<unsigned>(v);
  }
  Result<Millis> duration(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) return at(n, key, "must be a duration such as 30s");
    auto d = parse_duration(n.Scalar());
    if (!d) return at(n, key, "must be a duration such as 500ms, 30s or 2m (got '" + n.Scalar() + "')");
    if (d->count() <= 0) return at(n, key, "must be positive");
    return d;
  }
  Result<bool> boolean(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) return at(n, key, "must be true or false");
    if (n.Scalar() == "true") return true;
    if (n.Scalar() == "false") return false;
    return at(n, key, "must be true or false (got '" + n.Scalar() + "')");
  }
};

#define GW_TRY(lhs, expr)            \
  do {                               \
    auto gw_r = (expr);              \
    if (!gw_r) return gw_r.error();  \
    lhs = *gw_r;                     \
  } while (0)

Result<void> read_upstream(const Reader& r, const YAML::Node& node, UpstreamConfig& u) {
  if (!node.IsMap()) return r.at(node, "upstreams", "entries must be maps with name and url");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "name") {
      GW_TRY(u.name, r.text(v, key));
    } else if (key == "url") {
      GW_TRY(u.url, r.text(v, key));
      auto parsed = net::parse_http_url(u.url, "key 'url'");
      if (!parsed) return r.at(v, key, "must be an http:// or https:// URL (got '" + u.url + "')");
      u.target = *parsed;
    } else if (key == "max_concurrency") {
      unsigned n = 0;
      GW_TRY(n, r.positive(v, key));
      u.max_concurrency = n;
    } else if (key == "max_queue") {
      unsigned n = 0;
      GW_TRY(n, r.positive(v, key));
      u.max_queue = n;
    } else if (key == "api_key_env") {
      GW_TRY(u.api_key_env, r.text(v, key));
    } else if (key == "api_key_file") {
      GW_TRY(u.api_key_file, r.text(v, key));
    } else if (key == "ca_file") {
      GW_TRY(u.ca_file, r.text(v, key));
    } else if (key == "verify_tls") {
      GW_TRY(u.verify_tls, r.boolean(v, key));
    } else if (key == "api_key") {
      return r.at(v, key, "is not allowed: give api_key_env or api_key_file (keys never sit in a config)");
    } else {
      return r.at(kv.first, key, "is unknown in an upstream (known: name, url, max_concurrency, max_queue, "
                                 "api_key_env, api_key_file, ca_file, verify_tls)");
    }
  }
  if (u.url.empty()) return r.at(node, "url", "is missing from an upstream");
  if (u.name.empty()) u.name = u.target.host + ":" + u.target.port;
  return {};
}

Result<void> read_timeouts(const Reader& r, const YAML::Node& node, GatewayConfig& c) {
  if (!node.IsMap()) return r.at(node, "timeouts", "must be a map");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    Millis* slot = key == "connect"         ? &c.connect_timeout
                   : key == "header"        ? &c.header_timeout
                   : key == "idle"          ? &c.idle_timeout
                   : key == "client_header" ? &c.client_header_timeout
                   : key == "client_idle"   ? &c.client_idle_timeout
                   : key == "drain"         ? &c.drain_timeout
                   : key == "queue"         ? &c.queue_timeout
                                            : nullptr;
    if (slot == nullptr) {
      return r.at(kv.first, key, "is unknown in timeouts (known: connect, header, idle, client_header, "
                                 "client_idle, drain, queue)");
    }
    GW_TRY(*slot, r.duration(kv.second, key));
  }
  return {};
}

Result<void> read_tracing(const Reader& r, const YAML::Node& node, GatewayConfig& c) {
  if (!node.IsMap()) return r.at(node, "tracing", "must be a map (otlp_endpoint, sample, slow)");
  trace::TraceSettings& t = c.tracing;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "otlp_endpoint") {
      GW_TRY(t.otlp_endpoint, r.text(v, key));
      if (!net::parse_http_url(t.otlp_endpoint, "key 'otlp_endpoint'")) {
        return r.at(v, key, "must be an http:// or https:// URL (got '" + t.otlp_endpoint + "')");
      }
    } else if (key == "sample") {
      double ratio = -1;
      if (v.IsScalar() && !YAML::convert<double>::decode(v, ratio)) ratio = -1;
      if (!(ratio >= 0 && ratio <= 1)) return r.at(v, key, "must be a ratio in 0..1");
      t.policy.sample_ratio = ratio;
    } else if (key == "slow") {
      Millis slow{};
      GW_TRY(slow, r.duration(v, key));
      t.policy.slow_seconds = std::chrono::duration<double>(slow).count();
    } else {
      return r.at(kv.first, key, "is unknown in tracing (known: otlp_endpoint, sample, slow)");
    }
  }
  if (!t.enabled()) return r.at(node, "tracing", "needs otlp_endpoint");
  return {};
}

Result<void> read_top(const Reader& r, const std::string& key, const YAML::Node& v, GatewayConfig& c) {
  if (key == "host") {
    GW_TRY(c.host, r.text(v, key));
  } else if (key == "port") {
    unsigned n = 0;
    GW_TRY(n, r.positive(v, key, 65535));
    c.port = static_cast<std::uint16_t>(n);
  } else if (key == "metrics_port") {
    unsigned n = 0;
    GW_TRY(n, r.positive(v, key, 65535));
    c.metrics_port = static_cast<std::uint16_t>(n);
  } else if (key == "io_threads") {
    GW_TRY(c.io_threads, r.positive(v, key, 64));
  } else if (key == "max_concurrency") {
    GW_TRY(c.max_concurrency, r.positive(v, key));
  } else if (key == "max_queue") {
    GW_TRY(c.max_queue, r.positive(v, key));
  } else if (key == "queue_timeout") {
    GW_TRY(c.queue_timeout, r.duration(v, key));
  } else if (key == "timeouts") {
    return read_timeouts(r, v, c);
  } else if (key == "tracing") {
    return read_tracing(r, v, c);
  } else if (key == "max_body_bytes") {
    unsigned n = 0;
    GW_TRY(n, r.positive(v, key, 1u << 30));
    c.max_body_bytes = n;
  } else if (key == "max_header_bytes") {
    GW_TRY(c.max_header_bytes, r.positive(v, key, 1u << 20));
    if (c.max_header_bytes < 256) return r.at(v, key, "must be at least 256");
  } else if (key == "health_failures") {
    GW_TRY(c.health_failures, r.positive(v, key, 1000));
  } else if (key == "health_backoff") {
    GW_TRY(c.health_backoff, r.duration(v, key));
  } else if (key == "auth_keys_file") {
    GW_TRY(c.auth_keys_file, r.text(v, key));
  } else if (key == "upstreams") {
    if (!v.IsSequence()) return r.at(v, key, "must be a list of upstreams");
    for (const auto& item : v) {
      UpstreamConfig u;
      if (auto ok = read_upstream(r, item, u); !ok) return ok.error();
      c.upstreams.push_back(std::move(u));
    }
  } else if (key == "models") {
    if (!v.IsMap()) return r.at(v, key, "must map model names to lists of upstream names");
    for (const auto& kv : v) {
      std::vector<std::string> names;
      if (kv.second.IsScalar()) {
        names.push_back(kv.second.Scalar());
      } else if (kv.second.IsSequence()) {
        for (const auto& n : kv.second) {
          if (!n.IsScalar()) return r.at(n, kv.first.Scalar(), "must list upstream names");
          names.push_back(n.Scalar());
        }
      } else {
        return r.at(kv.second, kv.first.Scalar(), "must be an upstream name or a list of them");
      }
      c.models[kv.first.Scalar()] = std::move(names);
    }
  } else {
    return r.at(v, key, "is unknown (known: host, port, metrics_port, io_threads, max_concurrency, max_queue, "
                        "queue_timeout, timeouts, max_body_bytes, max_header_bytes, health_failures, "
                        "health_backoff, auth_keys_file, upstreams, models, tracing)");
  }
  return {};
}

}  // namespace

Result<GatewayConfig> load_gateway_config_file(const std::string& path) {
  Reader r{path};
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return make_error("cannot load gateway config from " + path + ": cannot read the file");
  } catch (const YAML::ParserException& e) {
    return make_error("cannot load gateway config from " + path + ":" + std::to_string(e.mark.line + 1) +
                      ": " + e.msg);
  }
  GatewayConfig c;
  if (root.IsNull()) return c;
  if (!root.IsMap()) return make_error("cannot load gateway config from " + path + ":1: the top level must be a map");
  try {
    for (const auto& kv : root) {
      if (auto ok = read_top(r, kv.first.Scalar(), kv.second, c); !ok) return ok.error();
    }
  } catch (const YAML::Exception& e) {
    return make_error("cannot load gateway config from " + path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  for (const auto& [model, names] : c.models) {
    for (const std::string& name : names) {
      bool known = false;
      for (const auto& u : c.upstreams) known = known || u.name == name;
      if (!known) {
        return make_error("cannot load gateway config from " + path + ": key 'models' names upstream '" + name +
                          "' for model '" + model + "', which no entry of 'upstreams' has");
      }
    }
  }
  return c;
}

Result<void> add_upstream_url(GatewayConfig& config, std::string_view url) {
  auto target = net::parse_http_url(url, "--upstream");
  if (!target) return target.error();
  UpstreamConfig u;
  u.url = std::string(url);
  u.target = *target;
  u.name = target->host + ":" + target->port;
  for (const auto& existing : config.upstreams) {
    if (existing.name == u.name) return {};  // the same upstream given twice
  }
  config.upstreams.push_back(std::move(u));
  return {};
}

Result<void> validate_gateway_config(const GatewayConfig& c) {
  if (c.upstreams.empty()) return make_error("no upstream given: use --upstream URL or 'upstreams' in --config");
  std::set<std::string> names;
  for (const auto& u : c.upstreams) {
    if (!names.insert(u.name).second) return make_error("upstream name '" + u.name + "' is used twice");
  }
  if (c.max_concurrency == 0) return make_error("--max-concurrency must be positive");
  if (c.max_queue == 0) return make_error("--max-queue must be positive");
  if (c.queue_timeout.count() <= 0) return make_error("--queue-timeout must be positive");
  return trace::validate_trace_settings(c.tracing);
}

Result<std::string> read_secret(const std::string& env, const std::string& file) {
  if (!env.empty()) {
    const char* value = std::getenv(env.c_str());
    if (value == nullptr || *value == '\0') return make_error("cannot read upstream key from environment variable " + env + ": it is not set");
    return std::string(value);
  }
  if (!file.empty()) {
    std::ifstream in(file);
    std::string line;
    if (!in || !std::getline(in, line)) return make_error("cannot read upstream key from " + file);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) return make_error("cannot read upstream key from " + file + ": the first line is empty");
    return line;
  }
  return std::string();
}

}  // namespace inferscope::gateway
