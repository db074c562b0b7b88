// File: stack_test_support.h
// Helpers for the stack integration tests: a temp state dir removed at the end, a Prometheus
// query through promapi, and a poll-with-deadline for conditions on external processes.
// Example: TempDir dir; auto v = query_scalar(prom_url, "up{job=\"sim\"}");
// Test-only; not thread-safe beyond what each helper says.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "promapi/prometheus_client.h"
#include "support/peers.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace inferscope::up::testing {

using inferscope::testing::TempDir;

// wait_until polls `condition` every 100 ms (a Prometheus query per poll) until it holds or
// `timeout` passes.
inline bool wait_until(const std::function<bool()>& condition, std::chrono::seconds timeout) {
  return inferscope::testing::wait_until(condition, timeout, std::chrono::milliseconds(100));
}

// query_value returns the first sample value of an instant query, or nullopt when the result is
// empty or the query fails.
inline std::optional<double> query_value(const std::string& prometheus_url, const std::string& promql) {
  auto client = promapi::PrometheusClient::create(prometheus_url, {.timeout = std::chrono::seconds(3)});
  if (!client) return std::nullopt;
  auto result = client->query(promql);
  if (!result || result->series.empty() || result->series[0].points.empty()) return std::nullopt;
  return result->series[0].points[0].value;
}

// process_alive reports whether `pid` exists and is not a zombie.
inline bool process_alive(int pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return false;
  char state = '?';
  int ignored = 0;
  char name[256];
  const int n = std::fscanf(f, "%d %255s %c", &ignored, name, &state);
  std::fclose(f);
  return n == 3 && state != 'Z';
}

// stack_binaries_installed fails a test (naming the package) when a program `up` runs is missing.
inline ::testing::AssertionResult stack_binaries_installed() {
  using namespace inferscope::testing;
  return peers_installed({kPrometheus, kAlertmanager, kPromtool});
}

}  // namespace inferscope::up::testing
