// File: trace_settings.cpp
#include "trace/trace_settings.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "net/query_parameter.h"

namespace inferscope::trace {

Result<void> validate_trace_settings(const TraceSettings& s) {
  if (!(s.policy.sample_ratio >= 0 && s.policy.sample_ratio <= 1)) return make_error("--trace-sample must be in 0..1");
  if (s.policy.slow_seconds && !(*s.policy.slow_seconds > 0)) return make_error("--trace-slow must be positive");
  return {};
}

namespace {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

Result<std::vector<Attribute>> resource_attributes(std::string_view default_service_name, const char* otel_service_name,
                                                   const char* otel_resource_attributes) {
  std::vector<Attribute> out;
  std::string_view pairs = otel_resource_attributes != nullptr ? otel_resource_attributes : "";
  for (std::size_t position = 1; !trimmed(pairs).empty(); ++position) {
    const std::size_t comma = pairs.find(',');
    const std::string_view entry = pairs.substr(0, comma);
    pairs = comma == std::string_view::npos ? std::string_view() : pairs.substr(comma + 1);
    const std::size_t eq = entry.find('=');
    const std::string_view key = trimmed(entry.substr(0, eq));
    auto value = eq == std::string_view::npos ? std::nullopt
                                              : net::percent_decode(trimmed(entry.substr(eq + 1)), net::PlusIs::kPlus);
    if (key.empty() || !value) {
      return make_error(fmt::format("cannot read OTEL_RESOURCE_ATTRIBUTES: entry {} is not key=value with a "
                                    "percent-encoded value",
                                    position));
    }
    auto same_key = [key](const Attribute& a) { return a.key == key; };
    std::erase_if(out, same_key);  // the last of a repeated key wins
    out.push_back({std::string(key), std::move(*value)});
  }
  const std::string_view explicit_name = otel_service_name != nullptr ? trimmed(otel_service_name) : "";
  auto service = std::find_if(out.begin(), out.end(), [](const Attribute& a) { return a.key == "service.name"; });
  if (service == out.end()) {
    out.insert(out.begin(), {"service.name", std::string(explicit_name.empty() ? default_service_name : explicit_name)});
  } else if (!explicit_name.empty()) {
    service->value = std::string(explicit_name);
  }
  return out;
}

Result<std::unique_ptr<SpanExporter>> start_trace_exporter(const TraceSettings& settings, std::string_view service_name,
                                                          metrics::Registry* registry) {
  if (!settings.enabled()) return std::unique_ptr<SpanExporter>();
  auto resource = resource_attributes(service_name, std::getenv("OTEL_SERVICE_NAME"),
                                      std::getenv("OTEL_RESOURCE_ATTRIBUTES"));
  if (!resource) return resource.error();
  SpanExporterOptions options;
  options.endpoint = settings.otlp_endpoint;
  options.resource_attributes = std::move(*resource);
  return SpanExporter::start(std::move(options), registry);
}

}  // namespace inferscope::trace
