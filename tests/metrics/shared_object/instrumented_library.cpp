// A shared object that instruments through its own static copy of the metrics library, as a
// plugin or a second service library would. Built twice (INSTRUMENTED_PREFIX a and b) for
// tests/metrics/two_shared_objects_test.cpp; each copy keeps its own registry and series.
#include <inferscope/metrics/registry.h>

#include <cstdint>

#define INSTRUMENTED_JOIN2(a, b) a##b
#define INSTRUMENTED_JOIN(a, b) INSTRUMENTED_JOIN2(a, b)
#define INSTRUMENTED_FN(name) INSTRUMENTED_JOIN(INSTRUMENTED_PREFIX, name)

namespace {

struct Instruments {
  inferscope::metrics::Registry registry;
  inferscope::metrics::Counter ops =
      registry.counter({.name = "plugin_ops_total", .help = "operations"}).with({});
  inferscope::metrics::Histogram latency =
      registry.histogram({{.name = "plugin_latency_seconds", .help = "latency"}, {0.001, 0.01, 0.1}}).with({});
};

Instruments& instruments() {
  static Instruments i;
  return i;
}

}  // namespace

// <prefix>_work counts `n` operations and observes `n` latencies on the calling thread.
extern "C" [[gnu::visibility("default")]] void INSTRUMENTED_FN(_work)(std::uint64_t n) {
  Instruments& i = instruments();
  for (std::uint64_t k = 0; k < n; ++k) {
    i.ops.inc();
    i.latency.observe(0.005);
  }
}

// <prefix>_totals reads the counter and the histogram's count.
extern "C" [[gnu::visibility("default")]] void INSTRUMENTED_FN(_totals)(double* ops, std::uint64_t* observations) {
  *ops = instruments().ops.value();
  *observations = instruments().latency.snapshot().count;
}
