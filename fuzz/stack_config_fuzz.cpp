// File: stack_config_fuzz.cpp
// Fuzzes `inferscope up`'s config reader (YAML via yaml-cpp → config::StackConfig with file:line:col
// errors), then the checks and renderers that consume an accepted config, and the --target URL and
// Prometheus duration parsers on the same bytes. Any crash, hang or uncaught exception is a bug,
// and so is an error that does not start with the file name or spans two lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/prom_duration.h"
#include "config/stack_config.h"
#include "up/generated_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)inferscope::config::parse_target_url(text);
  (void)inferscope::common::parse_prom_duration(text);
  auto config = inferscope::config::parse_stack_config(text, "fuzz.yaml");
  if (!config) {
    // The contract of up's one-line errors: file first, never a second line.
    const std::string& message = config.error().message;
    if (!message.starts_with("fuzz.yaml:") || message.find('\n') != std::string::npos) __builtin_trap();
    return 0;
  }
  (void)inferscope::config::validate_stack_config(*config);
  const inferscope::up::StackPorts ports{.api = 9300, .alertmanager = 9093, .prometheus = 9090};
  (void)inferscope::up::render_prometheus_yml(*config, ports, {"a.rules.yml"});
  (void)inferscope::up::render_alertmanager_yml(*config, ports);
  return 0;
}
