#include "loadgen/arrival_schedule.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "common/duration_text.h"

namespace inferscope::loadgen {
namespace {

Result<double> parse_number(std::string_view text, std::string_view what) {
  std::string copy(text);
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(v) || v < 0) {
    return make_error(fmt::format("cannot parse {} from --stages: '{}' is not a non-negative number", what, text));
  }
  return v;
}

Result<LoadStage> parse_stage(std::string_view text) {
  LoadStage stage;
  std::size_t colon = text.find(':');
  auto duration = common::parse_duration(text.substr(0, colon), "--stages");
  if (!duration) return duration.error();
  stage.duration = *duration;
  if (stage.duration.count() == 0) return make_error("cannot parse stage from --stages: a stage needs a duration > 0");
  while (colon != std::string_view::npos) {
    text = text.substr(colon + 1);
    colon = text.find(':');
    std::string_view item = text.substr(0, colon);
    std::size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    if (eq == std::string_view::npos) return make_error(fmt::format("cannot parse stage from --stages: '{}' is not key=value", item));
    auto value = parse_number(item.substr(eq + 1), key);
    if (!value) return value.error();
    if (key == "rate") {
      stage.rate = *value;
    } else if (key == "concurrency") {
      stage.concurrency = static_cast<std::uint32_t>(*value);
    } else {
      return make_error(fmt::format("cannot parse stage from --stages: unknown key '{}' (rate, concurrency)", key));
    }
  }
  return stage;
}

}  // namespace

Result<std::vector<LoadStage>> parse_stages(std::string_view text) {
  std::vector<LoadStage> stages;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    auto stage = parse_stage(text.substr(0, comma));
    if (!stage) return stage.error();
    stages.push_back(*stage);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (stages.empty()) return make_error("cannot parse stages from --stages: empty list");
  return stages;
}

ArrivalSchedule::ArrivalSchedule(LoadPlan plan, std::uint64_t seed) : plan_(std::move(plan)), rng_(seed) {
  if (plan_.stages.empty()) throw std::invalid_argument("ArrivalSchedule: no stages");
  Nanos end{0};
  for (std::size_t i = 0; i < plan_.stages.size(); ++i) {
    const LoadStage& s = plan_.stages[i];
    if (!(s.rate >= 0) || !std::isfinite(s.rate)) throw std::invalid_argument("ArrivalSchedule: bad rate");
    bool last = i + 1 == plan_.stages.size();
    if (s.duration.count() <= 0) {
      if (!last) throw std::invalid_argument("ArrivalSchedule: only the last stage may be open-ended");
      end = Nanos::max();
    } else {
      end += s.duration;
    }
    ends_.push_back(end);
  }
  if (plan_.kind == ArrivalKind::kGamma && !(plan_.burstiness > 0)) {
    throw std::invalid_argument("ArrivalSchedule: burstiness must be > 0");
  }
}

std::size_t ArrivalSchedule::stage_index_at(Nanos t) const {
  for (std::size_t i = 0; i < ends_.size(); ++i) {
    if (t < ends_[i]) return i;
  }
  return ends_.size() - 1;
}

Nanos ArrivalSchedule::stage_end(std::size_t i) const { return ends_[i]; }

Nanos ArrivalSchedule::draw_gap(double rate) {
  double mean_s = 1.0 / rate;
  double gap_s = mean_s;
  switch (plan_.kind) {
    case ArrivalKind::kConstant:
      break;
    case ArrivalKind::kPoisson:
      gap_s = std::exponential_distribution<double>(rate)(rng_);
      break;
    case ArrivalKind::kGamma:
      gap_s = std::gamma_distribution<double>(plan_.burstiness, mean_s / plan_.burstiness)(rng_);
      break;
  }
  return Nanos(static_cast<std::int64_t>(gap_s * 1e9));
}

std::optional<Nanos> ArrivalSchedule::next(Nanos previous) {
  Nanos t = previous;
  // Walk forward through stages: a gap that crosses a stage boundary is redrawn from the boundary
  // at the new stage's rate (exact for Poisson, which is memoryless; a close approximation else).
  for (std::size_t i = stage_index_at(t); i < plan_.stages.size(); ++i) {
    if (t >= ends_[i]) continue;
    const LoadStage& s = plan_.stages[i];
    if (s.rate <= 0) return t;  // closed loop or all-at-once: the caller paces by free slots
    Nanos candidate = t + draw_gap(s.rate);
    if (candidate < ends_[i]) return candidate;
    t = ends_[i];
  }
  return std::nullopt;
}

}  // namespace inferscope::loadgen
