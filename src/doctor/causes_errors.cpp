// Errors: more requests fail (server-side) or are rejected (4xx). Failed requests end fast and
// can hide a slowdown, so this cause needs no latency change to be reported.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kErrorCauses[] = {
    // The last next step depends on which kind of error rose (evaluate_errors).
    {.id = CauseId::kErrorSpike, .name = "error_spike", .group = CauseGroup::kErrors, .needs_slowdown = false,
     .examples = ExampleRequests::kFailed,
     .next_steps = {"Look at the error kinds (status class, finish_reason=error) and the server log at these times.",
                    "Failed requests end fast and can hide a slowdown: compare successful-request latency."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kErrorCauses, INFERSCOPE_DOCTOR_ERROR_CAUSES);

std::span<const CauseSpec> error_causes() { return kErrorCauses; }

void evaluate_errors(Evaluation& e) {
  const Quantity* errors = e.find(SignalId::kErrorRatio);
  const Quantity* client_errors = e.find(SignalId::kClientErrorRatio);
  if (!errors && !client_errors) return;
  // Server-side failures first; a burst of rejected (4xx) requests counts too, named as such.
  auto strength_of = [&](const Quantity* q, double& eb, double& ei) {
    Change c = compare(q, 0.0, e.options.noise_sigmas, 0.005);
    eb = std::isnan(c.baseline) ? 0 : c.baseline;
    ei = std::isnan(c.incident) ? 0 : c.incident;
    return (c.up && ei >= 2 * eb) ? ramp(ei - eb, 0.005, 0.05) : 0.0;
  };
  double eb = 0, ei = 0, cb = 0, ci = 0;
  double s_server = errors ? strength_of(errors, eb, ei) : 0;
  double s_client = client_errors ? strength_of(client_errors, cb, ci) : 0;
  bool client = s_client > s_server;
  Hypothesis& h = e.add(CauseId::kErrorSpike);
  h.strength = std::max(s_server, s_client);
  if (errors) h.evidence.push_back({errors->metric, eb, ei, "ratio"});
  if (client_errors) h.evidence.push_back({client_errors->metric, cb, ci, "ratio"});
  if (e.found.rate) h.evidence.push_back(e.ev(e.found.rate, "request rate"));
  h.summary = client ? "requests rejected with 4xx rose from " + percent(cb) + " to " + percent(ci) +
                           " (prompt too long for --max-model-len, bad parameters, rate limits)"
                     : "error ratio rose from " + percent(eb) + " to " + percent(ei) + " of requests";
  h.next_steps.push_back(client ? "Check what clients send now (prompt lengths vs --max-model-len, parameters) and "
                                  "recent client releases."
                                : "Check recent deploys/config changes, KV capacity (a sequence that cannot fit fails) "
                                  "and dependencies for failures.");
  h.why_not = "error ratio " + percent(eb) + " -> " + percent(ei) + ", 4xx " + percent(cb) + " -> " + percent(ci);
}

}  // namespace inferscope::doctor::detail
