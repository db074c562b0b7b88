// libFuzzer target for the Prometheus HTTP API answer parsers (query/query_range, series,
// targets, alerts, exemplars): any input must give a value or an Error, never a crash, and every
// parsed matrix series keeps the points it was given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "promapi/api_response.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto query = inferscope::promapi::parse_query_response(body);
  if (query) {
    for (const auto& series : query->series) {
      if (query->result_type == "vector" && series.points.size() != 1) std::abort();
    }
  }
  (void)inferscope::promapi::parse_series_response(body);
  (void)inferscope::promapi::parse_targets_response(body);
  (void)inferscope::promapi::parse_alerts_response(body);
  (void)inferscope::promapi::parse_exemplars_response(body);
  return 0;
}
