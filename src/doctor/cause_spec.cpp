#include "doctor/cause_spec.h"

#include <algorithm>

#include "doctor/cause_family.h"

namespace inferscope::doctor {
namespace {

std::vector<CauseSpec> gather() {
  std::vector<CauseSpec> all;
  for (auto family : {detail::data_presence_causes, detail::load_mix_causes, detail::kv_capacity_causes,
                      detail::engine_speed_causes, detail::stall_causes, detail::direct_stage_causes,
                      detail::replica_causes, detail::error_causes, detail::queue_causes, detail::unexplained_causes})
    for (CauseSpec& c : family()) all.push_back(std::move(c));
  std::sort(all.begin(), all.end(), [](const CauseSpec& a, const CauseSpec& b) { return a.id < b.id; });
  return all;
}

}  // namespace

double CauseSpec::weight_on(Stage s) const {
  for (const StageWeight& w : weights)
    if (w.stage == s) return w.weight;
  return 0;
}

std::span<const CauseSpec> cause_table() {
  static const std::vector<CauseSpec> table = gather();
  return table;
}

const CauseSpec& spec(CauseId id) { return cause_table()[static_cast<std::size_t>(id)]; }

std::string_view to_string(CauseId id) { return spec(id).name; }

std::optional<CauseId> cause_from_string(std::string_view id) {
  for (const CauseSpec& c : cause_table())
    if (c.name == id) return c.id;
  return std::nullopt;
}

}  // namespace inferscope::doctor
