// File: gateway_config.h
// GatewayConfig is everything `inferscope gateway` runs with: listen address, upstreams (URL,
// limits, key source, TLS trust), models -> upstreams, timeouts, limits, client auth, health,
// per-request tracing.
// It comes from --config (YAML) and the flags, which override the file. Example:
//   auto c = load_gateway_config_file("gw.yaml"); if (!c) die(c.error().message);  // names file:line and key
// Plain value types; load functions are pure apart from reading the files they are given.
// Secrets: a config names an environment variable or a file for each key, never the key itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "net/http_url.h"
#include "trace/trace_settings.h"

namespace inferscope::gateway {

using Millis = std::chrono::milliseconds;

struct UpstreamConfig {
  std::string name;             // label value `upstream`
  std::string url;
  net::HttpUrl target;          // parsed url
  std::optional<unsigned> max_concurrency;  // unset: GatewayConfig::max_concurrency
  std::optional<unsigned> max_queue;        // unset: GatewayConfig::max_queue
  std::string api_key_env;      // read the upstream key from this environment variable
  std::string api_key_file;     // ... or from this file (first line)
  std::string ca_file;          // extra trusted CA (PEM) for an https upstream
  bool verify_tls = true;
};

struct GatewayConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::optional<std::uint16_t> metrics_port;
  unsigned io_threads = 1;
  unsigned max_concurrency = 64;  // per upstream
  unsigned max_queue = 256;       // per upstream
  Millis queue_timeout{30000};
  Millis connect_timeout{5000};
  Millis header_timeout{300000};  // upstream: request written -> response head (a long prefill)
  Millis idle_timeout{120000};    // upstream: silence inside a body
  Millis client_header_timeout{10000};
  Millis client_idle_timeout{60000};
  Millis drain_timeout{30000};
  std::size_t max_body_bytes = 8u << 20;
  std::uint32_t max_header_bytes = 16 * 1024;
  unsigned health_failures = 3;   // consecutive failures that mark an upstream unhealthy
  Millis health_backoff{10000};   // how long an unhealthy upstream is skipped
  std::string auth_keys_file;     // client bearer keys, one per line; empty = no client auth
  std::vector<UpstreamConfig> upstreams;
  std::map<std::string, std::vector<std::string>> models;  // model -> upstream names
  trace::TraceSettings tracing;   // tracing: {otlp_endpoint, sample, slow}; off without an endpoint
};

// parse_duration reads "250ms", "30s", "2m", "1h" or a plain number of seconds.
Result<Millis> parse_duration(std::string_view text);

// load_gateway_config_file reads a YAML config. Errors: "cannot load gateway config from
// <file>:<line>: key '<key>' <what is wrong>".
Result<GatewayConfig> load_gateway_config_file(const std::string& path);

// add_upstream_url appends an upstream given by URL (--upstream), named host:port.
Result<void> add_upstream_url(GatewayConfig& config, std::string_view url);

// validate_gateway_config checks cross-field rules (at least one upstream, unique names, models
// naming known upstreams, limits > 0).
Result<void> validate_gateway_config(const GatewayConfig& config);

// read_secret returns the key named by env var `env` or file `file` (first line, trimmed);
// an empty result when neither is set. Fails naming the variable or file, never the value.
Result<std::string> read_secret(const std::string& env, const std::string& file);

}  // namespace inferscope::gateway
