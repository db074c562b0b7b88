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

// Target kinds. Every dialect of the dialect table (dialect::kAllDialects) is a kind, by its
// config spelling ("inferscope", "gateway", "vllm", ...): it fixes the metric names the rules,
// doctor and dashboard read, and the target is never probed. The other kinds:
// kAutoKind detects the dialect while up runs (and follows it when the metric names change);
// kCustomKind (config file only: it needs its `roles:` mapping) maps roles to the target's own
// names; kRedisKind is the kind of a redis:// target (a job-queue collector, not a /metrics URL).
inline constexpr std::string_view kAutoKind = "auto";
inline constexpr std::string_view kCustomKind = "custom";
inline constexpr std::string_view kRedisKind = "redis";

// dialect_kinds returns the config spelling of every dialect of the dialect table, in its order.
// These are the kinds --target NAME=KIND@URL, --kind and a config target's `kind:` accept besides
// auto (and custom, in the config).
std::vector<std::string> dialect_kinds();

// is_dialect_kind tells whether `kind` is one of dialect_kinds().
bool is_dialect_kind(std::string_view kind);

// dialect_kind_list is dialect_kinds() for help and error texts: "inferscope, gateway, vllm, ...".
std::string dialect_kind_list();

// TargetConfig is one scrape target. url is the full /metrics URL as given.
struct TargetConfig {
  std::string name;            // Prometheus job name; from NAME=URL, the config, or host_port
  std::string url;             // http(s)://host:port/path
  std::string kind{kAutoKind};  // a dialect kind, kAutoKind or kCustomKind
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
// KIND (a dialect kind) fixes the kind, else it stays kAutoKind (detected).
Result<TargetConfig> parse_target_url(std::string_view text);

// parse_queue_target_url parses "[NAME=]redis://HOST[:PORT][/DB]" (the --target form of a redis
// target; the scheme selects the kind). A password in the URL is refused (it would sit on the
// command line and in process listings): use password_file: or password_env: in the config.
Result<QueueTargetConfig> parse_queue_target_url(std::string_view text);

// is_queue_target_url tells whether a --target text names a redis target ("[NAME=]redis://...").
bool is_queue_target_url(std::string_view text);

}  // namespace inferscope::config
