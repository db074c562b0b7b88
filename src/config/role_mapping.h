// File: config/role_mapping.h
// Reads a custom target's role mapping on its own (`inferscope doctor --roles FILE`): the same
// `roles:` and optional `model_label:` keys a `kind: custom` target has in up's config, checked
// the same way, with errors naming file:line:column and the key ("roles.e2e").
// Example: auto mapping = load_role_mapping("llm-roles.yaml");  // roles: {e2e: llm_request_latency_seconds}
// Pure apart from reading the file; thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>

#include <inferscope/common/result.h>

#include "dialect/custom_dialect.h"

namespace inferscope::config {

// load_role_mapping reads FILE; parse_role_mapping is the same over text in memory.
Result<std::shared_ptr<const dialect::CustomDialect>> load_role_mapping(const std::filesystem::path& file);
Result<std::shared_ptr<const dialect::CustomDialect>> parse_role_mapping(std::string_view yaml_text,
                                                                        std::string_view file);

}  // namespace inferscope::config
