// File: gpu_model.h
// GpuModel: the simulated GPU's utilisation, temperature, power and energy, driven by the
// engine's busy/idle intervals (DCGM-like figures for `inferscope serve`'s /metrics).
// Example: GpuModel g(profile, 1.0, now); g.advance(step_end, true); g.fill(now, false, used, stats);
// Thread safety: none (the Engine guards it with its stats mutex). Never allocates.
#pragma once

#include "serve/engine/cost_profile.h"
#include "serve/engine/engine_types.h"

namespace inferscope::serve {

// GpuModel integrates exponentially weighted utilisation and a first-order thermal model.
class GpuModel {
 public:
  static constexpr double kThermalTimeConstantS = 20.0;  // real seconds; H100-like heat-up

  // GpuModel starts idle at `now`; utilisation is averaged over `busy_window_s` real seconds.
  GpuModel(const CostProfile& profile, double busy_window_s, SteadyTime now);
  // advance records that the GPU was busy (or idle) from the last call until `t`; earlier
  // times are ignored.
  void advance(SteadyTime t, bool busy);
  // fill writes busy_fraction and the gpu_* fields of `out` as they are at `now` (without
  // changing the model), with `kv_bytes_used` bytes of KV cache in use.
  void fill(SteadyTime now, bool busy_now, double kv_bytes_used, EngineStats& out) const;

 private:
  double power_w(double util) const;
  const CostProfile* profile_;
  double window_s_;
  SteadyTime last_;
  double util_ = 0, temperature_c_, energy_j_ = 0;
};

}  // namespace inferscope::serve
