#include "doctor/cause_spec.h"

#include <array>

#include "doctor/cause_family.h"

namespace inferscope::doctor {
namespace {

// gather places each family's specs at their ids' index. Each family's table is checked against
// its list when it compiles, and CauseId is made of those lists, so a hole or a second spec for
// one id can only mean a family missing here (or here twice).
std::array<CauseSpec, kCauseCount> gather() {
  std::array<CauseSpec, kCauseCount> table{};
  std::array<bool, kCauseCount> placed{};
  for (auto family : {detail::data_presence_causes, detail::load_mix_causes, detail::kv_capacity_causes,
                      detail::engine_speed_causes, detail::engine_feature_causes, detail::disaggregation_causes, detail::stall_causes, detail::direct_stage_causes,
                      detail::replica_causes, detail::error_causes, detail::queue_causes, detail::unexplained_causes})
    for (const CauseSpec& c : family()) {
      const auto at = static_cast<std::size_t>(c.id);
      if (placed[at]) INFERSCOPE_BUG("cause_spec.cpp: two specs for one CauseId (a family gathered twice)");
      table[at] = c;
      placed[at] = true;
    }
  for (bool p : placed)
    if (!p) INFERSCOPE_BUG("cause_spec.cpp: a CauseId without a spec (a family's table is not gathered here)");
  return table;
}

}  // namespace

std::span<const CauseSpec> cause_table() {
  static const std::array<CauseSpec, kCauseCount> table = gather();
  return table;
}

const CauseSpec& spec(CauseId id) { return cause_table()[static_cast<std::size_t>(id)]; }

const CauseSpec* spec_named(std::string_view name) {
  for (const CauseSpec& c : cause_table())
    if (c.name == name) return &c;
  return nullptr;
}

std::optional<CauseGroup> group_of(std::string_view name) {
  if (const CauseSpec* c = spec_named(name)) return c->group;
  return std::nullopt;
}

std::string_view to_string(CauseId id) { return spec(id).name; }

std::optional<CauseId> cause_from_string(std::string_view id) {
  if (const CauseSpec* c = spec_named(id)) return c->id;
  return std::nullopt;
}

std::string fill_headline(std::string_view text, const HeadlineFields& fields) {
  auto value = [&](std::string_view field) -> const std::string& {
    if (field == "cause") return fields.cause;
    if (field == "stage") return fields.stage;
    if (field == "summary") return fields.summary;
    return fields.queue;
  };
  // fill_part fills a stretch without [parts]; false when a field in it is empty.
  auto fill_part = [&](std::string_view part, std::string& out) {
    bool all_set = true;
    for (std::size_t i = 0; i < part.size(); ++i) {
      if (part[i] != '{') {
        out += part[i];
        continue;
      }
      std::size_t close = part.find('}', i);
      const std::string& v = value(part.substr(i + 1, close - i - 1));
      all_set = all_set && !v.empty();
      out += v;
      i = close;
    }
    return all_set;
  };
  std::string out;
  while (!text.empty()) {
    std::size_t open = text.find('[');
    fill_part(text.substr(0, open), out);
    if (open == std::string_view::npos) break;
    std::size_t close = text.find(']', open);
    std::string part;
    if (fill_part(text.substr(open + 1, close - open - 1), part)) out += part;
    text.remove_prefix(close + 1);
  }
  return out;
}

}  // namespace inferscope::doctor
