#include "bench/bench_options.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/duration_text.h"
#include "loadgen/dataset_workload.h"

namespace inferscope::bench {
namespace {

Result<double> parse_rate(const std::string& text) {
  if (text == "inf") return 0.0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v > 0) || !std::isfinite(v)) {
    return make_error(fmt::format("cannot parse rate from --request-rate: '{}' is not a positive number or inf", text));
  }
  return v;
}

Result<std::string> read_api_key(const BenchOptions& o) {
  if (!o.api_key_env.empty() && !o.api_key_file.empty()) {
    return make_error("cannot read API key from --api-key-env and --api-key-file: give only one");
  }
  std::string key;
  if (!o.api_key_env.empty()) {
    const char* v = std::getenv(o.api_key_env.c_str());
    if (v == nullptr || *v == '\0') {
      return make_error(fmt::format("cannot read API key from --api-key-env: variable {} is not set", o.api_key_env));
    }
    key = v;
  } else if (!o.api_key_file.empty()) {
    std::ifstream in(o.api_key_file);
    if (!in) return make_error(fmt::format("cannot read API key from --api-key-file {}: cannot open file", o.api_key_file));
    std::stringstream ss;
    ss << in.rdbuf();
    key = ss.str();
  }
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.front()))) key.erase(0, 1);
  if (key.find_first_of("\r\n") != std::string::npos) {
    return make_error("cannot use API key from --api-key-env/--api-key-file: it contains a line break");
  }
  return key;
}

Result<std::unique_ptr<loadgen::Workload>> build_workload(const BenchOptions& o, bool chat) {
  if (o.dataset_name == "random") {
    std::vector<loadgen::WorkloadClass> classes;
    if (!o.mix.empty()) {
      auto mix = loadgen::parse_mix(o.mix, o.random_range_ratio);
      if (!mix) return mix.error();
      classes = std::move(*mix);
    } else {
      loadgen::WorkloadClass c{"default", 1, loadgen::range_length(o.random_input_len, o.random_range_ratio),
                               loadgen::range_length(o.random_output_len, o.random_range_ratio)};
      if (!o.input_len_dist.empty()) {
        auto d = loadgen::parse_length_distribution(o.input_len_dist, "--input-len-dist");
        if (!d) return d.error();
        c.input = *d;
      }
      if (!o.output_len_dist.empty()) {
        auto d = loadgen::parse_length_distribution(o.output_len_dist, "--output-len-dist");
        if (!d) return d.error();
        c.output = *d;
      }
      classes.push_back(c);
    }
    if (o.shared_prefix_ratio < 0 || o.shared_prefix_ratio > 1) {
      return make_error("cannot use --shared-prefix-ratio: must be within [0, 1]");
    }
    const loadgen::PrefixPool pool{o.prefix_pool, o.prefix_len};
    if ((o.prefix_pool > 0) != (o.prefix_len > 0)) {
      return make_error("cannot use --prefix-pool without --prefix-len (or the other way round): give both");
    }
    if (pool.active() && o.shared_prefix_ratio > 0) {
      return make_error("cannot combine --prefix-pool with --shared-prefix-ratio: give one kind of shared prefix");
    }
    return std::unique_ptr<loadgen::Workload>(
        new loadgen::SyntheticWorkload(std::move(classes), o.shared_prefix_ratio, o.seed, pool));
  }
  if (o.prefix_pool > 0 || o.prefix_len > 0) {
    return make_error(fmt::format("cannot use --prefix-pool with --dataset-name {}: it shapes random prompts only",
                                  o.dataset_name));
  }
  if (o.dataset_path.empty()) {
    return make_error(fmt::format("cannot load dataset {} from --dataset-path: no path given", o.dataset_name));
  }
  if (o.dataset_name == "jsonl") {
    auto w = loadgen::load_jsonl_workload(o.dataset_path, o.random_output_len);
    if (!w) return w.error();
    if (!chat) {
      for (std::size_t i = 0; i < (*w)->size(); ++i) {
        if (!(*w)->next(i).messages_json.empty()) {
          return make_error(fmt::format("cannot send entry {} of {} to a completions --endpoint: it has messages, not a prompt",
                                        i + 1, o.dataset_path));
        }
      }
    }
    return std::unique_ptr<loadgen::Workload>(std::move(*w));
  }
  if (o.dataset_name == "sharegpt") {
    auto w = loadgen::load_sharegpt_workload(o.dataset_path, o.sharegpt_output_len, o.seed);
    if (!w) return w.error();
    return std::unique_ptr<loadgen::Workload>(std::move(*w));
  }
  return make_error(fmt::format("cannot use --dataset-name {}: expected random, sharegpt or jsonl", o.dataset_name));
}

// build_plan turns --stages or --request-rate/--max-concurrency/--arrival/--burstiness into a plan.
Result<loadgen::LoadPlan> build_plan(const BenchOptions& o, double rate) {
  loadgen::LoadPlan plan;
  plan.burstiness = o.burstiness;
  if (!(o.burstiness > 0)) return make_error("cannot use --burstiness: must be > 0");
  if (o.arrival.empty()) {
    plan.kind = o.burstiness == 1.0 ? loadgen::ArrivalKind::kPoisson : loadgen::ArrivalKind::kGamma;
  } else if (o.arrival == "constant") {
    plan.kind = loadgen::ArrivalKind::kConstant;
  } else if (o.arrival == "poisson") {
    plan.kind = loadgen::ArrivalKind::kPoisson;
  } else if (o.arrival == "gamma") {
    plan.kind = loadgen::ArrivalKind::kGamma;
  } else {
    return make_error(fmt::format("cannot use --arrival {}: expected constant, poisson or gamma", o.arrival));
  }
  if (!o.stages.empty()) {
    if (o.request_rate != "inf" || o.max_concurrency > 0) {
      return make_error("cannot combine --stages with --request-rate or --max-concurrency: put them in each stage");
    }
    auto stages = loadgen::parse_stages(o.stages);
    if (!stages) return stages.error();
    plan.stages = std::move(*stages);
  } else {
    plan.stages = {loadgen::LoadStage{loadgen::Nanos(0), rate, o.max_concurrency}};
  }
  return plan;
}

}  // namespace

Result<RunSetup> build_run_setup(const BenchOptions& o) {
  RunSetup s;
  auto target = loadgen::parse_base_url(o.base_url);
  if (!target) return target.error();
  s.config.target = *target;
  s.config.client.tls = {.ca_file = o.ca_file, .verify = !o.insecure};
  if (o.endpoint.empty() || o.endpoint.front() != '/') {
    return make_error(fmt::format("cannot use --endpoint {}: must start with '/'", o.endpoint));
  }
  auto rate = parse_rate(o.request_rate);
  if (!rate) return rate.error();
  auto plan = build_plan(o, *rate);
  if (!plan) return plan.error();
  s.config.plan = *plan;
  s.config.seed = o.seed;
  auto timeout = common::parse_duration(o.timeout, "--timeout");
  if (!timeout) return timeout.error();
  if (timeout->count() == 0) return make_error("cannot use --timeout 0: must be > 0");
  s.config.request_timeout = *timeout;
  if (o.io_threads < 1 || o.io_threads > 64) return make_error("cannot use --io-threads: must be 1..64");
  s.config.io_threads = o.io_threads;
  loadgen::RunBounds& b = s.config.bounds;
  b.max_requests = o.num_prompts;
  if (!o.duration.empty()) {
    auto d = common::parse_duration(o.duration, "--duration");
    if (!d) return d.error();
    b.max_duration = *d;
  }
  if (!o.warmup.empty()) {
    if (common::has_duration_unit(o.warmup)) {
      auto d = common::parse_duration(o.warmup, "--warmup");
      if (!d) return d.error();
      b.warmup_time = *d;
    } else {
      char* end = nullptr;
      unsigned long long n = std::strtoull(o.warmup.c_str(), &end, 10);
      if (end != o.warmup.c_str() + o.warmup.size() || o.warmup[0] == '-') {
        return make_error(fmt::format("cannot parse --warmup '{}': expected a request count or a duration like 10s", o.warmup));
      }
      b.warmup_requests = n;
    }
  }
  bool timed_plan = !o.stages.empty();
  if (b.max_requests == 0 && b.max_duration.count() == 0 && !timed_plan) b.max_requests = 1000;  // vLLM's default
  bool herd = s.config.plan.stages.size() == 1 && s.config.plan.stages[0].rate == 0 && s.config.plan.stages[0].concurrency == 0;
  if (herd && b.max_requests == 0) {
    return make_error("cannot send all requests at once (--request-rate inf without --max-concurrency) for a --duration: give --num-prompts");
  }
  if (!o.slo.empty()) {
    auto slo = parse_slo(o.slo);
    if (!slo) return slo.error();
    s.slo = *slo;
  }
  if (o.fail_under_goodput != -1) {
    if (!(o.fail_under_goodput >= 0 && o.fail_under_goodput <= 1)) {
      return make_error("cannot use --fail-under-goodput: must be a fraction from 0 to 1 (e.g. 0.95)");
    }
    if (s.slo.empty()) return make_error("cannot use --fail-under-goodput without --slo: goodput needs objectives");
    s.fail_under_goodput = o.fail_under_goodput;
  }
  loadgen::RequestOptions& r = s.request;
  r.model = o.model;
  if (o.lora_adapters > 64) return make_error("cannot use --lora-adapters " + std::to_string(o.lora_adapters) + ": at most 64");
  for (std::uint32_t a = 1; a <= o.lora_adapters; ++a) r.lora_names.push_back(o.lora_prefix + std::to_string(a));
  r.endpoint = o.endpoint;
  r.chat = o.endpoint.find("chat") != std::string::npos;
  r.stream = !o.no_stream;
  r.include_usage = !o.no_include_usage;
  r.ignore_eos = o.ignore_eos;
  for (const std::string& h : o.headers) {
    std::size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0 || h.find_first_of("\r\n") != std::string::npos) {
      return make_error(fmt::format("cannot parse --header '{}': expected 'Name: value'", h));
    }
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers.emplace_back(h.substr(0, colon), value);
  }
  auto key = read_api_key(o);
  if (!key) return key.error();
  r.api_key = std::move(*key);
  auto workload = build_workload(o, r.chat);
  if (!workload) return workload.error();
  s.workload = std::move(*workload);
  RunInfo& i = s.info;
  i.base_url = o.base_url;
  i.endpoint = o.endpoint;
  i.model = o.model;
  i.dataset = o.dataset_name;
  i.arrival = s.config.plan.kind == loadgen::ArrivalKind::kConstant ? "constant" : s.config.plan.kind == loadgen::ArrivalKind::kPoisson ? "poisson" : "gamma";
  i.request_rate = *rate;
  i.burstiness = o.burstiness;
  i.max_concurrency = o.max_concurrency;
  i.num_prompts = b.max_requests;
  i.duration_s = static_cast<double>(b.max_duration.count()) / 1e9;
  i.seed = o.seed;
  i.streaming = r.stream;
  i.stages = o.stages;
  i.class_names = s.workload->class_names();
  return s;
}

}  // namespace inferscope::bench
