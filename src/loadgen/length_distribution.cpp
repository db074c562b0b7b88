#include "loadgen/length_distribution.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace inferscope::loadgen {
namespace {

constexpr double kMaxLength = 1e6;

std::uint32_t clamp_length(double v) {
  if (!std::isfinite(v)) return 1;
  return static_cast<std::uint32_t>(std::clamp(std::round(v), 1.0, kMaxLength));
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool to_number(const std::string& s, double& out) {
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out) && out >= 0;
}

}  // namespace

std::uint32_t LengthDistribution::sample(WorkloadRng& rng) const {
  switch (kind) {
    case Kind::kFixed:
      return clamp_length(a);
    case Kind::kUniform:
      return clamp_length(static_cast<double>(std::uniform_int_distribution<std::uint64_t>(
          static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b))(rng)));
    case Kind::kNormal:
      return clamp_length(std::normal_distribution<double>(a, b)(rng));
    case Kind::kLogNormal: {
      // Convert the lengths' mean and SD into the underlying normal's mu and sigma.
      double sigma2 = std::log(1 + (b * b) / (a * a));
      double mu = std::log(a) - sigma2 / 2;
      return clamp_length(std::lognormal_distribution<double>(mu, std::sqrt(sigma2))(rng));
    }
  }
  return 1;
}

double LengthDistribution::mean() const { return kind == Kind::kUniform ? (a + b) / 2 : a; }

LengthDistribution fixed_length(std::uint32_t length) {
  return {LengthDistribution::Kind::kFixed, static_cast<double>(length), 0};
}

LengthDistribution range_length(std::uint32_t length, double range_ratio) {
  if (range_ratio <= 0) return fixed_length(length);
  double lo = std::max(1.0, std::floor(length * (1 - range_ratio)));
  double hi = std::ceil(length * (1 + range_ratio));
  return {LengthDistribution::Kind::kUniform, lo, hi};
}

Result<LengthDistribution> parse_length_distribution(std::string_view text, std::string_view what) {
  auto fail = [&](std::string_view cause) {
    return make_error(fmt::format("cannot parse length distribution from {}: {} ('{}')", what, cause, text));
  };
  std::vector<std::string> parts = split(text, ':');
  std::vector<double> nums;
  std::size_t first = parts.size() == 1 ? 0 : 1;
  for (std::size_t i = first; i < parts.size(); ++i) {
    double v = 0;
    if (!to_number(parts[i], v)) return fail("expected non-negative numbers");
    nums.push_back(v);
  }
  std::string kind = parts.size() == 1 ? "fixed" : parts[0];
  LengthDistribution d;
  if (kind == "fixed" && nums.size() == 1) {
    d = {LengthDistribution::Kind::kFixed, nums[0], 0};
  } else if (kind == "uniform" && nums.size() == 2 && nums[0] <= nums[1]) {
    d = {LengthDistribution::Kind::kUniform, nums[0], nums[1]};
  } else if (kind == "normal" && nums.size() == 2) {
    d = {LengthDistribution::Kind::kNormal, nums[0], nums[1]};
  } else if (kind == "lognormal" && nums.size() == 2 && nums[0] > 0) {
    d = {LengthDistribution::Kind::kLogNormal, nums[0], nums[1]};
  } else {
    return fail("expected N, fixed:N, uniform:LO:HI, normal:MEAN:SD or lognormal:MEAN:SD");
  }
  return d;
}

}  // namespace inferscope::loadgen
