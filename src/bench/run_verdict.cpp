#include "bench/run_verdict.h"

#include <fmt/format.h>

namespace inferscope::bench {

RunVerdict run_verdict(const RunStats& stats, bool interrupted, std::optional<double> fail_under_goodput) {
  if (interrupted) return {kExitInterrupted, {}};
  if (stats.completed == 0) {
    return {kExitAllFailed, fmt::format("all {} measured requests failed (see Errors in the report)", stats.failed)};
  }
  if (fail_under_goodput && stats.slo_attainment < *fail_under_goodput) {
    return {kExitUnderGoodput, fmt::format("goodput {:.2f}% is under --fail-under-goodput {:.2f}%",
                                           stats.slo_attainment * 100, *fail_under_goodput * 100)};
  }
  return {};
}

}  // namespace inferscope::bench
