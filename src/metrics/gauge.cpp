// Gauge handle: only the null series lives here; everything else is inline in gauge.h.
#include <inferscope/metrics/gauge.h>

namespace inferscope::metrics {
namespace {
// null_gauge_series backs default-constructed handles; leaked so it survives static destruction.
const std::shared_ptr<detail::GaugeSeries>& null_gauge_series() {
  static auto* series =
      new std::shared_ptr<detail::GaugeSeries>(std::make_shared<detail::GaugeSeries>("", nullptr));
  return *series;
}
}  // namespace

Gauge::Gauge() noexcept : series_(null_gauge_series()) {}

}  // namespace inferscope::metrics
