#include "serve/engine/gpu_model.h"

#include <algorithm>
#include <cmath>

namespace inferscope::serve {

GpuModel::GpuModel(const CostProfile& profile, double busy_window_s, SteadyTime now)
    : profile_(&profile), window_s_(busy_window_s), last_(now), temperature_c_(profile.idle_temperature_c) {}

double GpuModel::power_w(double util) const {
  return profile_->idle_power_w + (profile_->max_power_w - profile_->idle_power_w) * util;
}

void GpuModel::advance(SteadyTime t, bool busy) {
  if (t <= last_) return;
  double dt = std::chrono::duration<double>(t - last_).count();
  last_ = t;
  double target = busy ? 1.0 : 0.0;
  double before = util_;
  util_ = target + (util_ - target) * std::exp(-dt / window_s_);
  energy_j_ += power_w((before + util_) / 2) * dt;
  double hot = profile_->idle_temperature_c +
               (profile_->max_temperature_c - profile_->idle_temperature_c) * util_;
  temperature_c_ = hot + (temperature_c_ - hot) * std::exp(-dt / kThermalTimeConstantS);
}

void GpuModel::fill(SteadyTime now, bool busy_now, double kv_bytes_used, EngineStats& out) const {
  GpuModel at_now = *this;
  at_now.advance(now, busy_now);
  out.busy_fraction = std::clamp(at_now.util_, 0.0, 1.0);
  out.gpu_memory_total_bytes = profile_->gpu_memory_total_bytes;
  out.gpu_memory_used_bytes = std::min(profile_->weights_bytes + kv_bytes_used, profile_->gpu_memory_total_bytes);
  out.gpu_temperature_c = at_now.temperature_c_;
  out.gpu_power_w = at_now.power_w(out.busy_fraction);
  out.gpu_energy_mj = at_now.energy_j_ * 1000.0;
}

}  // namespace inferscope::serve
