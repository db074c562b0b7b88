// k8s_yaml: a recursive walk of the JSON value into yaml-cpp's emitter.
#include "up/k8s_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace inferscope::up {
namespace {

using nlohmann::json;

// reads_as_plain_string tells whether `text`, written unquoted, is read back as that string by
// YAML 1.1 and 1.2 readers (Go's yaml.v2 and v3, which kubectl and the API server use). Kept
// narrow on purpose: a letter or '/' first, then letters, digits and . _ / - only, and none of
// YAML 1.1's booleans and nulls. Anything else is quoted, which is never wrong.
bool reads_as_plain_string(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '/')) return false;
  const bool plain_chars = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' || c == '-';
  });
  if (!plain_chars) return false;
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view word : {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}) {
    if (lower == word) return false;
  }
  return true;
}

void emit(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        emit(out, json(key));
        out << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const json& item : value) emit(out, item);
      out << YAML::EndSeq;
      return;
    case json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      // A literal block ("|") reads back with one final newline: kept for text that has exactly
      // that; other multi-line text (a dashboard's JSON ends without one) is double-quoted.
      if (text.find('\n') != std::string::npos && text.ends_with('\n') && !text.ends_with("\n\n")) {
        out << YAML::Literal << text;
      } else if (reads_as_plain_string(text)) {
        out << text;
      } else {
        out << YAML::DoubleQuoted << text;
      }
      return;
    }
    case json::value_t::boolean:
      out << value.get<bool>();
      return;
    case json::value_t::number_integer:
      out << value.get<std::int64_t>();
      return;
    case json::value_t::number_unsigned:
      out << value.get<std::uint64_t>();
      return;
    case json::value_t::number_float:
      out << value.get<double>();
      return;
    case json::value_t::null:
    case json::value_t::discarded:
    case json::value_t::binary:
      out << YAML::Null;
      return;
  }
}

}  // namespace

std::string k8s_yaml(const json& document) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, document);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace inferscope::up
