// Errors: more requests fail (server-side) or are rejected (4xx), or so many fail that the
// server is broken whatever it did before (a deploy that renamed the model rejects every request
// in both windows). Failed requests end fast and can hide a slowdown, so this cause needs no
// latency change to be reported.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kErrorCauses[] = {
    // The last next step depends on which kind of error rose (evaluate_errors).
    {.id = CauseId::kErrorSpike, .name = "error_spike", .group = CauseGroup::kErrors, .needs_slowdown = false,
     .headline = {.lead_without_slowdown = "{summary}"}, .examples = ExampleRequests::kFailed,
     .next_steps = {"Look at the error kinds (status class, finish_reason=error) and the server log at these times.",
                    "Failed requests end fast and can hide a slowdown: compare successful-request latency."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kErrorCauses, INFERSCOPE_DOCTOR_ERROR_CAUSES);

std::span<const CauseSpec> error_causes() { return kErrorCauses; }

namespace {

// Bad in absolute terms, whatever the baseline: one request in twenty failing inside the server
// is an outage for those users; clients send some requests a server must refuse (too long,
// bad parameters), but most of them refused is a broken contract (a model name, a route, a key).
constexpr double kServerFailingFrom = 0.05, kServerFailingFull = 0.5;
constexpr double kMostRejectedFrom = 0.5, kMostRejectedFull = 0.95;

// ErrorKind is one kind of failure in both windows: its ratio to requests, the failures counted
// in the window, and how strongly it rose and how bad it is now.
struct ErrorKind {
  double baseline = 0, incident = 0;
  double failed = 0;  // failed requests in the incident window
  double rose = 0, bad_now = 0;
  double strength() const { return std::max(rose, bad_now); }
};

ErrorKind weigh(const Evaluation& e, const Quantity* q, double bad_from, double bad_full) {
  ErrorKind k;
  if (!q) return k;
  Change c = compare(q, 0.0, e.options.noise_sigmas, 0.005);
  k.baseline = std::isnan(c.baseline) ? 0 : c.baseline;
  k.incident = std::isnan(c.incident) ? 0 : c.incident;
  k.failed = k.incident * q->incident.count;
  k.rose = (c.up && k.incident >= 2 * k.baseline) ? ramp(k.incident - k.baseline, 0.005, 0.05) : 0.0;
  // A handful of failures says little of a ratio.
  if (k.failed >= e.options.min_requests) k.bad_now = ramp(k.incident, bad_from, bad_full);
  return k;
}

std::string how_many(double ratio, double failed) {
  const std::string count = common::format_printf("%.0f", failed);  // a ratio times a count: whole requests
  return ratio >= 0.995 ? "every request (" + count + " in the window)"
                        : percent(ratio) + " of requests (" + count + " in the window)";
}

}  // namespace

void evaluate_errors(Evaluation& e) {
  const Quantity* errors = e.find(SignalId::kErrorRatio);
  const Quantity* client_errors = e.find(SignalId::kClientErrorRatio);
  if (!errors && !client_errors) return;
  // Server-side failures first; a burst of rejected (4xx) requests counts too, named as such.
  const ErrorKind server = weigh(e, errors, kServerFailingFrom, kServerFailingFull);
  const ErrorKind rejected = weigh(e, client_errors, kMostRejectedFrom, kMostRejectedFull);
  const bool client = rejected.strength() > server.strength();
  const ErrorKind& k = client ? rejected : server;
  Hypothesis& h = e.add(CauseId::kErrorSpike);
  h.strength = k.strength();
  if (errors) h.evidence.push_back({errors->metric, server.baseline, server.incident, "ratio"});
  if (client_errors) h.evidence.push_back({client_errors->metric, rejected.baseline, rejected.incident, "ratio"});
  if (e.found.rate) h.evidence.push_back(e.ev(e.found.rate, "request rate"));
  h.why_not = "error ratio " + percent(server.baseline) + " -> " + percent(server.incident) + ", 4xx " +
              percent(rejected.baseline) + " -> " + percent(rejected.incident);
  const std::string check =
      client ? "Check what clients send now against what the server accepts: the model name they ask for against "
               "the served names (GET /v1/models), prompt lengths vs --max-model-len, parameters, keys; and recent "
               "client or server releases."
             : "Check recent deploys/config changes, KV capacity (a sequence that cannot fit fails) and dependencies "
               "for failures.";
  if (k.bad_now > k.rose) {
    // Bad now whether or not it changed: how many fail, then how it was before; what to check first.
    h.summary = how_many(k.incident, k.failed) + (client ? " is rejected with 4xx" : " fails inside the server") +
                " (baseline " + percent(k.baseline) + ")";
    h.next_steps.insert(h.next_steps.begin(), check);
    if (k.incident >= 0.995)
      h.next_steps.push_back("No request succeeds, so the latencies only successful requests have (TTFT, per-token "
                             "times) show nothing until one does: their absence is this, not a metrics problem.");
    return;
  }
  h.summary = client ? "requests rejected with 4xx rose from " + percent(rejected.baseline) + " to " +
                           percent(rejected.incident) + " (prompt too long for --max-model-len, bad parameters, rate limits)"
                     : "error ratio rose from " + percent(server.baseline) + " to " + percent(server.incident) +
                           " of requests";
  h.next_steps.push_back(check);
}

}  // namespace inferscope::doctor::detail
