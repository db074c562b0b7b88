// File: config/detail/yaml_reader.h
// Reader reads every value of a YAML config through one place, so that each error carries
// file:line:column and the dotted key path ("targets[1].kind"); the helpers beside it check names
// and make messages one line. DO NOT INCLUDE THIS FILE DIRECTLY outside src/config.
// Reader's methods throw ConfigError; the public loaders catch it (exceptions never leave src/config).
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/prom_duration.h"

namespace inferscope::config::detail {

// one_line makes an error message safe for a one-line report: keys and YAML messages may hold
// line breaks or control bytes (a multi-line key), and a very long key is cut.
std::string one_line(const std::string& message);

// ConfigError unwinds the parse to the public loader, which turns it into an Error; exceptions
// never leave src/config.
struct ConfigError {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& why) const {
    const YAML::Mark mark = node.Mark();
    std::ostringstream out;
    out << file_ << ':' << (mark.line + 1) << ':' << (mark.column + 1) << ": key '" << key << "': " << why;
    throw ConfigError{out.str()};
  }

  // expect_keys rejects any key of `map` not in `allowed`, naming it and the ones allowed.
  void expect_keys(const YAML::Node& map, const std::string& path, std::initializer_list<std::string_view> allowed) const {
    if (!map.IsMap()) fail(map, path, "expected a mapping (key: value lines)");
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(entry.first, join(path, key), "unknown key (allowed here: " + list + ")");
    }
  }

  // file names the config file in errors.
  const std::string& file() const { return file_; }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a single value");
    return node.Scalar();
  }

  std::string non_empty(const YAML::Node& node, const std::string& key) const {
    std::string text = scalar(node, key);
    if (text.empty()) fail(node, key, "must not be empty");
    return text;
  }

  bool boolean(const YAML::Node& node, const std::string& key) const {
    const std::string text = scalar(node, key);
    if (text == "true") return true;
    if (text == "false") return false;
    fail(node, key, "expected true or false, got \"" + text + "\"");
  }

  std::chrono::milliseconds duration(const YAML::Node& node, const std::string& key) const {
    auto d = common::parse_prom_duration(scalar(node, key));
    if (!d) fail(node, key, d.error().message);
    return *d;
  }

  std::uint16_t port(const YAML::Node& node, const std::string& key) const {
    const std::string text = scalar(node, key);
    char* end = nullptr;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || value < 0 || value > 65535) {
      fail(node, key, "expected a port number 0..65535 (0 = ephemeral), got \"" + text + "\"");
    }
    return static_cast<std::uint16_t>(value);
  }

  double number(const YAML::Node& node, const std::string& key, double min, double max) const {
    const std::string text = scalar(node, key);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value)) fail(node, key, "expected a number, got \"" + text + "\"");
    if (value < min || value > max) {
      std::ostringstream why;
      why << "must be between " << min << " and " << max << ", got " << text;
      fail(node, key, why.str());
    }
    return value;
  }

  double seconds(const YAML::Node& node, const std::string& key) const {
    return static_cast<double>(duration(node, key).count()) / 1000.0;
  }

  std::vector<std::string> string_list(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> out;
    if (node.IsScalar()) {
      out.push_back(non_empty(node, key));
      return out;
    }
    if (!node.IsSequence()) fail(node, key, "expected a list");
    for (std::size_t i = 0; i < node.size(); ++i) {
      out.push_back(non_empty(node[i], key + "[" + std::to_string(i) + "]"));
    }
    return out;
  }

 private:
  std::string file_;
};

// valid_name: a target or channel name of letters, digits, '_', '-', '.'.
bool valid_name(std::string_view name);

// printable_ascii: no byte at or below ' ' and none from DEL up (URLs as given on the command line).
bool printable_ascii(std::string_view text);

// yaml_syntax_error is the one-line error of a file yaml-cpp cannot parse, at yaml-cpp's position.
std::string yaml_syntax_error(std::string_view file, const YAML::Exception& e);

}  // namespace inferscope::config::detail
