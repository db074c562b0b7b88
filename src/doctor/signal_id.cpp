#include "doctor/signal_id.h"

#include <array>
#include <utility>

namespace inferscope::doctor {
namespace {

// The one table of signal ids, in enum order (checked below).
constexpr std::array<std::pair<SignalId, std::string_view>, 50> kNames{{
    {SignalId::kE2e, "e2e"},
    {SignalId::kTtft, "ttft"},
    {SignalId::kTpot, "tpot"},
    {SignalId::kItl, "itl"},
    {SignalId::kStep, "step"},
    {SignalId::kRequestRate, "request_rate"},
    {SignalId::kArrivalRate, "arrival_rate"},
    {SignalId::kErrorRate, "error_rate"},
    {SignalId::kErrorRatio, "error_ratio"},
    {SignalId::kClientErrorRate, "client_error_rate"},
    {SignalId::kClientErrorRatio, "client_error_ratio"},
    {SignalId::kPromptTokenRate, "prompt_token_rate"},
    {SignalId::kGenerationTokenRate, "generation_token_rate"},
    {SignalId::kPromptTokens, "prompt_tokens"},
    {SignalId::kOutputTokens, "output_tokens"},
    {SignalId::kWaiting, "waiting"},
    {SignalId::kRunning, "running"},
    {SignalId::kInFlight, "in_flight"},
    {SignalId::kKvUsage, "kv_usage"},
    {SignalId::kPreemptionRate, "preemption_rate"},
    {SignalId::kPrefixQueries, "prefix_queries"},
    {SignalId::kPrefixHits, "prefix_hits"},
    {SignalId::kPrefixHitRate, "prefix_hit_rate"},
    {SignalId::kSpecDrafts, "spec_drafts"},
    {SignalId::kSpecDraftTokens, "spec_draft_tokens"},
    {SignalId::kSpecAcceptedTokens, "spec_accepted_tokens"},
    {SignalId::kSpecAcceptance, "spec_acceptance"},
    {SignalId::kPrefillTimePerToken, "prefill_time_per_token"},
    {SignalId::kStepRate, "step_rate"},
    {SignalId::kEngineBusy, "engine_busy"},
    {SignalId::kGpuUtil, "gpu_util"},
    {SignalId::kHostCpuBusy, "host_cpu_busy"},
    {SignalId::kQueueRun, "queue_run"},
    {SignalId::kQueueDepth, "queue_depth"},
    {SignalId::kQueueOldestAge, "queue_oldest_age"},
    {SignalId::kQueueInProgress, "queue_in_progress"},
    {SignalId::kQueueJobsFinished, "queue_jobs_finished"},
    {SignalId::kQueueJobsFailed, "queue_jobs_failed"},
    {SignalId::kQueueWorkersBusy, "queue_workers_busy"},
    {SignalId::kQueueWorkersIdle, "queue_workers_idle"},
    {SignalId::kQueueWorkersStale, "queue_workers_stale"},
    {SignalId::kKvTransferBytes, "kv_transfer_bytes"},
    {SignalId::kRoutePrefixHit, "route_prefix_hit"},
    {SignalId::kLoraLoaded, "lora_loaded"},
    {SignalId::kLoraSlots, "lora_slots"},
    {SignalId::kLoraWaiting, "lora_waiting"},
    {SignalId::kLoraLoadRate, "lora_load_rate"},
    {SignalId::kKvTransferTimePerMb, "kv_transfer_time_per_mb"},
    {SignalId::kEndpointLoadSpread, "endpoint_load_spread"},
    {SignalId::kEngineHeld, "engine_held"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (static_cast<std::size_t>(kNames[i].first) != i) return false;
  return static_cast<std::size_t>(SignalId::kEngineHeld) + 1 == kNames.size();
}
static_assert(in_enum_order(), "kNames lists every SignalId once, in enum order");

}  // namespace

std::string_view to_string(SignalId id) noexcept { return kNames[static_cast<std::size_t>(id)].second; }

std::optional<SignalId> signal_from_string(std::string_view id) noexcept {
  for (const auto& [signal, name] : kNames)
    if (name == id) return signal;
  return std::nullopt;
}

bool is_latency(SignalId id) noexcept { return id <= SignalId::kStep || id == SignalId::kQueueRun; }

}  // namespace inferscope::doctor
