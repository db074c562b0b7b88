#include "loadgen/workload.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace inferscope::loadgen {
namespace {

// Two-to-four-letter words: one token each for inferscope serve's tokenizer (ceil(len/4)).
constexpr std::string_view kWords[] = {
    "the", "of", "and", "to", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are",
    "with", "as", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by",
    "hot", "word", "but", "what", "some", "we", "can", "out", "other", "were", "all", "there",
    "when", "up", "use", "your", "how", "said", "an", "each", "she", "which", "do", "their",
    "time", "if", "will", "way", "about", "many", "then", "them", "write", "would", "like", "so",
    "these"};
constexpr std::size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);
constexpr std::uint32_t kMaxPrefixWords = 1u << 16;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void append_words(std::string& out, std::uint32_t count, WorkloadRng& rng) {
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string_view w = kWords[rng() % kWordCount];
    // Only 4-letter-or-shorter words are one token; "other"/"there"/... are dropped to "the".
    if (w.size() > 4) w = "the";
    if (!out.empty()) out.push_back(' ');
    out.append(w);
  }
}

}  // namespace

WorkloadRng request_rng(std::uint64_t seed, std::uint64_t index) {
  return WorkloadRng(splitmix64(seed ^ splitmix64(index + 1)));
}

Result<std::vector<WorkloadClass>> parse_mix(std::string_view text, double range_ratio) {
  std::vector<WorkloadClass> classes;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string item(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    char name[64] = {};
    double weight = 0;
    unsigned in = 0, out = 0;
    int consumed = 0;
    if (std::sscanf(item.c_str(), "%63[^:]:%lf:%u:%u%n", name, &weight, &in, &out, &consumed) != 4 ||
        static_cast<std::size_t>(consumed) != item.size() || !(weight > 0) || in == 0 || out == 0) {
      return make_error(fmt::format("cannot parse class from --mix: '{}' is not name:weight:input_len:output_len", item));
    }
    classes.push_back({name, weight, range_length(in, range_ratio), range_length(out, range_ratio)});
  }
  if (classes.empty()) return make_error("cannot parse classes from --mix: empty list");
  return classes;
}

SyntheticWorkload::SyntheticWorkload(std::vector<WorkloadClass> classes, double prefix_ratio, std::uint64_t seed,
                                     PrefixPool pool)
    : classes_(std::move(classes)), prefix_ratio_(std::clamp(prefix_ratio, 0.0, 1.0)), seed_(seed), pool_(pool) {
  if (classes_.empty()) throw std::invalid_argument("SyntheticWorkload: no classes");
  if (pool_.active() && prefix_ratio_ > 0) throw std::invalid_argument("SyntheticWorkload: a prefix pool and a prefix ratio");
  double total = 0;
  double max_input = 0;
  for (const WorkloadClass& c : classes_) {
    if (!(c.weight > 0)) throw std::invalid_argument("SyntheticWorkload: weight must be > 0");
    total += c.weight;
    cumulative_.push_back(total);
    names_.push_back(c.name);
    max_input = std::max(max_input, c.input.kind == LengthDistribution::Kind::kUniform ? c.input.b : c.input.a * 4);
  }
  if (prefix_ratio_ > 0) {
    prefix_words_ = static_cast<std::uint32_t>(std::min<double>(kMaxPrefixWords, std::ceil(max_input * prefix_ratio_) + 1));
    WorkloadRng rng(splitmix64(seed ^ 0x5eed));
    append_words(prefix_, prefix_words_, rng);
  }
}

RequestSpec SyntheticWorkload::next(std::uint64_t index) const {
  WorkloadRng rng = request_rng(seed_, index);
  RequestSpec spec;
  double pick = std::uniform_real_distribution<double>(0, cumulative_.back())(rng);
  spec.class_id = static_cast<std::uint16_t>(
      std::min<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), pick) - cumulative_.begin(),
                            classes_.size() - 1));
  const WorkloadClass& c = classes_[spec.class_id];
  spec.input_tokens = c.input.sample(rng);
  spec.max_tokens = c.output.sample(rng);
  auto shared = static_cast<std::uint32_t>(std::min<double>(
      {std::round(prefix_ratio_ * spec.input_tokens), static_cast<double>(prefix_words_), static_cast<double>(spec.input_tokens)}));
  spec.prompt.reserve(static_cast<std::size_t>(spec.input_tokens) * 5);
  if (pool_.active()) {
    // Each prefix is its own seeded word stream, made on the fly: a pool of any size costs no
    // memory, and prefix k reads the same whatever else is drawn.
    const std::uint64_t k = rng() % pool_.count;
    WorkloadRng prefix_rng(splitmix64(seed_ ^ 0x9f1e ^ splitmix64(k + 1)));
    shared = std::min(pool_.tokens, spec.input_tokens);
    append_words(spec.prompt, shared, prefix_rng);
  } else if (shared > 0) {
    // The prefix is words joined by single spaces: cut after the shared-th word.
    std::size_t pos = 0;
    for (std::uint32_t i = 0; i < shared && pos != std::string::npos; ++i) pos = prefix_.find(' ', pos + 1);
    spec.prompt.assign(prefix_, 0, pos == std::string::npos ? prefix_.size() : pos);
  }
  append_words(spec.prompt, spec.input_tokens - shared, rng);
  return spec;
}

}  // namespace inferscope::loadgen
