#include "serve/metrics_filter.h"

#include <algorithm>
#include <array>

namespace inferscope::serve {
namespace {

// family_of_sample strips the suffix a sample of a histogram, summary, counter or info family carries.
bool sample_of(std::string_view name, std::string_view family) {
  if (name.substr(0, family.size()) != family) return false;
  const std::string_view rest = name.substr(family.size());
  static constexpr std::array<std::string_view, 7> kSuffixes = {"", "_bucket", "_sum", "_count", "_created", "_total", "_info"};
  return std::find(kSuffixes.begin(), kSuffixes.end(), rest) != kSuffixes.end();
}

bool hidden(std::string_view line, const std::vector<std::string>& families) {
  std::string_view name;
  if (line.starts_with("# HELP ") || line.starts_with("# TYPE ") || line.starts_with("# UNIT ")) {
    name = line.substr(7);
    name = name.substr(0, name.find(' '));
    return std::find(families.begin(), families.end(), name) != families.end();
  }
  if (line.empty() || line[0] == '#') return false;
  name = line.substr(0, std::min(line.find('{'), line.find(' ')));
  return std::any_of(families.begin(), families.end(), [&](const std::string& f) { return sample_of(name, f); });
}

}  // namespace

std::string drop_metric_families(std::string_view exposition, const std::vector<std::string>& families) {
  std::string out;
  out.reserve(exposition.size());
  while (!exposition.empty()) {
    const auto end = exposition.find('\n');
    const std::string_view line = exposition.substr(0, end);
    if (!hidden(line, families)) {
      out += line;
      if (end != std::string_view::npos) out += '\n';
    }
    if (end == std::string_view::npos) break;
    exposition.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace inferscope::serve
