// File: workload.h
// Workload yields the request for each dispatch index: a prompt (or chat messages), an output
// budget and a workload class. SyntheticWorkload draws lengths from distributions (a weighted mix
// of classes, a shared prefix for prefix caching); dataset_workload.h serves files.
// Example: SyntheticWorkload w({{"default", 1, in, out}}, 0.0, 42); RequestSpec r = w.next(0);
// next() is const and deterministic in (seed, index), so it is thread-safe. Never logs prompts.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/common/result.h"
#include "loadgen/length_distribution.h"

namespace inferscope::loadgen {

// RequestSpec is one request's content. Exactly one of prompt / messages_json is set.
struct RequestSpec {
  std::string prompt;         // raw text
  std::string messages_json;  // a serialized JSON array of chat messages (from a dataset)
  std::uint32_t input_tokens = 0;  // client estimate; replaced by the server's usage if sent
  std::uint32_t max_tokens = 0;
  std::uint16_t class_id = 0;
};

// Workload is the source of requests.
class Workload {
 public:
  virtual ~Workload() = default;
  // next returns the request for dispatch `index`. Deterministic, const, cheap (builds a string).
  virtual RequestSpec next(std::uint64_t index) const = 0;
  // class_names names the classes; class_id indexes it.
  virtual const std::vector<std::string>& class_names() const = 0;
};

// WorkloadClass is one entry of a mix: its name, relative weight and length distributions.
struct WorkloadClass {
  std::string name;
  double weight = 1;
  LengthDistribution input;
  LengthDistribution output;
};

// parse_mix reads "short:3:128:64,long:1:2048:1024" (name:weight:input:output, lengths widened by
// `range_ratio` like --random-range-ratio). Errors name --mix.
Result<std::vector<WorkloadClass>> parse_mix(std::string_view text, double range_ratio);

// PrefixPool is a set of `count` distinct prefixes of `tokens` tokens each (a chat service's
// system prompts, conversations resumed): each request starts with one of them, drawn uniformly.
// With a pool that fits the server's prefix cache the hit rate is about tokens / prompt length;
// more distinct prefixes than the cache holds, or a new pool (another seed), lowers it.
struct PrefixPool {
  std::uint32_t count = 0;   // 0 = no pool
  std::uint32_t tokens = 0;  // each prefix's length; a shorter prompt takes its first words only
  bool active() const { return count > 0 && tokens > 0; }
};

// SyntheticWorkload builds prompts of one-token words (each word is one token for inferscope
// serve's tokenizer and about one for BPE tokenizers); the first round(prefix_ratio * input)
// tokens of every prompt come from one fixed seeded prefix so prefix caches can hit, or, with a
// pool, the first pool.tokens come from one of the pool's prefixes.
class SyntheticWorkload final : public Workload {
 public:
  // SyntheticWorkload copies `classes` (at least one, weights > 0, else std::invalid_argument).
  // A pool and a prefix_ratio > 0 together are std::invalid_argument (bench_options rejects them).
  SyntheticWorkload(std::vector<WorkloadClass> classes, double prefix_ratio, std::uint64_t seed,
                    PrefixPool pool = {});
  RequestSpec next(std::uint64_t index) const override;
  const std::vector<std::string>& class_names() const override { return names_; }

 private:
  std::vector<WorkloadClass> classes_;
  std::vector<std::string> names_;
  std::vector<double> cumulative_;
  double prefix_ratio_;
  std::uint64_t seed_;
  PrefixPool pool_;
  std::string prefix_;  // a long shared prefix; prompts take its first words
  std::uint32_t prefix_words_ = 0;
};

// request_rng returns the RNG for dispatch `index`: independent streams per index, so a request's
// content does not depend on the order requests were generated in.
WorkloadRng request_rng(std::uint64_t seed, std::uint64_t index);

}  // namespace inferscope::loadgen
