// File: src/metrics/detail/registry_access.h -- private to the metrics library.
// The renderer's view of a Registry's internals (families, hooks), kept out of the public header.
#pragma once

#include <string>

#include <inferscope/metrics/exposition.h>

namespace inferscope::metrics::detail {

// RegistryAccess is the friend of Registry that rendering goes through.
class RegistryAccess {
 public:
  // run_hooks runs the collect hooks (copied under the hooks mutex, run outside it).
  static void run_hooks(const Registry& registry);
  // write_families appends every family, then the rejected-values self-metric, holding the
  // registry mutex (registration waits; metric writes do not).
  static void write_families(const Registry& registry, ExpositionFormat format, std::string& out);
};

}  // namespace inferscope::metrics::detail
