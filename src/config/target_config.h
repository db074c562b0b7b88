// File: config/target_config.h
// TargetConfig and QueueTargetConfig are one scrape target of `inferscope up`: an http(s) /metrics
// endpoint with its kind, or a redis instance whose job queues up collects. The parsers read the
// --target forms ("[NAME=][KIND@]URL", "[NAME=]redis://HOST:PORT/DB"); the config file's
// `targets:` fills the same structs (stack_config.h).
// Example: Result<TargetConfig> t = parse_target_url("demo=vllm@http://10.0.0.5:8000/metrics");
// Plain value types and pure functions; thread-safe. Errors are one line naming the text given.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <inferscope/common/result.h>

#include "dialect/custom_dialect.h"
#include "relay/relay_config.h"

namespace inferscope::config {

// kTargetKinds lists the accepted target kinds; "auto" detects the dialect while up runs (and
// follows it when the target's metric names change); any other kind skips detection.
inline constexpr std::string_view kTargetKinds[] = {"inferscope", "vllm",    "llamacpp", "tgi",  "triton",
                                                    "sglang",     "litellm", "dcgm",     "node", "auto"};

// kCustomKind is the config-file-only kind of a target whose roles map to its own metric names
// (`roles:`, optional `model_label:`); not a --target/--kind value, since it needs the mapping.
inline constexpr std::string_view kCustomKind = "custom";

// TargetConfig is one scrape target. url is the full /metrics URL as given.
struct TargetConfig {
  std::string name;            // Prometheus job name; from NAME=URL, the config, or host_port
  std::string url;             // http(s)://host:port/path
  std::string kind = "auto";   // one of kTargetKinds, or kCustomKind
  std::shared_ptr<const dialect::CustomDialect> custom;  // kind custom: its validated role mapping
  std::string scheme;          // "http" or "https"
  std::string host_port;       // "127.0.0.1:8000"
  std::string metrics_path;    // "/metrics" when the URL has no path
};

// kQueueSystems are the queue systems a redis target's `queues.systems` may name.
inline constexpr std::string_view kQueueSystems[] = {"rq", "celery", "streams", "list"};

// QueueTargetConfig is one redis target (`--target NAME=redis://HOST:PORT/DB`, or a config target
// whose url is redis://): up runs a queue collector against it (src/queue) and scrapes its series
// from its own API at /queues/NAME/metrics under job NAME. The password is never in the URL: it
// comes from `password_file:` or `password_env:`.
struct QueueTargetConfig {
  std::string name;                 // Prometheus job name; from NAME=, the config, or host_port
  std::string url;                  // redis://HOST:PORT/DB (no password)
  relay::SecretSource password{};   // empty = no AUTH
  // systems: default rq and celery (discovered), plus streams/list when streams/lists are named.
  std::vector<std::string> systems{"rq", "celery"};
  std::vector<std::pair<std::string, std::string>> streams{};  // {key, consumer group}
  std::vector<std::string> lists{};                              // list keys or glob patterns
  std::optional<std::chrono::milliseconds> interval{};          // unset = scrape_interval
};

// parse_target_url parses "[NAME=][KIND@]URL" (the --target form). URL must be http:// or https://
// with a host and port; a missing path becomes /metrics; a missing NAME becomes "host:port"-derived;
// KIND (one of kTargetKinds but "auto") fixes the kind, else it stays "auto" (detected).
Result<TargetConfig> parse_target_url(std::string_view text);

// parse_queue_target_url parses "[NAME=]redis://HOST[:PORT][/DB]" (the --target form of a redis
// target; the scheme selects the kind). A password in the URL is refused (it would sit on the
// command line and in process listings): use password_file: or password_env: in the config.
Result<QueueTargetConfig> parse_queue_target_url(std::string_view text);

// is_queue_target_url tells whether a --target text names a redis target ("[NAME=]redis://...").
bool is_queue_target_url(std::string_view text);

}  // namespace inferscope::config
