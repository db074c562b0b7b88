// File: cause_spec.h
// CauseSpec is everything fixed about one cause of DESIGN.md's stable list: its id, its group
// (what kind of news it is), the stage its mechanism acts on, the stages it can move and how
// strongly (from which the stage shares are split), whether it runs on the host's CPUs, whether it
// needs a slowdown to be reported, how the headline names it, which requests show it, and its
// next steps. The flow asks these fields and never names a cause.
// Example: for (const CauseSpec& c : cause_table()) if (c.cpu_side) ...; spec(id).group
// Pure values and functions; thread-safe.
//
// A cause is one record in its family's two files. causes_<family>.h lists the family's causes
// (a preprocessor list), and CauseId below is made of those lists, family after family: ids stay
// typed, and their order (the order of ties) is the families' order here and each list's order.
// causes_<family>.cpp holds the family's CauseSpecs as a constexpr table and checks it against
// its list with INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE, so a listed cause without its spec (or a
// spec out of the list's order) fails to compile there; cause_table() places every family's
// specs at their ids' index. Adding a cause to a family touches nothing outside its two files.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "dialect/dialect.h"
#include "doctor/causes_data_presence.h"
#include "doctor/causes_direct_stages.h"
#include "doctor/causes_disaggregation.h"
#include "doctor/causes_engine_features.h"
#include "doctor/causes_engine_speed.h"
#include "doctor/causes_errors.h"
#include "doctor/causes_kv_capacity.h"
#include "doctor/causes_load_mix.h"
#include "doctor/causes_queue.h"
#include "doctor/causes_replicas.h"
#include "doctor/causes_stalls.h"
#include "doctor/causes_unexplained.h"
#include "inferscope/common/bug.h"

// INFERSCOPE_DOCTOR_CAUSES(CAUSE) expands CAUSE(kId) for every cause, in table order: the
// families' lists one after the other. A new family adds its list here.
#define INFERSCOPE_DOCTOR_CAUSES(CAUSE)         \
  INFERSCOPE_DOCTOR_DATA_PRESENCE_CAUSES(CAUSE) \
  INFERSCOPE_DOCTOR_LOAD_MIX_CAUSES(CAUSE)      \
  INFERSCOPE_DOCTOR_KV_CAPACITY_CAUSES(CAUSE)   \
  INFERSCOPE_DOCTOR_ENGINE_SPEED_CAUSES(CAUSE)  \
  INFERSCOPE_DOCTOR_ENGINE_FEATURE_CAUSES(CAUSE) \
  INFERSCOPE_DOCTOR_DISAGGREGATION_CAUSES(CAUSE) \
  INFERSCOPE_DOCTOR_STALL_CAUSES(CAUSE)         \
  INFERSCOPE_DOCTOR_DIRECT_STAGE_CAUSES(CAUSE)  \
  INFERSCOPE_DOCTOR_REPLICA_CAUSES(CAUSE)       \
  INFERSCOPE_DOCTOR_ERROR_CAUSES(CAUSE)         \
  INFERSCOPE_DOCTOR_QUEUE_CAUSES(CAUSE)         \
  INFERSCOPE_DOCTOR_UNEXPLAINED_CAUSES(CAUSE)

// INFERSCOPE_DOCTOR_CAUSE_ID(kId) is `CauseId::kId,`: a family's list as ids,
// {INFERSCOPE_DOCTOR_LOAD_MIX_CAUSES(INFERSCOPE_DOCTOR_CAUSE_ID)}.
#define INFERSCOPE_DOCTOR_CAUSE_ID(id) ::inferscope::doctor::CauseId::id,

namespace inferscope::doctor {

// Stage names a pipeline stage by its dialect role (kQueue, kPrefill, kDecode, kStream ...).
using Stage = dialect::Role;

// CauseId is a cause of the stable list. Its order is the table's: findings of equal score and
// considered[] keep it.
enum class CauseId : std::uint8_t {
#define INFERSCOPE_DOCTOR_CAUSE_ENUMERATOR(id) id,
  INFERSCOPE_DOCTOR_CAUSES(INFERSCOPE_DOCTOR_CAUSE_ENUMERATOR)
#undef INFERSCOPE_DOCTOR_CAUSE_ENUMERATOR
};

// kCauseCount is the number of CauseIds (the table's size).
inline constexpr std::size_t kCauseCount = std::initializer_list<CauseId>{
    INFERSCOPE_DOCTOR_CAUSES(INFERSCOPE_DOCTOR_CAUSE_ID)}.size();

// to_string returns the stable id ("load_increase", "kv_cache_pressure", ...). Never fails.
std::string_view to_string(CauseId id);

// cause_from_string is the inverse of to_string; nullopt for an unknown id.
std::optional<CauseId> cause_from_string(std::string_view id);

// FixedList is a short list fixed in a spec (its weights, its next steps): a literal type, so a
// family's specs are a constexpr table checked when it compiles. More values than `Capacity` in a
// constexpr table fail to compile (the call of more_values_than_capacity is not a constant).
template <typename T, std::size_t Capacity>
class FixedList {
 public:
  constexpr FixedList() = default;
  constexpr FixedList(std::initializer_list<T> values) : size_(values.size()) {
    if (values.size() > Capacity) more_values_than_capacity();
    std::copy(values.begin(), values.end(), values_.begin());
  }
  constexpr const T* begin() const { return values_.data(); }
  constexpr const T* end() const { return values_.data() + size_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T& operator[](std::size_t i) const { return values_[i]; }

 private:
  static void more_values_than_capacity() { INFERSCOPE_BUG("FixedList: more values than its capacity"); }

  std::array<T, Capacity> values_{};
  std::size_t size_ = 0;
};

// StageWeight says how strongly a cause's mechanism moves one stage, relative to the other
// causes that move it (1 = its own stage).
struct StageWeight {
  Stage stage = {};
  double weight = 0;
};

using StageWeights = FixedList<StageWeight, 8>;
using NextSteps = FixedList<std::string_view, 5>;

// CauseGroup is what kind of news a cause is; the flow asks it where it would otherwise name causes.
enum class CauseGroup : std::uint8_t {
  // The data itself (a target down, metrics missing): reported before any latency is compared,
  // never a cause of a slowdown, and never on its own a reason to call the server degraded.
  kDataPresence,
  // Requests got slower in the serving pipeline (load, KV, engine, stalls, a stage, one replica):
  // what a backed-up job queue in front can be a consequence of.
  kSlowdown,
  // Requests fail.
  kErrors,
  // The job queue in front of the server: weighed on its own when the server behind it gives
  // nothing to compare (workers that stopped send it no requests).
  kJobQueue,
  // Latency moved and no cause fits.
  kUnexplained,
};

// ExampleRequests says which requests of the incident window show a finding (trace_examples.h).
enum class ExampleRequests : std::uint8_t {
  kLongestInStage,  // those whose longest stage is the finding's stage and grew; none without a stage
  kFailed,          // the failed ones, for a finding without a stage
};

// Headline says how the verdict's line names a cause when its finding is the top one:
// "degraded: <lead>; <names>". Templates fill {cause} (the stable id), {stage}, {summary} (the
// finding's) and {queue} (the job queue's peak depth and oldest job); a [part] is left out when
// a field in it is empty. A template that does not parse fails its family's compile-time check.
struct Headline {
  std::string_view names = "top cause {cause}[ ({stage})]";  // empty: the cause is not named
  // The lead when latency did not change (a cause reported without a slowdown); empty: the e2e
  // figures, as for every other cause.
  std::string_view lead_without_slowdown = {};
};

// HeadlineFields are the values a Headline template fills in.
struct HeadlineFields {
  std::string cause, stage, summary, queue;
};

// fill_headline fills a Headline template with `fields`. Never fails (templates are checked at
// compile time by headline_template_parses).
std::string fill_headline(std::string_view text, const HeadlineFields& fields);

// headline_template_parses says whether `text` is a Headline template: fields are {cause},
// {stage}, {summary} or {queue}; [parts] are closed and not nested.
constexpr bool headline_template_parses(std::string_view text) {
  constexpr std::string_view kFields[] = {"cause", "stage", "summary", "queue"};
  bool in_part = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[' || text[i] == ']') {
      if (in_part == (text[i] == '[')) return false;
      in_part = !in_part;
    } else if (text[i] == '{') {
      std::size_t close = text.find('}', i);
      if (close == std::string_view::npos) return false;
      if (std::find(std::begin(kFields), std::end(kFields), text.substr(i + 1, close - i - 1)) == std::end(kFields))
        return false;
      i = close;
    } else if (text[i] == '}') {
      return false;
    }
  }
  return !in_part;
}

struct CauseSpec {
  CauseId id;
  std::string_view name = {};  // the stable id of JSON and text output
  CauseGroup group = CauseGroup::kSlowdown;
  // The stage its mechanism acts on, reported when it explains no measured stage change;
  // nullopt for causes outside the pipeline (errors, data presence).
  std::optional<Stage> stage = std::nullopt;
  // The engine and direct stages it can move. A gateway's stages carry the engine stages they
  // stand for (stage_shares.h), so they are not listed.
  StageWeights weights = {};
  // Runs on the host's CPUs (tokenization, scheduling, HTTP, the gateway) or waits for them:
  // host CPU saturation is its evidence and first next step.
  bool cpu_side = false;
  // Reported only when latency changed (an error spike or missing data is news on its own).
  bool needs_slowdown = true;
  // Leaves requests waiting behind a running batch that does not grow (a slower engine, a stall,
  // KV pressure, longer requests): capacity_drop is what remains once none of these fits.
  bool queues_behind_batch = false;
  Headline headline = {};
  ExampleRequests examples = ExampleRequests::kLongestInStage;
  // What to do, most likely first. A family may pick among variants or name what it found.
  NextSteps next_steps = {};
  // What to do when the target shows no GPU (no GPU series: a CPU backend such as llama.cpp on
  // CPU, or a server whose GPU nobody scrapes): the same advice without GPU commands, which would
  // send a reader to a device that may not exist. Empty: next_steps name no GPU.
  NextSteps next_steps_without_gpu = {};

  // weight_on returns the listed weight on `stage`, 0 when not listed.
  constexpr double weight_on(Stage s) const {
    for (const StageWeight& w : weights)
      if (w.stage == s) return w.weight;
    return 0;
  }
};

// lists_each_cause_once says whether `specs` holds one spec for each of `listed`, in its order.
constexpr bool lists_each_cause_once(std::span<const CauseSpec> specs, std::initializer_list<CauseId> listed) {
  return std::equal(specs.begin(), specs.end(), listed.begin(), listed.end(),
                    [](const CauseSpec& spec, CauseId id) { return spec.id == id; });
}

// specs_are_complete says whether each spec has its stable id, a next step and headlines that
// parse, and a cause that moves stages weighs its own stage fully.
constexpr bool specs_are_complete(std::span<const CauseSpec> specs) {
  return std::all_of(specs.begin(), specs.end(), [](const CauseSpec& c) {
    return !c.name.empty() && !c.next_steps.empty() && headline_template_parses(c.headline.names) &&
           headline_template_parses(c.headline.lead_without_slowdown) &&
           (c.weights.empty() || (c.stage && c.weight_on(*c.stage) == 1));
  });
}

// INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(table, list) checks a family's constexpr table of specs
// against its list (causes_<family>.h) when the family's file compiles.
#define INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(table, list)                                                  \
  static_assert(::inferscope::doctor::lists_each_cause_once(table, {list(INFERSCOPE_DOCTOR_CAUSE_ID)}), \
                "every cause of " #list " needs its one CauseSpec in " #table ", in the list's order");  \
  static_assert(::inferscope::doctor::specs_are_complete(table),                                          \
                #table ": each CauseSpec needs a name, a next step, Headline templates that parse and, "   \
                "with weights, its own stage weighted 1")

// cause_table lists every cause once, in CauseId order (gathered from the families once).
std::span<const CauseSpec> cause_table();

// spec returns the table's entry for `id`.
const CauseSpec& spec(CauseId id);

// spec_named returns the spec whose stable id is `name`; nullptr for an unknown id.
const CauseSpec* spec_named(std::string_view name);

// group_of returns the group of the cause whose stable id is `name` (a Finding's cause); nullopt
// for an unknown id.
std::optional<CauseGroup> group_of(std::string_view name);

}  // namespace inferscope::doctor
