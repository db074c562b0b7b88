// File: cause_family.h
// The doctor weighs its causes in families: data presence, load and request mix, KV and capacity,
// stalls, engine features, engine speed, direct stages, where, errors, the job queue, unexplained. Each family's
// causes_<family>.h lists its causes, and its causes_<family>.cpp defines their CauseSpecs and an
// evaluate that reads the Snapshot through an Evaluation and adds one Hypothesis per cause it can
// judge, with its strength, evidence and text. Families run in the order below; a later one reads
// what earlier ones measured (Found) where its cause is what remains once theirs are accounted
// for. Internal to the doctor; not thread-safe (one per call).
// Example: Evaluation e(snapshot, options); evaluate_load_mix(e); ... e.hypotheses
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/duration_text.h"
#include "doctor/cause_spec.h"
#include "doctor/diagnosis.h"
#include "doctor/diagnosis_stats.h"

namespace inferscope::doctor {
struct Slice;  // localize.h
}  // namespace inferscope::doctor

namespace inferscope::doctor::detail {

// Hypothesis is one cause being weighed.
struct Hypothesis {
  explicit Hypothesis(CauseId id);  // the spec's stage and next steps
  CauseId cause;
  std::optional<Stage> stage;  // where it is reported when it claims no stage portion
  double strength = 0;         // 0..1, from its own evidence
  std::string summary;
  std::string why_not;  // reason shown in considered[] when dropped
  std::vector<Evidence> evidence;
  std::vector<std::string> next_steps;
  // Stage name -> seconds of the e2e change it explains. By name: the ranking sums and picks the
  // biggest in name order.
  std::map<std::string, double> portions;
  // Where its own evidence localizes it (a disaggregated fleet's pool or endpoint); empty = not.
  Where where = {};
};

// PerToken is the per-token decode time a family reads: TPOT per request, else ITL.
struct PerToken {
  const Quantity* quantity = nullptr;
  Change change;
};

// Found carries what earlier families measured to later ones that discount by it.
struct Found {
  const Quantity* rate = nullptr;  // arrivals, else finished requests
  Change rate_change;
  double load_ratio = 1;  // the arrival ratio when arrivals rose, else 1
  double load = 0, prompt = 0, output = 0;  // evidence strengths of load_increase, long_prompts, long_outputs
  double kv = 0;     // KV pressure before the load/mix discount
  double stall = 0;  // the stronger of worker_stall and engine_stall
  double prefix_miss = 0;  // prefix_cache_miss: more prompt tokens computed because fewer were cached
  // Speculative decoding: tokens a verify step emits per sequence, baseline / incident (>= 1; 1 when
  // unknown or not fallen). At the same step cost the time per output token rises by this much.
  double spec_step_ratio = 1;
  double spec_drop = 0;  // spec_decode_acceptance_drop's strength
  double lora_thrash = 0;  // lora_adapter_thrash's strength
  // A disaggregated fleet's causes (causes_disaggregation.cpp), read by the engine speed family:
  // a slower transfer, a saturated pool or one overloaded endpoint slow requests without the
  // engine getting slower per token.
  double kv_transfer = 0, prefill_pool = 0, decode_pool = 0, routing = 0;
  std::string routing_group;  // the endpoints' peer group routing_imbalance weighed (fleet_pools.h)
  // A prefill pool cut to fewer workers: the pool's endpoints / those still in rotation (>= 1; 1
  // without a cut). Each worker left gets that many times the prompts, and prompts prefilled
  // together share the steps, so each one's prefill time per token rises by up to as much.
  double prefill_concentration = 1;
  // What a prefill-side cause can add to a decoding request: the engine time its extra prefill
  // work takes while it decodes (seconds per request; absent = no bound known).
  std::map<CauseId, double> decode_caps;
};

// Symptom is one latency the verdict weighs against its own baseline noise besides e2e: mean
// TTFT, or a stage's time per finished request. `far` when it moved far outside that noise.
struct Symptom {
  std::string name;  // "TTFT" or the stage's name
  Change change;
  bool far = false;
};

// Evaluation is what the families read (the snapshot and the slowdown measured so far) and
// write (hypotheses, Found).
struct Evaluation {
  Evaluation(const Snapshot& s, const DiagnoseOptions& o) : snapshot(s), options(o) {}

  const Snapshot& snapshot;
  const DiagnoseOptions& options;
  const Quantity* e2e = nullptr;
  Change e2e_change;
  std::map<std::string, double> stage_deltas;  // stage name -> per-request change, measured stages only
  std::vector<Symptom> symptoms;  // TTFT and the measured stages, each against its own noise
  Found found;
  std::vector<Hypothesis> hypotheses;

  const Quantity* find(SignalId id) const { return snapshot.find(id); }
  const Quantity* find(Stage stage) const { return snapshot.find(stage); }
  Hypothesis* find(CauseId id);
  // add appends a hypothesis for `id` and returns it (valid until the next add).
  Hypothesis& add(CauseId id);

  bool measured(Stage stage) const;     // the stage's change is known
  double stage_delta(Stage stage) const;  // its rise in seconds per request, 0 when none
  // direct_stage_strength: how clearly one stage of its own got slower.
  double direct_stage_strength(Stage stage) const;
  // lagging_stage_strength: a stage in front of the first token whose time per finished request
  // lags the change (long answers) judged by the TTFT rise queue and prefill leave unexplained.
  double lagging_stage_strength(const Quantity* stage, const Quantity* ttft) const;
  // median_ratio compares a distribution's median with the baseline's in the quarter of the
  // incident window where it moved most; with `rate`, beyond that quarter's load (see .cpp).
  double median_ratio(const Quantity* q, const Quantity* rate = nullptr, double load_ratio = 1) const;
  // compare_per_request compares a stage's time per finished request against its noise.
  Change compare_per_request(const Quantity* q) const;
  // per_token finds TPOT, else ITL, and compares it.
  PerToken per_token() const;
  // evidence of a quantity's means (or maxima), or an empty line named `fallback_name`.
  Evidence ev(const Quantity* q, const std::string& fallback_name, bool use_max = false) const;
};

// Text of summaries and reasons: common::format_printf for a fixed format; seconds and number are
// the shared readable formats ("900 ms", "12.3"; common/duration_text.h).
inline std::string (&seconds)(double) = common::format_seconds_readable;
inline std::string (&number)(double) = common::format_number_readable;
std::string percent(double v);
double mean_of(const Quantity* q, bool incident);
// next_steps_of copies a cause's next steps from its spec, for a finding or hypothesis to extend;
// with `gpu` false, its steps without GPU commands where the spec has them.
std::vector<std::string> next_steps_of(CauseId id, bool gpu = true);
// gpu_visible says whether the snapshot shows a GPU (utilization series from DCGM, Triton or
// inferscope serve's emulation): only then do next steps name GPU commands.
bool gpu_visible(const Snapshot& s);
// find_stage_or_latency finds a stage or a latency distribution by its id ("decode", "e2e").
const Quantity* find_stage_or_latency(const Snapshot& s, const std::string& id);

// --- the families, in evaluation order -----------------------------------------------------
// Data presence (targets down, metrics missing) is judged before there is a slowdown to weigh:
// it adds findings directly and returns true when every target is down (nothing else to read).
// localize_data_presence names where the one down target is (localize()).
std::span<const CauseSpec> data_presence_causes();
bool evaluate_data_presence(const Snapshot& snapshot, std::vector<Finding>& findings);
void localize_data_presence(Diagnosis& d);

// Load and request mix: load_increase (arrivals), long_prompts, long_outputs. Sets Found's rate,
// load ratio and strengths.
std::span<const CauseSpec> load_mix_causes();
void evaluate_load_mix(Evaluation& e);

// KV and capacity: kv_cache_pressure (discounted when longer or more requests explain it).
// evaluate_capacity_drop runs after the causes that leave requests waiting behind a batch that
// does not grow (CauseSpec::queues_behind_batch): requests waiting behind a running batch that
// fell (or, at unchanged demand, did not grow) with none of them is capacity_drop (a lowered
// batch cap, a smaller KV cache, a replica out of rotation).
std::span<const CauseSpec> kv_capacity_causes();
void evaluate_kv_capacity(Evaluation& e);
void evaluate_capacity_drop(Evaluation& e);

// Stalls: worker_stall (stuck scheduling) or engine_stall (stuck working), whichever fits.
// stall_hypothesis is also the answer when requests stopped finishing (`from_pending`).
std::span<const CauseSpec> stall_causes();
void evaluate_stalls(Evaluation& e);
Hypothesis stall_hypothesis(const Evaluation& e, bool from_pending);

// Engine features: prefix_cache_miss (the hit rate fell, so each request computes more of its
// prompt at unchanged length) and spec_decode_acceptance_drop (fewer drafts accepted, so more
// steps per output token at the same step cost). Sets Found's prefix_miss, its decode cap and
// spec_step_ratio.
std::span<const CauseSpec> engine_feature_causes();
void evaluate_engine_features(Evaluation& e);

// Disaggregation (docs/disaggregation.md): kv_transfer_slowdown, prefill_pool_saturated,
// decode_pool_saturated and routing_imbalance, from the fleet's kv_transfer stage, its per-pool
// waiting and its per-endpoint load (fleet_pools.h); each localized with where.pool / endpoint.
// Sets Found's kv_transfer, prefill_pool, decode_pool and routing.
std::span<const CauseSpec> disaggregation_causes();
void evaluate_disaggregation(Evaluation& e);

// Engine speed: decode_slowdown and prefill_slowdown, what is left of a per-token rise once
// load, KV, stalls and the engine features are accounted for. Sets Found's decode caps of the
// prefill-side causes.
std::span<const CauseSpec> engine_speed_causes();
void evaluate_engine_speed(Evaluation& e);

// Direct stages: a stage of its own got slower (preprocess, dependency, send, gateway queue).
std::span<const CauseSpec> direct_stage_causes();
void evaluate_direct_stages(Evaluation& e);

// Where: replica_slowdown, one replica of several that slowed alone. Not weighed here: localize()
// (localize.h) diagnoses the slices and asks replica_finding for the finding of a replica that
// slowed in `stage` while its peers in `group` (itself included) stayed at `peer_median` (spread
// `peer_spread`); `slow_top` is its own diagnosis' top finding, if any. replica_group_name:
// "replicas of model sim-a (job serve)".
std::span<const CauseSpec> replica_causes();
// PeerGap is one replica's engine time per unit of work (decode seconds per output token, prefill
// seconds per prompt token) against its peers' in the same window: what replica_gap_finding names
// without any baseline. The baseline fields are the same figures in the baseline window (NaN when
// the replica has no baseline of its own).
struct PeerGap {
  std::string stage;    // "decode" or "prefill"
  std::string measure;  // "decode time per output token (inferscope_time_per_output_token_seconds)"
  double mine = kNaN, peer_median = kNaN, peer_spread = kNaN;
  double mine_baseline = kNaN, peer_median_baseline = kNaN;
  double ratio() const { return mine / peer_median; }
  double baseline_ratio() const { return mine_baseline / peer_median_baseline; }
};
Finding replica_gap_finding(const Diagnosis& whole, const Slice& slow, const std::vector<const Slice*>& group,
                            const PeerGap& gap);
Finding replica_finding(const Diagnosis& whole, const Slice& slow, const Finding* slow_top,
                        const std::vector<const Slice*>& group, const std::string& stage, double peer_median,
                        double peer_spread);
std::string replica_group_name(const Where& w);

// Errors: error_spike (server-side failures or a burst of 4xx).
std::span<const CauseSpec> error_causes();
void evaluate_errors(Evaluation& e);

// The job queue in front: workers_down (jobs wait, nothing consumes them), queue_backlog
// (arrivals outpace busy workers; a consequence, not a cause, when the server behind got slower:
// then the server's own cause carries the queue's evidence) and worker_failures. Runs last: it
// reads which server-side causes were found. queue_hypotheses judges the queue alone (no server
// requests to compare, as when workers stopped calling it).
std::span<const CauseSpec> queue_causes();
void evaluate_queue(Evaluation& e);
// queue_age_known: the oldest job's age tells the queue's wait in that window: sampled while a
// job waited (depth >= 1), or the queue never held one. Celery's collector gives an age of 0
// while the queue is empty and none once plain messages (no enqueue time) wait.
bool queue_age_known(const Snapshot& s, bool incident);

// Unexplained: the verdict is degraded and no cause above was reported. Not weighed like the
// others: the flow's last step builds it from what moved (the stage table, else the symptoms)
// and what was ruled out (considered[]), so a degraded verdict always carries a finding.
std::span<const CauseSpec> unexplained_causes();
Finding unexplained_finding(const Evaluation& e, const Diagnosis& d);

}  // namespace inferscope::doctor::detail
