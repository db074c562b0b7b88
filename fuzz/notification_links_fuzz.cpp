// libFuzzer target for fix_local_links / replace_port_zero_origin (up's webhook route re-bases the
// links of Alertmanager's body, outside input): any input gives a string, never a crash; a changed
// body is a JSON object; fixing is idempotent; a re-based URL starts with the base it was given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "up/notification_links.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kPrometheus = "http://127.0.0.1:9090";
  constexpr std::string_view kAlertmanager = "http://127.0.0.1:9093";
  const std::string fixed = inferscope::up::fix_local_links(input, kPrometheus, kAlertmanager);
  if (fixed != input) {
    const auto doc = nlohmann::json::parse(fixed, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) std::abort();
    if (inferscope::up::fix_local_links(fixed, kPrometheus, kAlertmanager) != fixed) std::abort();
  }
  const std::string url = inferscope::up::replace_port_zero_origin(input, kPrometheus);
  if (url != input && !url.starts_with(kPrometheus)) std::abort();
  return 0;
}
