// File: prom_duration.cpp
#include "common/prom_duration.h"

#include <array>
#include <cstdint>
#include <limits>

namespace inferscope::common {
namespace {

struct PromUnit {
  std::string_view name;
  std::int64_t ms;
};

// Order matters twice: parsing demands largest-first, and "ms" must be tried before "m".
constexpr std::array<PromUnit, 7> kPromUnits{{{"y", 365LL * 24 * 3600 * 1000},
                                      {"w", 7LL * 24 * 3600 * 1000},
                                      {"d", 24LL * 3600 * 1000},
                                      {"h", 3600LL * 1000},
                                      {"ms", 1},
                                      {"m", 60LL * 1000},
                                      {"s", 1000}}};

// rank orders units by size for the largest-first rule ("ms" sits after "m" in kPromUnits).
int rank(std::string_view unit) {
  static constexpr std::array<std::string_view, 7> kBySize{"y", "w", "d", "h", "m", "s", "ms"};
  for (int i = 0; i < static_cast<int>(kBySize.size()); ++i) {
    if (kBySize[static_cast<std::size_t>(i)] == unit) return i;
  }
  return -1;
}

}  // namespace

Result<std::chrono::milliseconds> parse_prom_duration(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return make_error("not a valid duration \"" + std::string(text) + "\": " + std::string(why) +
                      " (examples: 500ms, 5s, 1m30s, 15d)");
  };
  if (text.empty()) return bad("empty");
  std::int64_t total = 0;
  int last_rank = -1;
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t number = 0;
    const std::size_t digits_start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (number > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return bad("too large");
      number = number * 10 + (text[i] - '0');
      ++i;
    }
    if (i == digits_start) return bad("expected a number");
    const PromUnit* unit = nullptr;
    for (const PromUnit& u : kPromUnits) {
      if (text.substr(i, u.name.size()) == u.name) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) return bad("expected a unit (y, w, d, h, m, s, ms)");
    const int r = rank(unit->name);
    if (r <= last_rank) return bad("units must be given largest first, each once");
    last_rank = r;
    if (number > std::numeric_limits<std::int64_t>::max() / unit->ms) return bad("too large");
    total += number * unit->ms;
    if (total < 0) return bad("too large");
    i += unit->name.size();
  }
  if (total == 0) return bad("must be positive");
  return std::chrono::milliseconds(total);
}

std::string format_prom_duration(std::chrono::milliseconds d) {
  std::int64_t left = d.count();
  if (left <= 0) return "0s";
  static constexpr std::array<PromUnit, 5> kPrint{{{"d", 24LL * 3600 * 1000},
                                              {"h", 3600LL * 1000},
                                              {"m", 60LL * 1000},
                                              {"s", 1000},
                                              {"ms", 1}}};
  std::string out;
  for (const PromUnit& u : kPrint) {
    if (left >= u.ms) {
      out += std::to_string(left / u.ms);
      out += u.name;
      left %= u.ms;
    }
  }
  return out;
}

}  // namespace inferscope::common
