// Direct stages: a stage outside the engine got slower on its own (input processing, a
// dependency call, sending the response, the gateway's admission queue). The stage's own time
// per request is the evidence; nothing else moves it.
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kDirectStageCauses[] = {
    {.id = CauseId::kPreprocessSlowdown, .name = "preprocess_slowdown", .stage = Stage::kPreprocess,
     .weights = {{Stage::kPreprocess, 1}, {Stage::kPostprocess, 0.5}}, .cpu_side = true,
     .next_steps = {"Tokenization/templating is CPU-bound: check host CPU saturation and the API server's CPU time.",
                    "Add API server processes (vLLM --api-server-count) or move tokenization off the serving process.",
                    "Check for a changed chat template or tokenizer version."}},
    // The first next step names the dependency that slowed most (evaluate_direct_stages).
    {.id = CauseId::kDependencySlowdown, .name = "dependency_slowdown", .stage = Stage::kDependency,
     .weights = {{Stage::kDependency, 1}},
     .next_steps = {"Give the call a timeout and a fallback, or cache its results.",
                    "Call it concurrently with other pre-processing if the request allows."}},
    {.id = CauseId::kNetworkSlowdown, .name = "network_slowdown", .stage = Stage::kSend,
     .weights = {{Stage::kPostprocess, 1}, {Stage::kSend, 1}}, .cpu_side = true,
     .next_steps = {"Check the network path to clients: load balancer, proxy buffering (nginx proxy_buffering off for "
                    "SSE), TLS.",
                    "Check for slow readers (clients on poor links) and socket send buffers.",
                    "Compare client-side TTFT with server-side TTFT to locate the gap."}},
    {.id = CauseId::kGatewayQueue, .name = "gateway_queue", .stage = Stage::kGatewayQueue,
     .weights = {{Stage::kGatewayQueue, 1}}, .cpu_side = true,
     .next_steps = {"Raise the gateway's concurrency limit if the upstream has headroom (its queue and KV usage are low).",
                    "Otherwise add upstream replicas; the gateway queue only shows that demand exceeds the limit.",
                    "Check that the gateway's limit matches the upstream's --max-num-seqs across replicas."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kDirectStageCauses, INFERSCOPE_DOCTOR_DIRECT_STAGE_CAUSES);

std::span<const CauseSpec> direct_stage_causes() { return kDirectStageCauses; }

namespace {

// add_direct adds the hypothesis that `cause`'s own stage got slower, described as `what`;
// nullptr when the stage is not measured.
Hypothesis* add_direct(Evaluation& e, CauseId cause, const std::string& what) {
  const Stage stage = *spec(cause).stage;
  const Quantity* q = e.find(stage);
  if (!q) return nullptr;
  const std::string name(dialect::to_string(stage));
  Hypothesis& h = e.add(cause);
  h.strength = e.direct_stage_strength(stage);
  h.evidence.push_back({q->metric + " (per request)", q->baseline.per_request, q->incident.per_request, "s"});
  h.evidence.push_back({q->metric + " (p95)", q->baseline.p95, q->incident.p95, "s"});
  h.summary = what + ": " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request) +
              " per request";
  h.why_not = name + " " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request);
  return &h;
}

void add_dependency(Evaluation& e) {
  const Quantity* q = e.find(Stage::kDependency);
  if (!q) return;
  Hypothesis& h = e.add(CauseId::kDependencySlowdown);
  h.strength = e.direct_stage_strength(Stage::kDependency);
  std::string worst;
  double worst_delta = -INFINITY;
  for (const auto& [name, dep] : e.snapshot.dependencies) {
    double delta = (std::isnan(dep.incident.mean) ? 0 : dep.incident.mean) -
                   (std::isnan(dep.baseline.mean) ? 0 : dep.baseline.mean);
    h.evidence.push_back({dep.metric + "{dependency=\"" + name + "\"}", dep.baseline.mean, dep.incident.mean, "s"});
    if (delta > worst_delta) {
      worst_delta = delta;
      worst = name;
    }
  }
  h.evidence.push_back({q->metric + " (per request)", q->baseline.per_request, q->incident.per_request, "s"});
  h.summary = "calls to " + (worst.empty() ? std::string("a dependency") : "dependency '" + worst + "'") +
              " got slower: " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request) +
              " per request";
  h.next_steps.insert(h.next_steps.begin(), "Look at " + (worst.empty() ? std::string("the dependency") : "'" + worst + "'") +
                                                ": its own latency dashboards, error rate and recent changes.");
  h.why_not = "dependency " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request);
}

}  // namespace

void evaluate_direct_stages(Evaluation& e) {
  add_direct(e, CauseId::kPreprocessSlowdown, "input processing (tokenization, chat template) got slower");
  add_dependency(e);
  add_direct(e, CauseId::kNetworkSlowdown,
             "writing responses to clients got slower (server-side send time), the engine is not slower");
  if (Hypothesis* h = add_direct(e, CauseId::kGatewayQueue,
                                 "requests wait at the gateway for admission while upstream time is flat")) {
    if (const Quantity* up = e.find(Stage::kUpstreamTtft)) {
      h->evidence.push_back({up->metric, up->baseline.mean, up->incident.mean, "s"});
      if (compare(up, 0.2, e.options.noise_sigmas).up) h->strength *= 0.5;  // upstream slower too: not the gateway alone
    }
  }
}

}  // namespace inferscope::doctor::detail
