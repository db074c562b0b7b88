// File: stage.h
// Stage names the bounded set of request stages that inferscope times (the `stage` label of
// inferscope_stage_duration_seconds). docs/request-timeline.md says which two moments bound each.
// Example: std::string_view label = to_string(Stage::kPrefill);  // "prefill"
// Thread-safe (pure functions over constants). Never add a value that is not a fixed, bounded name:
// stage values become Prometheus label values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace inferscope::timeline {

// Stage is one bounded interval of a request's life. Server stages first, gateway-only after kSend,
// then the stages of a disaggregated fleet (a router in front, prefill and decode on different
// workers), marked by `serve --prefill-workers/--decode-workers`; docs/disaggregation.md.
enum class Stage : std::uint8_t {
  kGatewayQueue,     // waiting for admission (gateway or admission-controlled server)
  kPreprocess,       // parse, validate, apply chat template, tokenize
  kDependency,       // outbound calls (embedding, rerank, ...): sum of call durations
  kQueue,            // waiting in the engine queue
  kPrefill,          // scheduled -> first content token
  kDecode,           // first -> last content token
  kPostprocess,      // last token -> response body/final chunk built
  kSend,             // response built -> fully written to the client
  kUpstreamConnect,  // gateway: connecting to the upstream server
  kUpstreamTtft,     // gateway: request written upstream -> first content event
  kStream,           // gateway: first -> last content event
  kRoute,            // disaggregated fleet: the router's choice of the workers (KV-aware, by prefix overlap and load)
  kKvTransfer,       // disaggregated fleet: the prompt's KV cache moved from the prefill to the decode worker
};

// kStageCount is the number of Stage values (dense, usable as an array size).
inline constexpr std::size_t kStageCount = 13;

// kAllStages lists every stage in declaration order (for pre-creating series).
inline constexpr std::array<Stage, kStageCount> kAllStages = {
    Stage::kGatewayQueue, Stage::kPreprocess,  Stage::kDependency, Stage::kQueue,
    Stage::kPrefill,      Stage::kDecode,      Stage::kPostprocess, Stage::kSend,
    Stage::kUpstreamConnect, Stage::kUpstreamTtft, Stage::kStream, Stage::kRoute, Stage::kKvTransfer};

// to_string returns the label value ("gateway_queue", "preprocess", ...). Never fails.
std::string_view to_string(Stage stage) noexcept;

// parse_stage maps a label value back to a Stage; std::nullopt for an unknown name.
std::optional<Stage> parse_stage(std::string_view name) noexcept;

}  // namespace inferscope::timeline
