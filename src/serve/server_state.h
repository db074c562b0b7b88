// File: server_state.h
// ServerState is what every connection of one Server shares: options, engines, metrics, tokenizer,
// the HTTP-layer faults and the per-request seed counter. Internal to src/serve (not installed).
// Example: auto faults = state.faults(); if (faults.error_rate > 0) ...
// Thread-safe: immutable after Server::start except faults (mutex) and the seed counter (atomic).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/common/result.h"

#include <inferscope/metrics/registry.h>

#include "serve/engine/faults.h"
#include "serve/engine/text_generator.h"
#include "serve/engine/tokenizer.h"
#include "serve/server_options.h"
#include "trace/request_spans.h"
#include "trace/span_exporter.h"

namespace inferscope::serve {

class Engine;
class ServeMetrics;
class DisaggFleet;

struct ServerState {
  // Constructor and destructor live in server.cpp, where Engine and ServeMetrics are complete.
  explicit ServerState(ServerOptions opts);
  ~ServerState();

  // faults returns a copy of the active faults (HTTP-layer ones are applied per request).
  FaultSet faults() const {
    std::lock_guard lock(faults_mu);
    return active_faults;
  }
  // set_faults replaces the active faults here and in every engine (each rank gets
  // faults_for_rank). The caller checks the rank of engine_slowdown (check_fault_ranks).
  void set_faults(FaultSet faults);
  // check_fault_ranks fails when engine_slowdown names a rank this server does not run.
  Result<void> check_fault_ranks(const FaultSet& faults) const;

  // pick_engine chooses the rank for a new request like vLLM's data-parallel coordinator: the
  // least loaded by waiting*4 + running, ties going to the first from a start index that rotates
  // per request (so equal ranks take turns). One rank: 0, no stats read.
  // first/count restrict the choice to engines first..first+count-1 (count 0: all).
  std::uint32_t pick_engine(std::uint32_t first = 0, std::uint32_t count = 0);

  // served_model returns the configured name equal to `requested` (the first one for an empty
  // request), or an empty view when it is not served.
  std::string_view served_model(std::string_view requested) const {
    if (requested.empty()) return options.model_names.front();
    for (const std::string& name : options.model_names) {
      if (name == requested) return name;
    }
    for (const std::string& name : options.lora_modules) {
      if (name == requested) return name;
    }
    return {};
  }

  // lora_of returns the adapter number (1..N, --lora-modules order) of a served name, 0 for a
  // base model name.
  std::uint32_t lora_of(std::string_view served) const {
    for (std::size_t i = 0; i < options.lora_modules.size(); ++i)
      if (options.lora_modules[i] == served) return static_cast<std::uint32_t>(i + 1);
    return 0;
  }

  // next_seed returns a fresh per-request seed derived from options.seed.
  std::uint64_t next_seed() { return options.seed * 0x9e3779b97f4a7c15ULL + seed_counter.fetch_add(1); }

  // time_scale_divisor converts model milliseconds of HTTP-layer faults to real milliseconds.
  double real_ms(double model_ms) const { return model_ms / options.engine.time_scale; }

  ServerOptions options;
  metrics::Registry registry;
  std::unique_ptr<ServeMetrics> metrics;
  std::vector<std::unique_ptr<Engine>> engines;  // one per data-parallel rank, index = rank
  // A disaggregated server (options.disagg): the router and KV link over `engines`, which are
  // then the prefill workers followed by the decode workers. Null otherwise.
  std::unique_ptr<DisaggFleet> disagg;
  std::unique_ptr<trace::SpanExporter> tracer;  // null when --otlp-endpoint is not given
  Tokenizer tokenizer;
  TextGenerator text;
  std::string models_body;  // GET /v1/models, built once
  std::atomic<std::uint64_t> seed_counter{1};
  std::atomic<bool> stopping{false};
  std::atomic<std::uint32_t> dispatch_start{0};  // pick_engine's rotating start index

  mutable std::mutex faults_mu;
  FaultSet active_faults;  // guarded by faults_mu
};

}  // namespace inferscope::serve
