// File: serve_command.cpp
// Flag wiring for `inferscope serve` and the run loop (wait for a signal or --duration, then stop).
#include "serve/serve_command.h"

#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>
#include <memory>

#include "serve/server.h"
#include "trace/trace_flags.h"

namespace inferscope::serve {
namespace {

struct ServeFlags {
  ServerOptions options;
  std::vector<std::string> faults;  // name=value, value as JSON
  double duration_s = 0;
  std::string log_level = "info";
  trace::TraceFlags trace;
};

// parse_fault_flags folds every --fault name=value into one FaultSet.
Result<FaultSet> parse_fault_flags(const std::vector<std::string>& flags) {
  nlohmann::json object = nlohmann::json::object();
  for (const std::string& flag : flags) {
    const auto eq = flag.find('=');
    if (eq == std::string::npos || eq == 0) {
      return make_error("cannot parse --fault '" + flag + "': expected name=value");
    }
    auto value = nlohmann::json::parse(flag.substr(eq + 1), nullptr, false);
    if (value.is_discarded()) {
      return make_error("cannot parse --fault '" + flag + "': value is not a number or JSON");
    }
    object[flag.substr(0, eq)] = value;
  }
  return parse_faults(object, FaultSet{});
}

// raise_fd_limit lifts the soft descriptor limit to the hard one: each stream holds a socket.
void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

void run_serve(ServeFlags& flags) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("serve"));
  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  auto faults = parse_fault_flags(flags.faults);
  if (!faults) throw CLI::ValidationError("--fault", faults.error().message);
  flags.options.faults = *faults;
  raise_fd_limit();
  // Signals are caught before the listening line is printed: a script may SIGTERM right after it.
  boost::asio::io_context waiter;
  boost::asio::signal_set signals(waiter, SIGINT, SIGTERM);
  auto server = Server::start(flags.options);
  if (!server) {
    std::fprintf(stderr, "inferscope serve: %s\n", server.error().message.c_str());
    throw CLI::RuntimeError(1);
  }
  std::printf("inferscope serve: listening on http://%s:%u\n", flags.options.host.c_str(),
              static_cast<unsigned>((*server)->port()));
  std::fflush(stdout);
  if ((*server)->metrics_port() != 0) {
    spdlog::info("serve: /metrics also on http://{}:{}/metrics", flags.options.host, (*server)->metrics_port());
  }
  if (flags.options.faults.any()) spdlog::info("serve: faults at start: {}", to_json(flags.options.faults).dump());
  signals.async_wait([&](const boost::system::error_code& ec, int number) {
    if (!ec) spdlog::info("serve: signal {} received, stopping", number);
    waiter.stop();
  });
  boost::asio::steady_timer timer(waiter);
  if (flags.duration_s > 0) {
    timer.expires_after(std::chrono::milliseconds(static_cast<std::int64_t>(flags.duration_s * 1000)));
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) spdlog::info("serve: --duration reached, stopping");
      waiter.stop();
    });
  }
  waiter.run();
  (*server)->stop();
  spdlog::info("serve: stopped");
}

void add_engine_flags(CLI::App& cmd, EngineOptions& e) {
  cmd.add_option("--profile", e.profile, "cost-model profile (e.g. llama-3.1-8b-h100-bf16, zero-cost)")
      ->capture_default_str();
  cmd.add_option("--profiles-path", e.profiles_path, "extra profile JSON file or folder");
  cmd.add_option("--max-num-seqs", e.max_num_seqs,
                 "max sequences per step; for seed-mock, requests running at once (default: the profile's "
                 "value, seed-mock 40, else 256)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-num-batched-tokens", e.max_num_batched_tokens, "token budget per step")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd.add_option("--max-model-len", e.max_model_len, "context length (prompt + output)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd.add_option("--kv-capacity-tokens", e.kv_capacity_tokens, "KV cache size in tokens (0 = profile's)");
  cmd.add_option("--block-size", e.block_size, "KV block size in tokens")->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", e.enable_prefix_caching,
               "reuse KV blocks of equal prompt prefixes");
  cmd.add_option("--speculative-tokens", e.speculative_tokens,
                 "draft tokens verified per decoding sequence and step (speculative decoding; 0 = off)")
      ->check(CLI::Range(0u, kMaxSpeculativeTokens))->capture_default_str();
  cmd.add_option("--speculative-acceptance", e.speculative_acceptance,
                 "chance each draft position is accepted while the ones before it were (0..1)")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd.add_option("--max-waiting", e.max_waiting, "waiting-queue bound; beyond it requests get 503")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd.add_option("--time-scale", e.time_scale, "simulated speed-up (10 = ten times faster)")
      ->check(CLI::PositiveNumber)->capture_default_str();
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  ServerOptions& o = flags->options;
  CLI::App* cmd = app.add_subcommand("serve", "OpenAI-compatible server over a simulated LLM engine");
  cmd->add_option("--host", o.host, "address to bind")->capture_default_str();
  cmd->add_option("--port", o.port, "API port (0 = ephemeral)")->capture_default_str();
  cmd->add_option("--metrics-port", o.metrics_port, "also serve /metrics on this port");
  cmd->add_option("--model", o.model_names, "served model name(s); the first is the default")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--dialects", o.dialects, "metric dialects: inferscope,vllm,gen_ai")
      ->delimiter(',')->check(CLI::IsMember({"inferscope", "vllm", "gen_ai"}))->capture_default_str();
  add_engine_flags(*cmd, o.engine);
  cmd->add_option("--data-parallel-size", o.data_parallel_size,
                  "engines (ranks) behind this API server, each with its own simulated GPU; requests go to "
                  "the least loaded (waiting*4+running), vllm:* series carry engine=\"<rank>\"")
      ->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--prefill-workers", o.disagg.prefill_workers,
                  "disaggregated serving: prefill workers (with --decode-workers); a router picks the workers, the "
                  "prompt's KV moves prefill -> decode over a simulated link (docs/disaggregation.md)")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--decode-workers", o.disagg.decode_workers, "disaggregated serving: decode workers (with --prefill-workers)")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--kv-link-gb-per-s", o.disagg.kv_link_gb_per_s, "disaggregated serving: KV link bandwidth, GB/s")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--kv-link-latency-ms", o.disagg.kv_link_latency_ms,
                  "disaggregated serving: KV link latency per transfer, model milliseconds")
      ->check(CLI::Range(0.0, 60000.0))->capture_default_str();
  cmd->add_option("--lora-modules", o.lora_modules,
                  "LoRA adapter names served beside the base model (NAME,NAME,...); a request names one in `model`")
      ->delimiter(',');
  cmd->add_option("--max-loras", o.engine.max_loras,
                  "GPU slots for LoRA adapters: at most this many adapters loaded; a request whose adapter is not "
                  "loaded waits for a slot free of running requests (default 1 with --lora-modules)")
      ->check(CLI::Range(1u, kMaxLoraAdapters));
  cmd->add_option("--seed", o.seed, "seed for request outputs without their own seed");
  cmd->add_flag("--enable-admin", o.enable_admin, "serve /admin/faults to loopback peers");
  cmd->add_flag("--no-gpu-series{false}", o.simulated_gpu,
                "export none of the simulated GPU's DCGM_FI_* gauges: the server shows no GPU to a scraper, as a "
                "CPU backend (llama.cpp's) does");
  cmd->add_option("--fault", flags->faults,
                  "fault at start, name=value (repeatable): decode_slowdown=3, kv_capacity=0.25, "
                  "'stall={\"for_ms\":500,\"every_s\":10}', error_rate=0.1, network_delay_ms=20, "
                  "'engine_slowdown={\"engine\":2,\"factor\":4}', ...");
  cmd->add_option("--max-body-bytes", o.max_body_bytes, "request bodies over this get 413")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--io-threads", o.io_threads, "HTTP io threads")->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--stream-shape", o.stream_shape,
                  "where a stream puts finish_reason: openai (a last chunk with an empty delta) or vllm "
                  "(on the last content chunk, as vLLM does)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, StreamShape>{{"openai", StreamShape::kOpenAi},
                                                                            {"vllm", StreamShape::kVllm}}))
      ->default_str("openai");
  cmd->add_option("--duration", flags->duration_s, "stop after this many seconds (0 = until a signal)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))->capture_default_str();
  trace::add_trace_flags(*cmd, flags->trace);
  cmd->callback([flags, cmd] {
    // vLLM's default --max-loras is 1.
    if (!flags->options.lora_modules.empty() && flags->options.engine.max_loras == 0) flags->options.engine.max_loras = 1;
    trace::apply_trace_flags(*cmd, flags->trace, flags->options.tracing);
    run_serve(*flags);
  });
}

}  // namespace inferscope::serve
