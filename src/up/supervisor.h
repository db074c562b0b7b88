// File: supervisor.h
// Supervisor starts `up`'s children (Alertmanager, Prometheus, the exporters), waits until each is
// ready, and restarts one that dies with exponential back-off on the same port (its data dir is
// the caller's and stays). Example:
//   Supervisor s(events, registry);  Result<std::uint16_t> port = s.start(prometheus_spec);
// Thread-safe. Every fork happens on the supervisor's own thread, which lives until stop_all():
// PR_SET_PDEATHSIG is tied to the forking thread, so children die with up and not before.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "up/child_process.h"

namespace inferscope::up {

// ChildSpec describes one supervised program.
struct ChildSpec {
  std::string name;  // "prometheus", "alertmanager", "node-exporter", "redis-exporter-<target>"
  std::string binary;
  std::vector<std::string> env = {};  // NAME=value on top of up's environment (secrets go here)
  // args returns the arguments for a start listening on `port` (0 = ephemeral).
  std::function<std::vector<std::string>(std::uint16_t port)> args;
  std::uint16_t port = 0;                // first start; restarts reuse the bound port
  std::string ready_path = "/-/ready";   // GET → 200 means ready
  std::chrono::milliseconds ready_timeout{std::chrono::seconds(30)};
  std::filesystem::path log_file;
  // port_from_socket: the program does not log the port it bound ("Listening on"), so the port
  // is read from its listening socket (listening_port()).
  bool port_from_socket = false;
};

// ChildStatus is one child as `up --status` shows it.
struct ChildStatus {
  std::string name;
  int pid = 0;
  std::uint16_t port = 0;
  bool running = false;
  std::chrono::system_clock::time_point up_since{};
  int restarts = 0;
  std::string last_exit;  // "" until it first dies
};

// SupervisorEvents receives one human-readable line per event (restart, give-up).
using SupervisorEvents = std::function<void(const std::string& line)>;

class Supervisor {
 public:
  // Supervisor registers inferscope_up_child_restarts_total{child} and inferscope_up_child_up{child}
  // on `registry` (kept by reference; must outlive the supervisor) and starts its thread.
  Supervisor(SupervisorEvents events, metrics::Registry& registry);
  // ~Supervisor calls stop_all().
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // start runs the child and blocks until it is ready; returns its bound port. Fails with
  // "cannot start <name>: <cause>" (last log lines included) when it exits or is not ready in
  // time; nothing is left running then and it is not supervised.
  Result<std::uint16_t> start(ChildSpec spec);

  // status returns every supervised child in start order.
  std::vector<ChildStatus> status() const;

  // kill_for_test sends `signal` to the named child's process (tests of the restart path).
  bool kill_for_test(const std::string& name, int signal);

  // stop_all stops every child in reverse start order (SIGTERM, then SIGKILL after 10 s) and
  // joins the thread. Idempotent.
  void stop_all();

 private:
  struct Child;
  void run();
  Result<void> launch(Child& child);
  void check_children();

  SupervisorEvents events_;
  metrics::CounterFamily& restarts_family_;
  metrics::GaugeFamily& up_family_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> commands_;  // run on the supervisor thread
  std::vector<std::unique_ptr<Child>> children_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace inferscope::up
