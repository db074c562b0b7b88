// Unexplained: latency moved and no cause of the table fits its evidence. Saying "degraded" with
// nothing behind it leaves the reader without a place to look, so the finding names what moved
// most (a stage's time per request, else TTFT, e2e or a per-token time), by how much, and which
// causes were weighed and why each lost.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kUnexplainedCauses[] = {
    {.id = CauseId::kUnexplained, .name = "unexplained", .group = CauseGroup::kUnexplained,
     .headline = {.names = "no known cause fits[ ({stage} moved most)]"},
     .next_steps = {"Look at what changed at the window's start for the stage named here: deployments, configuration "
                    "and flag changes, traffic sources, the host and its neighbours.",
                    "Read the ruled-out causes' reasons: one just under the bar may fit with a longer window or "
                    "baseline (--window, --baseline).",
                    "If the stage is not split further by the server, add a span or a dependency metric around it so "
                    "the next incident names its part."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kUnexplainedCauses, INFERSCOPE_DOCTOR_UNEXPLAINED_CAUSES);

std::span<const CauseSpec> unexplained_causes() { return kUnexplainedCauses; }

namespace {

// Moved is the quantity the finding names: what rose most, in seconds.
struct Moved {
  std::string name;   // stage name, "TTFT", "e2e" or a per-token metric
  std::string stage;  // the stage, "" when not a stage
  std::string metric;
  double baseline = kNaN, incident = kNaN;
};

// biggest_stage_rise: the stage whose time per request rose most (the stage table adds up to e2e).
std::optional<Moved> biggest_stage_rise(const Evaluation& e, const Diagnosis& d) {
  const StageRow* best = nullptr;
  for (const StageRow& row : d.stages)
    if (row.delta_s > 0 && (!best || row.delta_s > best->delta_s)) best = &row;
  if (!best) return std::nullopt;
  auto role = dialect::parse_role(best->stage);
  const Quantity* q = role ? e.find(*role) : nullptr;
  return Moved{best->stage, best->stage, q ? q->metric : best->stage, best->baseline.per_request,
               best->incident.per_request};
}

// biggest_relative_rise: without a stage that rose, the latency that rose most relative to its
// baseline among the symptoms, e2e and (servers without histograms) the per-token times.
std::optional<Moved> biggest_relative_rise(const Evaluation& e) {
  std::optional<Moved> best;
  double best_ratio = 1;
  auto consider = [&](const std::string& name, const std::string& metric, double b, double i) {
    double r = ratio(b, i);
    if (r > best_ratio) {
      best_ratio = r;
      best = Moved{name, "", metric, b, i};
    }
  };
  for (const Symptom& s : e.symptoms) consider(s.name, s.name, s.change.baseline, s.change.incident);
  if (e.e2e) consider("e2e", e.e2e->metric, e.e2e->baseline.mean, e.e2e->incident.mean);
  for (SignalId id : {SignalId::kTpot, SignalId::kPrefillTimePerToken})
    if (const Quantity* q = e.find(id)) consider(q->metric, q->metric, q->baseline.mean, q->incident.mean);
  return best;
}

// add_load_evidence: without a stage breakdown, the load and token figures are all that can place an
// e2e rise (more arrivals, longer prompts or outputs, or the same load served slower).
void add_load_evidence(const Evaluation& e, Finding& f) {
  struct Figure {
    SignalId id;
    const char* what;
  };
  constexpr Figure kFigures[] = {{SignalId::kRequestRate, "finished requests/s (rate of {})"},
                                 {SignalId::kPromptTokenRate, "prompt tokens/s (rate of {})"},
                                 {SignalId::kGenerationTokenRate, "output tokens/s (rate of {})"},
                                 {SignalId::kPromptTokens, "prompt tokens per request (mean of {})"},
                                 {SignalId::kOutputTokens, "output tokens per request (mean of {})"},
                                 {SignalId::kWaiting, "waiting requests (mean of {})"},
                                 {SignalId::kInFlight, "requests in flight (mean of {})"}};
  for (const Figure& figure : kFigures) {
    const Quantity* q = e.find(figure.id);
    if (!q || !q->baseline.has_data() || !q->incident.has_data()) continue;
    std::string name = figure.what;
    name.replace(name.find("{}"), 2, q->metric);
    f.evidence.push_back({name, q->baseline.mean, q->incident.mean, q->unit});
  }
}

// ruled_out lists the causes weighed and not reported, strongest first, with their reasons.
std::string ruled_out(const std::vector<Considered>& considered) {
  std::vector<const Considered*> order;
  for (const Considered& c : considered) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [](const Considered* a, const Considered* b) { return a->score > b->score; });
  constexpr std::size_t kNamed = 3;  // the runners-up a reader checks; the rest had less evidence
  std::string text;
  std::size_t named = 0;
  for (const Considered* c : order) {
    if (named == kNamed) break;
    text += (named++ ? "; " : "") + c->cause + " (score " + common::format_printf("%.2f", c->score) + ": " + c->reason + ")";
  }
  if (order.size() > named) text += "; " + std::to_string(order.size() - named) + " more with less evidence";
  return text.empty() ? "no cause could be weighed on this data" : text;
}

}  // namespace

Finding unexplained_finding(const Evaluation& e, const Diagnosis& d) {
  Finding f;
  f.cause = std::string(to_string(CauseId::kUnexplained));
  f.next_steps = next_steps_of(CauseId::kUnexplained);
  std::optional<Moved> moved = biggest_stage_rise(e, d);
  if (!moved) moved = biggest_relative_rise(e);
  std::string what = "latency rose and no known cause fits the evidence";
  if (moved) {
    f.stage = moved->stage;
    double r = ratio(moved->baseline, moved->incident);
    what += ": " + moved->name + (moved->stage.empty() ? "" : " per request") + " moved most, " +
            seconds(moved->baseline) + " -> " + seconds(moved->incident) +
            (std::isfinite(r) ? " (" + common::format_printf("x%.1f", r) + ")" : std::string(" (new)"));
    if (!moved->stage.empty() && d.e2e_change_s > 0) {
      f.share = (moved->incident - moved->baseline) / d.e2e_change_s;
      what += ", " + percent(f.share) + " of the e2e change";
    }
    f.evidence.push_back({moved->metric + (moved->stage.empty() ? "" : " (per request)"), moved->baseline,
                          moved->incident, "s"});
  }
  if (e.e2e && moved && moved->name != "e2e")
    f.evidence.push_back({e.e2e->metric, e.e2e->baseline.mean, e.e2e->incident.mean, "s"});
  if (moved && moved->name == "e2e" && d.stages.empty()) {
    // e2e is the only latency there is: it is the stage a reader can see, with the load beside it.
    f.stage = "e2e";
    what += "; " + std::string(kNoStageBreakdownNote);
    add_load_evidence(e, f);
  }
  f.summary = what + "; ruled out: " + ruled_out(d.considered);
  // How sure "none of the known causes" is: the best runner-up's score is how close one came.
  double best = 0;
  for (const Considered& c : d.considered) best = std::max(best, c.score);
  f.score = std::clamp(1 - best, 0.0, 1.0);
  return f;
}

}  // namespace inferscope::doctor::detail
