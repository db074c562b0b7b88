// File: signal_id.h
// SignalId names every quantity the doctor reads besides the stages: latency distributions
// (e2e, ttft, tpot, itl, step) and scalar signals (rates, ratios, gauges, token means), each with
// its stable id (the Snapshot key, the `signals[].id` of the JSON) and where it lands.
// Stages are named by dialect::Role (their ids are the dialect table's).
// Example: const Quantity* kv = snapshot.find(SignalId::kKvUsage);
// Pure values and functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace inferscope::doctor {

enum class SignalId : std::uint8_t {
  // Latency distributions (Snapshot::latency).
  kE2e,
  kTtft,
  kTpot,
  kItl,
  kStep,  // one engine iteration
  // Traffic (Snapshot::signals).
  kRequestRate,        // finished requests per second
  kArrivalRate,        // derived: finished + growth of what is pending
  kErrorRate,
  kErrorRatio,         // derived: errors / requests
  kClientErrorRate,    // 4xx
  kClientErrorRatio,   // derived: 4xx / requests
  kPromptTokenRate,
  kGenerationTokenRate,
  kPromptTokens,       // per request
  kOutputTokens,       // per request
  // Load and capacity.
  kWaiting,
  kRunning,
  kInFlight,
  kKvUsage,
  kPreemptionRate,
  kPrefixQueries,
  kPrefixHits,
  kPrefixHitRate,      // derived: hits / queries
  kSpecDrafts,         // speculative decoding: draft rounds per second
  kSpecDraftTokens,    // draft tokens proposed per second
  kSpecAcceptedTokens, // draft tokens accepted per second
  kSpecAcceptance,     // derived: accepted / proposed
  // Engine speed.
  kPrefillTimePerToken,
  kStepRate,
  kEngineBusy,
  kGpuUtil,
  // Host.
  kHostCpuBusy,
  // The Redis job queue in front (up's queue collector; its wait is the queue_wait stage).
  kQueueRun,            // latency: a worker's start -> end of a job
  kQueueDepth,          // jobs waiting
  kQueueOldestAge,      // seconds the oldest waiting job has waited
  kQueueInProgress,     // jobs taken and not finished
  kQueueJobsFinished,   // jobs finished per second
  kQueueJobsFailed,     // jobs failed per second
  kQueueWorkersBusy,
  kQueueWorkersIdle,
  kQueueWorkersStale,   // registered workers that stopped heartbeating
  // Disaggregated fleets (docs/disaggregation.md).
  kKvTransferBytes,     // KV bytes per prefill -> decode transfer (mean)
  kRoutePrefixHit,      // the router's prefix hit of the chosen worker per decision, 0..1 (mean)
  // LoRA adapters (appended).
  kLoraLoaded,          // adapters held in GPU slots
  kLoraSlots,           // adapter slots
  kLoraWaiting,         // requests waiting because their adapter has no slot
  kLoraLoadRate,        // adapter loads per second
  // Disaggregated fleets, derived (appended; fleet_pools.h).
  kKvTransferTimePerMb, // kv_transfer seconds per transfer / MB per transfer: a slower link at any size
  kEndpointLoadSpread,  // busiest endpoint's load / its pool peers' mean, in the most uneven pool
  // Appended: share of wall time the engine held work without a step (a stopped scheduler).
  kEngineHeld,
};

// to_string returns the stable id ("e2e", "kv_usage", "arrival_rate", ...). Never fails.
std::string_view to_string(SignalId id) noexcept;

// signal_from_string is the inverse of to_string; nullopt for an unknown id.
std::optional<SignalId> signal_from_string(std::string_view id) noexcept;

// is_latency says whether the signal is a latency distribution (Snapshot::latency) rather than
// a scalar signal (Snapshot::signals).
bool is_latency(SignalId id) noexcept;

}  // namespace inferscope::doctor
