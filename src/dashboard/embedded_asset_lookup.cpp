#include "dashboard/embedded_assets.h"

namespace inferscope::dashboard {

const EmbeddedAsset* find_asset(std::string_view name) noexcept {
  for (const auto& asset : embedded_assets()) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

}  // namespace inferscope::dashboard
