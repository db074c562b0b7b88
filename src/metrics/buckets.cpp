// Bucket-bound generators (see buckets.h).
#include <inferscope/metrics/buckets.h>

#include <stdexcept>

namespace inferscope::metrics {

std::vector<double> exponential_buckets(double start, double factor, std::size_t count) {
  if (!(start > 0) || !(factor > 1) || count == 0) {
    throw std::invalid_argument("exponential_buckets needs start > 0, factor > 1, count >= 1");
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  double bound = start;
  for (std::size_t i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

std::vector<double> linear_buckets(double start, double width, std::size_t count) {
  if (!(width > 0) || count == 0) {
    throw std::invalid_argument("linear_buckets needs width > 0, count >= 1");
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  // start + i * width, not repeated addition, so 0.1-wide buckets do not accumulate error.
  for (std::size_t i = 0; i < count; ++i) bounds.push_back(start + static_cast<double>(i) * width);
  return bounds;
}

std::vector<double> one_two_five_buckets(double max) {
  if (!(max >= 1)) throw std::invalid_argument("one_two_five_buckets needs max >= 1");
  std::vector<double> bounds;
  for (double decade = 1; decade <= max; decade *= 10) {
    for (double step : {1.0, 2.0, 5.0}) {
      if (decade * step <= max) bounds.push_back(decade * step);
    }
  }
  return bounds;
}

std::vector<double> default_latency_buckets() {
  return {0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25,
          0.5,   0.75,   1.0,   2.5,    5.0,  7.5,   10.0, 20.0,  30.0, 60.0};
}

}  // namespace inferscope::metrics
