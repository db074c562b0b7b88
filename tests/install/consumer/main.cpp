// Registers one counter through the installed headers, renders it, and checks the sample is there.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <cstdio>
#include <string>

int main() {
  inferscope::metrics::Registry registry;
  auto& requests = registry.counter({.name = "consumer_requests_total", .help = "Requests handled."});
  requests.with({}).inc();
  std::string text;
  inferscope::metrics::render(registry, inferscope::metrics::ExpositionFormat::kPrometheusText004, text);
  std::fputs(text.c_str(), stdout);
  return text.find("consumer_requests_total 1\n") == std::string::npos ? 1 : 0;
}
