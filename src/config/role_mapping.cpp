// File: role_mapping.cpp
// A custom target's `roles:`/`model_label:`, read inside up's config (read_roles) or alone from a
// file of its own (`inferscope doctor --roles FILE`).
#include "config/role_mapping.h"

#include <fstream>
#include <sstream>

#include "config/detail/section_readers.h"

namespace inferscope::config {
namespace detail {

std::shared_ptr<const dialect::CustomDialect> read_roles(const Reader& r, const YAML::Node& node, const std::string& prefix) {
  const YAML::Node roles = node["roles"];
  if (!roles) r.fail(node, prefix + "roles", "missing: a custom target maps roles to its names (roles: {e2e: NAME, ...})");
  if (!roles.IsMap() || roles.size() == 0) r.fail(roles, prefix + "roles", "expected a mapping ROLE: METRIC_NAME");
  std::vector<dialect::CustomRole> mapped;
  for (const auto& entry : roles) {
    const std::string role = entry.first.as<std::string>();
    const std::string key = prefix + "roles." + role;
    dialect::CustomRole line{.role = role};
    if (entry.second.IsMap()) {
      r.expect_keys(entry.second, key, {"metric", "unit"});
      if (!entry.second["metric"]) r.fail(entry.second, key + ".metric", "missing: the exposed metric name");
      line.metric = r.non_empty(entry.second["metric"], key + ".metric");
      if (entry.second["unit"]) line.unit = r.non_empty(entry.second["unit"], key + ".unit");
    } else {
      line.metric = r.non_empty(entry.second, key);
    }
    if (auto alone = dialect::make_custom_dialect({line}, ""); !alone) r.fail(entry.second, key, alone.error().message);
    mapped.push_back(std::move(line));
  }
  std::string model_label;
  if (node["model_label"]) model_label = r.non_empty(node["model_label"], prefix + "model_label");
  auto custom = dialect::make_custom_dialect(std::move(mapped), model_label);
  if (!custom) r.fail(node["model_label"] ? node["model_label"] : roles, prefix + "roles", custom.error().message);
  return *custom;
}

}  // namespace detail

using detail::ConfigError;
using detail::one_line;
using detail::read_roles;
using detail::Reader;
using detail::yaml_syntax_error;

Result<std::shared_ptr<const dialect::CustomDialect>> parse_role_mapping(std::string_view yaml_text,
                                                                        std::string_view file) {
  Reader reader(file);
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (root.IsNull()) return make_error(std::string(file) + ":1:1: the role mapping is empty (it needs 'roles')");
    reader.expect_keys(root, "", {"roles", "model_label"});
    return read_roles(reader, root, "");
  } catch (const ConfigError& e) {
    return make_error(one_line(e.message));
  } catch (const YAML::Exception& e) {
    return make_error(yaml_syntax_error(file, e));
  }
}

Result<std::shared_ptr<const dialect::CustomDialect>> load_role_mapping(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error("cannot read role mapping from " + file.string() + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_role_mapping(text.str(), file.string());
}

}  // namespace inferscope::config
