// File: cause_spec.h
// CauseSpec is everything fixed about one cause of DESIGN.md's stable list: its id, the stage
// its mechanism acts on, the stages it can move and how strongly (from which the stage shares
// are split), whether it runs on the host's CPUs, whether it needs a slowdown to be reported,
// and its next steps. Each family of causes defines its specs beside the evaluate that weighs
// their evidence (cause_family.h); cause_table() gathers them.
// Example: for (const CauseSpec& c : cause_table()) if (c.cpu_side) ...; to_string(CauseId::kLongPrompts)
// Pure values and functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dialect/dialect.h"

namespace inferscope::doctor {

// Stage names a pipeline stage by its dialect role (kQueue, kPrefill, kDecode, kStream ...).
using Stage = dialect::Role;

// CauseId is a cause of the stable list. Its order is the table's: findings of equal score and
// considered[] keep it.
enum class CauseId : std::uint8_t {
  // Data presence.
  kTargetDown,
  kMetricsMissing,
  // Load and request mix.
  kLoadIncrease,
  kLongPrompts,
  kLongOutputs,
  // KV and capacity.
  kKvCachePressure,
  kCapacityDrop,
  // Engine speed.
  kDecodeSlowdown,
  kPrefillSlowdown,
  // Stalls.
  kWorkerStall,
  kEngineStall,
  // Direct stages.
  kPreprocessSlowdown,
  kDependencySlowdown,
  kNetworkSlowdown,
  kGatewayQueue,
  // Where: one replica of several.
  kReplicaSlowdown,
  // Errors.
  kErrorSpike,
  // The job queue in front of the server.
  kWorkersDown,
  kQueueBacklog,
  kWorkerFailures,
  // The flow's last word: latency moved and no cause above fits (a finding, never a hypothesis).
  kUnexplained,
};

// to_string returns the stable id ("load_increase", "kv_cache_pressure", ...). Never fails.
std::string_view to_string(CauseId id);

// cause_from_string is the inverse of to_string; nullopt for an unknown id.
std::optional<CauseId> cause_from_string(std::string_view id);

// StageWeight says how strongly a cause's mechanism moves one stage, relative to the other
// causes that move it (1 = its own stage).
struct StageWeight {
  Stage stage;
  double weight;
};

struct CauseSpec {
  CauseId id;
  std::string_view name = {};  // the stable id of JSON and text output
  // The stage its mechanism acts on, reported when it explains no measured stage change;
  // nullopt for causes outside the pipeline (errors, data presence).
  std::optional<Stage> stage = std::nullopt;
  // The engine and direct stages it can move. A gateway's stages carry the engine stages they
  // stand for (stage_shares.h), so they are not listed.
  std::vector<StageWeight> weights = {};
  // Runs on the host's CPUs (tokenization, scheduling, HTTP, the gateway) or waits for them:
  // host CPU saturation is its evidence and first next step.
  bool cpu_side = false;
  // Reported only when latency changed (an error spike or missing data is news on its own).
  bool needs_slowdown = true;
  // What to do, most likely first. A family may pick among variants or name what it found.
  std::vector<std::string> next_steps = {};

  // weight_on returns the listed weight on `stage`, 0 when not listed.
  double weight_on(Stage stage) const;
};

// cause_table lists every cause once, in CauseId order (gathered from the families once).
std::span<const CauseSpec> cause_table();

// spec returns the table's entry for `id`.
const CauseSpec& spec(CauseId id);

}  // namespace inferscope::doctor
