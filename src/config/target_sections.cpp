// File: target_sections.cpp
// `targets:` of up's config: an http(s) target (its kind, or a custom target's roles) and a redis
// target (password source, queue systems, streams and lists).
#include <algorithm>

#include "config/detail/section_readers.h"

namespace inferscope::config::detail {

TargetConfig read_target(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.expect_keys(node, path, {"name", "url", "kind", "roles", "model_label"});
  if (!node["url"]) r.fail(node, path + ".url", "missing (every target needs its /metrics URL)");
  auto target = parse_target_url(r.non_empty(node["url"], path + ".url"));
  if (!target) r.fail(node["url"], path + ".url", target.error().message);
  if (node["name"]) {
    target->name = r.non_empty(node["name"], path + ".name");
    if (!valid_name(target->name)) r.fail(node["name"], path + ".name", "use letters, digits, '_', '-', '.'");
  }
  if (node["kind"]) {
    target->kind = r.scalar(node["kind"], path + ".kind");
    if (target->kind != kCustomKind && target->kind != kAutoKind && !is_dialect_kind(target->kind)) {
      r.fail(node["kind"], path + ".kind",
             "unknown kind \"" + target->kind + "\" (" + dialect_kind_list() + ", " + std::string(kCustomKind) + ", " +
                 std::string(kAutoKind) + ")");
    }
  }
  if (target->kind == kCustomKind) {
    target->custom = read_roles(r, node, path + ".");
  } else {
    for (const char* key : {"roles", "model_label"}) {
      if (node[key]) r.fail(node[key], path + "." + key, "only a target of kind custom maps its own names");
    }
  }
  return *target;
}

QueueTargetConfig read_queue_target(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.expect_keys(node, path, {"name", "url", "kind", "password_file", "password_env", "queues"});
  auto target = parse_queue_target_url(r.non_empty(node["url"], path + ".url"));
  if (!target) r.fail(node["url"], path + ".url", target.error().message);
  if (node["name"]) {
    target->name = r.non_empty(node["name"], path + ".name");
    if (!valid_name(target->name)) r.fail(node["name"], path + ".name", "use letters, digits, '_', '-', '.'");
  }
  if (node["kind"] && r.scalar(node["kind"], path + ".kind") != kRedisKind) {
    r.fail(node["kind"], path + ".kind", "a redis:// target has kind redis (or no kind)");
  }
  if (node["password_file"]) target->password.file = r.non_empty(node["password_file"], path + ".password_file");
  if (node["password_env"]) target->password.env = r.non_empty(node["password_env"], path + ".password_env");
  if (!target->password.file.empty() && !target->password.env.empty()) {
    r.fail(node, path + ".password_file", "give password_file or password_env, not both");
  }
  const YAML::Node queues = node["queues"];
  if (!queues) return *target;
  const std::string qpath = path + ".queues";
  r.expect_keys(queues, qpath, {"systems", "streams", "lists", "interval"});
  if (const YAML::Node streams = queues["streams"]) {
    if (!streams.IsSequence()) r.fail(streams, qpath + ".streams", "expected a list of {key: ..., group: ...}");
    for (std::size_t i = 0; i < streams.size(); ++i) {
      const std::string spath = qpath + ".streams[" + std::to_string(i) + "]";
      r.expect_keys(streams[i], spath, {"key", "group"});
      if (!streams[i]["key"] || !streams[i]["group"]) r.fail(streams[i], spath, "needs key and group");
      target->streams.emplace_back(r.non_empty(streams[i]["key"], spath + ".key"),
                                   r.non_empty(streams[i]["group"], spath + ".group"));
    }
  }
  if (queues["lists"]) target->lists = r.string_list(queues["lists"], qpath + ".lists");
  if (queues["systems"]) {
    target->systems = r.string_list(queues["systems"], qpath + ".systems");
    for (std::size_t i = 0; i < target->systems.size(); ++i) {
      const std::string& system = target->systems[i];
      if (std::find(std::begin(kQueueSystems), std::end(kQueueSystems), system) == std::end(kQueueSystems)) {
        const YAML::Node item = queues["systems"].IsSequence() ? queues["systems"][i] : queues["systems"];
        r.fail(item, qpath + ".systems[" + std::to_string(i) + "]",
               "unknown queue system \"" + system + "\" (rq, celery, streams, list)");
      }
    }
    const auto has = [&](std::string_view s) {
      return std::find(target->systems.begin(), target->systems.end(), s) != target->systems.end();
    };
    if (!target->streams.empty() && !has("streams")) {
      r.fail(queues["streams"], qpath + ".streams", "streams are named but systems does not list streams");
    }
    if (!target->lists.empty() && !has("list")) {
      r.fail(queues["lists"], qpath + ".lists", "lists are named but systems does not list list");
    }
    if (has("streams") && target->streams.empty()) {
      r.fail(queues["systems"], qpath + ".systems", "streams needs queues.streams: [{key: ..., group: ...}]");
    }
    if (has("list") && target->lists.empty()) r.fail(queues["systems"], qpath + ".systems", "list needs queues.lists");
  } else {
    if (!target->streams.empty()) target->systems.emplace_back("streams");
    if (!target->lists.empty()) target->systems.emplace_back("list");
  }
  if (queues["interval"]) target->interval = r.duration(queues["interval"], qpath + ".interval");
  return *target;
}

}  // namespace inferscope::config::detail
