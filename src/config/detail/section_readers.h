// File: config/detail/section_readers.h
// The section readers of up's config that live in their own files: targets (target_sections.cpp),
// a custom target's roles (role_mapping.cpp, also read alone by `doctor --roles`), notifications
// and the report schedule (notification_sections.cpp). Each fails through Reader::fail with
// file:line:column and the key. DO NOT INCLUDE THIS FILE DIRECTLY outside src/config.
#pragma once

#include <memory>
#include <string>

#include "config/detail/yaml_reader.h"
#include "config/stack_config.h"
#include "config/web_config.h"
#include "dialect/custom_dialect.h"
#include "relay/relay_config.h"

namespace inferscope::config::detail {

// read_roles reads `roles: {ROLE: NAME | {metric: NAME, unit: UNIT}}` of a custom target; each
// line is checked on its own first, so an error points at the line that is wrong.
// `prefix` is the path of `node` with a trailing dot ("targets[0].", "" for a --roles file).
std::shared_ptr<const dialect::CustomDialect> read_roles(const Reader& r, const YAML::Node& node, const std::string& prefix);

// read_target reads one `targets[i]` entry whose url is http(s)://; read_queue_target one whose
// url is redis://. `path` is the entry's key path ("targets[1]").
TargetConfig read_target(const Reader& r, const YAML::Node& node, const std::string& path);
QueueTargetConfig read_queue_target(const Reader& r, const YAML::Node& node, const std::string& path);

// read_notifications reads `notifications:` into the relay's config.
void read_notifications(const Reader& r, const YAML::Node& node, relay::RelayConfig& relay);

// read_report reads `report:` after notifications (its channels must name configured ones).
void read_report(const Reader& r, const YAML::Node& node, StackConfig& c);

// read_web reads `web:` (tls, users, tokens); `file` names the config in each entry's `where`.
// Token files are read later, by load_web_tokens.
void read_web(const Reader& r, const YAML::Node& node, std::string_view file, WebConfig& web);

}  // namespace inferscope::config::detail
