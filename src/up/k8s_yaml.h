// File: k8s_yaml.h
// k8s_yaml writes a JSON document (nlohmann-json, which keeps each value's type) as block YAML
// through yaml-cpp's emitter, quoting every string a YAML reader could take for another type
// ("1", "true", "on", "null", "1e3", ...). Kubernetes wants strings where its schemas say string
// (a label `grafana_dashboard: "1"`, an annotation), and yaml-cpp writes such scalars plain.
// Multi-line strings ending in one newline become literal blocks (PromQL stays readable); the
// rest is double-quoted, so every string reads back byte for byte.
// Example: std::string text = k8s_yaml({{"kind", "ConfigMap"}, {"data", {{"n", "1"}}}});
// Pure function, thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace inferscope::up {

// k8s_yaml returns `document` as one YAML document (no `---`), ending in a newline.
std::string k8s_yaml(const nlohmann::json& document);

}  // namespace inferscope::up
