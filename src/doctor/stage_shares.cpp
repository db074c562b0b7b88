#include "doctor/stage_shares.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace inferscope::doctor::detail {
namespace {

constexpr std::array kPipeline = {Stage::kQueueWait,    Stage::kGatewayQueue, Stage::kRoute,      Stage::kUpstreamConnect,
                                  Stage::kPreprocess,   Stage::kDependency,   Stage::kQueue,      Stage::kPrefill,
                                  Stage::kKvTransfer,   Stage::kDecode,       Stage::kInference,  Stage::kPostprocess,
                                  Stage::kSend,         Stage::kUpstreamTtft, Stage::kStream};
constexpr std::array kStreamStandsFor = {Stage::kDecode};
constexpr std::array kUpstreamTtftStandsFor = {Stage::kQueue, Stage::kPrefill};

// weight_on is a cause's weight on a stage; a gateway stage takes the strongest of the engine
// stages it stands for.
double weight_on(const CauseSpec& cause, Stage stage) {
  std::span<const Stage> engine = stands_for(stage);
  if (engine.empty()) return cause.weight_on(stage);
  double w = 0;
  for (Stage s : engine) w = std::max(w, cause.weight_on(s));
  return w;
}

// split shares a stage's change among the causes that can move it, by strength x weight. A cap
// (seconds per request) bounds what one cause's mechanism can physically add to the stage; what
// a capped cause cannot take goes to the others by weight, else stays unexplained.
void split(Evaluation& e, Stage stage) {
  double delta = e.stage_delta(stage);
  if (delta <= 0) return;
  // Prefill-side causes are bounded on the decode (and the stream standing for it).
  std::span<const Stage> engine = stands_for(stage);
  bool decode_side = stage == Stage::kDecode || std::find(engine.begin(), engine.end(), Stage::kDecode) != engine.end();
  struct Share {
    Hypothesis* hypothesis;
    double weight;
    double cap;  // seconds per request; infinite when unbounded
    double given = 0;
    bool full = false;
  };
  std::vector<Share> shares;
  for (const CauseSpec& cause : cause_table()) {
    double w = weight_on(cause, stage);
    Hypothesis* h = w > 0 ? e.find(cause.id) : nullptr;
    if (!h) continue;
    auto cap = e.found.decode_caps.find(cause.id);
    shares.push_back({h, w, decode_side && cap != e.found.decode_caps.end() ? cap->second : INFINITY});
  }
  double left = delta;
  for (int round = 0; round < 8 && left > 1e-12; ++round) {
    double total = 0;
    for (const Share& s : shares)
      if (!s.full) total += s.hypothesis->strength * s.weight;
    if (total <= 0) break;
    double handed = 0;
    for (Share& s : shares) {
      if (s.hypothesis->strength <= 0 || s.full) continue;
      double add = left * s.hypothesis->strength * s.weight / total;
      if (s.given + add >= s.cap) {
        add = std::max(0.0, s.cap - s.given);
        s.full = true;
      }
      s.given += add;
      handed += add;
    }
    left -= handed;
  }
  const std::string name(dialect::to_string(stage));
  for (const Share& s : shares)
    if (s.given > 0) s.hypothesis->portions[name] += s.given;
}

}  // namespace

std::span<const Stage> pipeline() { return kPipeline; }

std::span<const Stage> stands_for(Stage stage) {
  if (stage == Stage::kStream) return kStreamStandsFor;
  if (stage == Stage::kUpstreamTtft) return kUpstreamTtftStandsFor;
  return {};
}

std::optional<Stage> gateway_stage_of(Stage engine_stage) {
  for (Stage gateway : {Stage::kStream, Stage::kUpstreamTtft}) {
    std::span<const Stage> engine = stands_for(gateway);
    if (std::find(engine.begin(), engine.end(), engine_stage) != engine.end()) return gateway;
  }
  return std::nullopt;
}

void assign_shares(Evaluation& e) {
  for (Stage stage : pipeline()) {
    // A gateway stage carries engine causes only where the engine's own stages are not measured
    // (they would count the same time twice).
    std::span<const Stage> engine = stands_for(stage);
    if (std::any_of(engine.begin(), engine.end(), [&](Stage s) { return e.measured(s); })) continue;
    split(e, stage);
  }
}

}  // namespace inferscope::doctor::detail
