// File: buckets.h
// Bucket-bound generators for HistogramOptions::buckets.
// Example: HistogramOptions o; o.buckets = exponential_buckets(0.001, 2, 16);
// Thread-safe (pure functions). Setup code only: they allocate and may throw.
#pragma once

#include <cstddef>
#include <vector>

namespace inferscope::metrics {

// exponential_buckets returns count bounds start, start*factor, ...; throws std::invalid_argument
// unless start > 0, factor > 1 and count >= 1.
std::vector<double> exponential_buckets(double start, double factor, std::size_t count);

// linear_buckets returns count bounds start, start+width, ...; throws std::invalid_argument unless
// width > 0 and count >= 1.
std::vector<double> linear_buckets(double start, double width, std::size_t count);

// one_two_five_buckets returns 1, 2, 5, 10, 20, 50, ... up to max inclusive: vLLM's
// build_1_2_5_buckets, used for token-count histograms. Throws std::invalid_argument unless max >= 1.
std::vector<double> one_two_five_buckets(double max);

// default_latency_buckets returns inferscope's 20 latency bounds in seconds, 1 ms to 60 s:
// 0.001 0.0025 0.005 0.0075 0.01 0.025 0.05 0.075 0.1 0.25 0.5 0.75 1 2.5 5 7.5 10 20 30 60.
std::vector<double> default_latency_buckets();

}  // namespace inferscope::metrics
