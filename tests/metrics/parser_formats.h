// The two text formats every exposition parser test names, spelled short so that a table of cases
// reads as its texts. Test-only.
#pragma once

#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::metrics::parser_test {

inline constexpr auto k004 = ExpositionTextFormat::kPrometheus004;
inline constexpr auto kOm = ExpositionTextFormat::kOpenMetrics100;

}  // namespace inferscope::metrics::parser_test
