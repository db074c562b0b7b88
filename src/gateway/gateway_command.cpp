// File: gateway_command.cpp
// Flag wiring for `inferscope gateway`: --config first, then flags override it; run until a
// signal, then drain in-flight requests up to the drain timeout.
#include "gateway/gateway_command.h"

#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>

#include "gateway/gateway.h"
#include "trace/trace_flags.h"

namespace inferscope::gateway {

namespace {

struct GatewayFlags {
  std::vector<std::string> upstreams;
  std::string config_file;
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  int metrics_port = -1;
  unsigned max_concurrency = 64;
  unsigned max_queue = 256;
  std::string queue_timeout = "30s";
  std::string drain_timeout = "30s";
  unsigned io_threads = 1;
  std::string log_level = "info";
  trace::TraceFlags trace;
  CLI::App* cmd = nullptr;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "inferscope gateway: %s\n", message.c_str());
  throw CLI::RuntimeError(1);
}

// raise_fd_limit lifts the soft descriptor limit to the hard one: every idle client costs one.
void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

GatewayConfig build_config(const GatewayFlags& f) {
  GatewayConfig config;
  if (!f.config_file.empty()) {
    auto loaded = load_gateway_config_file(f.config_file);
    if (!loaded) die(loaded.error().message);
    config = std::move(*loaded);
  }
  auto given = [&](const char* name) { return f.cmd->count(name) > 0; };
  if (given("--host") || f.config_file.empty()) config.host = f.host;
  if (given("--port") || f.config_file.empty()) config.port = f.port;
  if (f.metrics_port >= 0) config.metrics_port = static_cast<std::uint16_t>(f.metrics_port);
  if (given("--max-concurrency")) config.max_concurrency = f.max_concurrency;
  if (given("--max-queue")) config.max_queue = f.max_queue;
  if (given("--io-threads")) config.io_threads = f.io_threads;
  if (given("--queue-timeout")) {
    auto d = parse_duration(f.queue_timeout);
    if (!d || d->count() <= 0) die("--queue-timeout: must be a duration such as 500ms or 30s (got '" + f.queue_timeout + "')");
    config.queue_timeout = *d;
  }
  if (given("--drain-timeout")) {
    auto d = parse_duration(f.drain_timeout);
    if (!d) die("--drain-timeout: must be a duration such as 30s (got '" + f.drain_timeout + "')");
    config.drain_timeout = *d;
  }
  for (const std::string& url : f.upstreams) {
    if (auto ok = add_upstream_url(config, url); !ok) die(ok.error().message);
  }
  trace::apply_trace_flags(*f.cmd, f.trace, config.tracing);
  return config;
}

void run_gateway(const GatewayFlags& flags) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("gateway"));
  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  GatewayConfig config = build_config(flags);
  const std::chrono::milliseconds drain = config.drain_timeout;
  const std::string host = config.host;
  raise_fd_limit();
  boost::asio::io_context waiter;
  boost::asio::signal_set signals(waiter, SIGINT, SIGTERM);
  auto gateway = Gateway::start(std::move(config));
  if (!gateway) die(gateway.error().message);
  std::printf("inferscope gateway: listening on http://%s:%u\n", host.c_str(), static_cast<unsigned>((*gateway)->port()));
  std::fflush(stdout);
  if ((*gateway)->metrics_port() != 0) {
    spdlog::info("gateway: /metrics on http://{}:{}/metrics", host, (*gateway)->metrics_port());
  }
  signals.async_wait([&](const boost::system::error_code& ec, int number) {
    if (!ec) spdlog::info("gateway: signal {} received, draining for up to {} ms", number, drain.count());
    waiter.stop();
  });
  waiter.run();
  (*gateway)->stop(drain);
  spdlog::info("gateway: stopped");
}

}  // namespace

void add_gateway_command(CLI::App& app) {
  auto flags = std::make_shared<GatewayFlags>();
  CLI::App* cmd = app.add_subcommand("gateway", "instrumenting reverse proxy for OpenAI-compatible servers");
  flags->cmd = cmd;
  cmd->add_option("--upstream", flags->upstreams, "upstream base URL (http:// or https://); repeat for several");
  cmd->add_option("--config", flags->config_file, "YAML config (models -> upstreams, limits, keys, timeouts)");
  cmd->add_option("--host", flags->host, "listen address")->capture_default_str();
  cmd->add_option("--port", flags->port, "listen port (0 = ephemeral)")->capture_default_str();
  cmd->add_option("--metrics-port", flags->metrics_port, "serve /metrics on this port (0 = ephemeral)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--max-concurrency", flags->max_concurrency, "concurrent requests per upstream")
      ->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--max-queue", flags->max_queue, "waiting requests per upstream before 429")
      ->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--queue-timeout", flags->queue_timeout, "longest wait in the queue before 503")
      ->capture_default_str();
  cmd->add_option("--drain-timeout", flags->drain_timeout, "on SIGTERM, how long in-flight requests may finish")
      ->capture_default_str();
  cmd->add_option("--io-threads", flags->io_threads, "HTTP io threads")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error")->capture_default_str();
  trace::add_trace_flags(*cmd, flags->trace);
  cmd->callback([flags] { run_gateway(*flags); });
}

}  // namespace inferscope::gateway
