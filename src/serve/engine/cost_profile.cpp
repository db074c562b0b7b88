// Profile parsing and the catalog. Unknown keys are rejected so a typo in a profile file fails
// at startup instead of silently costing 0.
#include "serve/engine/cost_profile.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace inferscope::serve {
namespace {

struct NumberField {
  const char* key;
  double CostProfile::*member;
  bool required;
};

constexpr NumberField kNumberFields[] = {
    {"step_overhead_s", &CostProfile::step_overhead_s, true},
    {"forward_base_s", &CostProfile::forward_base_s, true},
    {"prefill_token_s", &CostProfile::prefill_token_s, true},
    {"prefill_attention_s", &CostProfile::prefill_attention_s, true},
    {"decode_seq_s", &CostProfile::decode_seq_s, true},
    {"decode_kv_token_s", &CostProfile::decode_kv_token_s, true},
    {"request_overhead_s", &CostProfile::request_overhead_s, false},
    {"max_request_s", &CostProfile::max_request_s, false},
    {"lora_load_s", &CostProfile::lora_load_s, false},
    {"kv_bytes_per_token", &CostProfile::kv_bytes_per_token, true},
    {"weights_bytes", &CostProfile::weights_bytes, true},
    {"gpu_memory_total_bytes", &CostProfile::gpu_memory_total_bytes, true},
    {"idle_power_w", &CostProfile::idle_power_w, true},
    {"max_power_w", &CostProfile::max_power_w, true},
    {"idle_temperature_c", &CostProfile::idle_temperature_c, true},
    {"max_temperature_c", &CostProfile::max_temperature_c, true},
};

Error field_error(std::string_view where, std::string_view key, std::string_view cause) {
  return make_error("cannot read profile field '" + std::string(key) + "' from " +
                    std::string(where) + ": " + std::string(cause));
}

Result<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read profiles from " + path.string() + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<void> add_text(ProfileCatalog& catalog, std::string_view text, const std::string& where) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return make_error("cannot parse profile JSON from " + where + ": syntax error");
  if (json.is_object() && json.contains("profiles")) json = json["profiles"];
  if (!json.is_array()) json = nlohmann::json::array({json});
  for (const auto& item : json) {
    auto profile = parse_profile(item, where);
    if (!profile) return profile.error();
    catalog.add(std::move(profile.value()));
  }
  return {};
}

}  // namespace

Result<CostProfile> parse_profile(const nlohmann::json& json, std::string_view where) {
  if (!json.is_object()) return make_error("cannot read profile from " + std::string(where) + ": not an object");
  CostProfile p;
  for (const auto& item : json.items()) {
    // Named locals rather than a structured binding: clang 14 (the fuzz build) cannot capture a
    // binding in the lambda below.
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    if (key == "name" || key == "description" || key == "gpu_name") {
      if (!value.is_string()) return field_error(where, key, "not a string");
      (key == "name" ? p.name : key == "description" ? p.description : p.gpu_name) = value.get<std::string>();
    } else if (key == "source") {
      if (!value.is_object() || !value.contains("reference"))
        return field_error(where, key, "must be an object with a \"reference\"");
      p.source = value;
    } else if (key == "independent_requests") {
      if (!value.is_boolean()) return field_error(where, key, "not a boolean");
      p.independent_requests = value.get<bool>();
    } else if (key == "max_num_seqs") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0 || value.get<std::uint64_t>() > 1'000'000)
        return field_error(where, key, "not an integer in 1..1000000");
      p.max_num_seqs = value.get<std::uint32_t>();
    } else if (key == "kv_capacity_tokens") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0)
        return field_error(where, key, "not a positive integer");
      p.kv_capacity_tokens = value.get<std::uint64_t>();
    } else {
      auto it = std::find_if(std::begin(kNumberFields), std::end(kNumberFields),
                             [&](const NumberField& f) { return key == f.key; });
      if (it == std::end(kNumberFields)) return field_error(where, key, "unknown field");
      if (!value.is_number() || value.get<double>() < 0)
        return field_error(where, key, "not a non-negative number");
      p.*(it->member) = value.get<double>();
    }
  }
  if (p.name.empty()) return field_error(where, "name", "missing");
  if (p.source.is_null()) return field_error(where, "source", "missing");
  if (p.kv_capacity_tokens == 0) return field_error(where, "kv_capacity_tokens", "missing");
  for (const auto& f : kNumberFields)
    if (f.required && !json.contains(f.key)) return field_error(where, f.key, "missing");
  return p;
}

Result<ProfileCatalog> ProfileCatalog::load(const std::string& path) {
  ProfileCatalog catalog;
  for (std::string_view text : embedded_profile_texts()) {
    auto added = add_text(catalog, text, "built-in profiles");
    if (!added) return added.error();
  }
  if (path.empty()) return catalog;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    if (ec) return make_error("cannot list profiles from " + path + ": " + ec.message());
    std::sort(files.begin(), files.end());
  } else {
    files.emplace_back(path);
  }
  for (const auto& file : files) {
    auto text = read_text(file);
    if (!text) return text.error();
    auto added = add_text(catalog, text.value(), file.string());
    if (!added) return added.error();
  }
  return catalog;
}

const CostProfile* ProfileCatalog::find(std::string_view name) const {
  auto it = profiles_.find(name);
  return it == profiles_.end() ? nullptr : &it->second;
}

std::vector<std::string> ProfileCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& [name, profile] : profiles_) out.push_back(name);
  return out;
}

void ProfileCatalog::add(CostProfile profile) {
  std::string name = profile.name;
  profiles_.insert_or_assign(std::move(name), std::move(profile));
}

}  // namespace inferscope::serve
