// File: slo.h
// SloSpec holds the per-request service-level objectives given with --slo, used for goodput: a
// request is good when it succeeded and meets every given objective. TTFT and E2E are measured
// from the intended send time (what a user waits, coordinated-omission-correct); TPOT per request.
// Example: auto slo = parse_slo("ttft=500ms,tpot=50ms,e2e=10s"); bool good = slo->met(record);
// Value type; thread-compatible. Never treats a failed request as good.
#pragma once

#include <optional>
#include <string_view>

#include "inferscope/common/result.h"
#include "loadgen/arrival_schedule.h"
#include "loadgen/request_record.h"

namespace inferscope::bench {

struct SloSpec {
  std::optional<loadgen::Nanos> ttft, tpot, e2e;

  bool empty() const { return !ttft && !tpot && !e2e; }
  // met reports whether `r` succeeded and meets every set objective. Cost: O(1).
  bool met(const loadgen::RequestRecord& r) const;
};

// parse_slo reads comma-separated key=duration pairs with keys ttft, tpot, e2e (e2el accepted);
// errors name --slo.
Result<SloSpec> parse_slo(std::string_view text);

// tpot_ns returns a request's (e2e - ttft) / (output_tokens - 1), or 0 when it has < 2 tokens
// (vLLM's convention for goodput).
double tpot_ns(const loadgen::RequestRecord& r);

}  // namespace inferscope::bench
