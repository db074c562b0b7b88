// File: yaml_reader.cpp
#include "config/detail/yaml_reader.h"

namespace inferscope::config::detail {

std::string one_line(const std::string& message) {
  std::string out;
  for (char c : message) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < ' ' || c == 127) {
      out += '?';
    } else {
      out += c;
    }
    if (out.size() > 600) return out + "...";
  }
  return out;
}

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

bool printable_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 127; });
}

std::string yaml_syntax_error(std::string_view file, const YAML::Exception& e) {
  std::ostringstream out;
  out << file << ':' << (e.mark.line + 1) << ':' << (e.mark.column + 1) << ": cannot parse YAML: " << e.msg;
  return one_line(out.str());
}

}  // namespace inferscope::config::detail
