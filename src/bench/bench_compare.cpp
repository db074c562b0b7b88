#include "bench/bench_compare.h"

#include <cmath>
#include <fstream>

#include <fmt/format.h>

namespace inferscope::bench {
namespace {

Result<nlohmann::json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(fmt::format("cannot read summary from {}: cannot open file", path));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(fmt::format("cannot read summary from {}: not a JSON object", path));
  return j;
}

}  // namespace

std::string compare_summaries(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<std::string> keys = {"completed", "failed", "duration", "request_throughput", "request_goodput",
                                   "slo_attainment", "output_throughput", "total_token_throughput"};
  for (const char* metric :
       {"ttft", "ttft_corrected", "tpot", "itl", "e2el", "e2el_corrected", "schedule_lag", "io_loop_lag"}) {
    for (const char* stat : {"mean", "median", "p90", "p99", "p99.9", "max"}) keys.push_back(fmt::format("{}_{}_ms", stat, metric));
  }
  std::string out = fmt::format("{:<28} {:>14} {:>14} {:>14} {:>9}\n", "metric", "A", "B", "B - A", "change");
  out += std::string(83, '-') + "\n";
  for (const std::string& k : keys) {
    if (!a.contains(k) || !b.contains(k) || !a[k].is_number() || !b[k].is_number()) continue;
    double x = a[k].get<double>(), y = b[k].get<double>();
    std::string change = x != 0 ? fmt::format("{:+.1f}%", (y - x) / std::fabs(x) * 100) : std::string("n/a");
    out += fmt::format("{:<28} {:>14.3f} {:>14.3f} {:>+14.3f} {:>9}\n", k, x, y, y - x, change);
  }
  if (a.contains("errors") && b.contains("errors") && a["errors"].is_object() && b["errors"].is_object()) {
    for (auto& [kind, count] : b["errors"].items()) {
      double x = a["errors"].value(kind, 0.0), y = count.is_number() ? count.get<double>() : 0;
      if (x == 0 && y == 0) continue;
      out += fmt::format("{:<28} {:>14.0f} {:>14.0f} {:>+14.0f}\n", "errors_" + kind, x, y, y - x);
    }
  }
  return out;
}

Result<std::string> compare_summary_files(const std::string& a_path, const std::string& b_path) {
  auto a = read_json(a_path);
  if (!a) return a.error();
  auto b = read_json(b_path);
  if (!b) return b.error();
  return compare_summaries(*a, *b);
}

}  // namespace inferscope::bench
