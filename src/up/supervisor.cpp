// File: supervisor.cpp
#include "up/supervisor.h"

#include <signal.h>

#include <atomic>

#include "net/blocking_client.h"

namespace inferscope::up {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kFirstBackoff = seconds(1);
constexpr milliseconds kMaxBackoff = seconds(30);
constexpr auto kStableRun = seconds(60);  // a child up this long restarts with the first back-off again
constexpr milliseconds kStopGrace = seconds(10);

// runs_binary tells whether `pid` has exec'd `binary`: between fork and exec the child still holds
// up's own listening sockets, which must not pass for the child's port.
bool runs_binary(pid_t pid, const std::string& binary) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  if (ec) return false;
  const auto wanted = std::filesystem::canonical(binary, ec);
  return !ec && exe == wanted;
}

std::string seconds_text(milliseconds d) {
  return std::to_string(d.count() / 1000) + (d.count() % 1000 ? "." + std::to_string(d.count() % 1000 / 100) : "") + "s";
}

}  // namespace

// SupervisorOutputWatch is shared with the child's reader thread: the port from its "Listening on" line
// and its last lines, for an error message when it fails to start. Outside the anonymous namespace
// because Supervisor::Child holds one.
struct SupervisorOutputWatch {
  std::atomic<std::uint16_t> port{0};
  std::mutex mutex;
  std::deque<std::string> tail;

  void on_line(std::string_view line) {
    if (const std::uint16_t p = parse_listening_port(line); p != 0) port.store(p);
    std::lock_guard lock(mutex);
    tail.emplace_back(line);
    if (tail.size() > 5) tail.pop_front();
  }
  std::string last_lines() {
    std::lock_guard lock(mutex);
    std::string out;
    for (const std::string& l : tail) out += (out.empty() ? "" : " | ") + l;
    return out.empty() ? "(no output)" : out;
  }
};

struct Supervisor::Child {
  ChildSpec spec;
  std::unique_ptr<ChildProcess> process;
  std::shared_ptr<SupervisorOutputWatch> watch;
  ChildStatus status;  // guarded by Supervisor::mutex_
  Clock::time_point started{};
  Clock::time_point restart_at{};
  bool restart_pending = false;
  milliseconds backoff = kFirstBackoff;
  metrics::Counter restarts;
  metrics::Gauge up;
};

Supervisor::Supervisor(SupervisorEvents events, metrics::Registry& registry)
    : events_(std::move(events)),
      restarts_family_(registry.counter({.name = "inferscope_up_child_restarts_total",
                                         .help = "Restarts of a child process of inferscope up after it died.",
                                         .label_names = {"child"}})),
      up_family_(registry.gauge({.name = "inferscope_up_child_up",
                                 .help = "1 while the child process of inferscope up runs and was ready.",
                                 .label_names = {"child"}})) {
  thread_ = std::thread([this] { run(); });
}

Supervisor::~Supervisor() { stop_all(); }

Result<void> Supervisor::launch(Child& child) {
  const ChildSpec& spec = child.spec;
  auto watch = std::make_shared<SupervisorOutputWatch>();
  auto process = ChildProcess::spawn(
      {.binary = spec.binary, .args = spec.args(spec.port), .log_file = spec.log_file, .env = spec.env},
      [watch](std::string_view line) { watch->on_line(line); });
  if (!process) return make_error("cannot start " + spec.name + ": " + process.error().message);
  const auto deadline = Clock::now() + spec.ready_timeout;
  for (;;) {
    if (auto exit = (*process)->try_wait()) {
      (*process)->wait_output_closed();
      return make_error("cannot start " + spec.name + ": it ended (" + exit->describe() +
                        ") before it was ready; log " + spec.log_file.string() + ": " + watch->last_lines());
    }
    if (spec.port_from_socket && watch->port.load() == 0 && runs_binary((*process)->pid(), spec.binary)) {
      watch->port.store(listening_port((*process)->pid()));
    }
    const std::uint16_t port = watch->port.load();
    if (port != 0) {
      auto reply = net::blocking_http_request("GET", "http://127.0.0.1:" + std::to_string(port) + spec.ready_path, {}, {},
                                         milliseconds(1000));
      if (reply && reply->status == 200) break;
    }
    if (Clock::now() >= deadline) {
      (*process)->terminate(seconds(2));
      return make_error("cannot start " + spec.name + ": not ready after " + seconds_text(spec.ready_timeout) +
                        "; log " + spec.log_file.string() + ": " + watch->last_lines());
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  child.spec.port = watch->port.load();  // restarts keep the URL everyone was given
  child.watch = watch;
  child.process = std::move(*process);
  child.started = Clock::now();
  std::lock_guard lock(mutex_);
  child.status.pid = child.process->pid();
  child.status.port = child.spec.port;
  child.status.running = true;
  child.status.up_since = std::chrono::system_clock::now();
  child.up.set(1);
  return {};
}

Result<std::uint16_t> Supervisor::start(ChildSpec spec) {
  auto done = std::make_shared<std::promise<Result<std::uint16_t>>>();
  auto future = done->get_future();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return make_error("cannot start " + spec.name + ": the supervisor is stopping");
    commands_.push_back([this, spec = std::move(spec), done]() mutable {
      auto child = std::make_unique<Child>();
      child->status.name = spec.name;
      child->restarts = restarts_family_.with({spec.name});
      child->up = up_family_.with({spec.name});
      child->spec = std::move(spec);
      if (auto r = launch(*child); !r) {
        done->set_value(r.error());
        return;
      }
      const std::uint16_t port = child->spec.port;
      {
        std::lock_guard lock(mutex_);
        children_.push_back(std::move(child));
      }
      done->set_value(port);
    });
  }
  wake_.notify_all();
  return future.get();
}

void Supervisor::check_children() {
  for (auto& owned : children_) {
    Child& child = *owned;
    if (!child.restart_pending && child.process) {
      const auto exit = child.process->try_wait();
      if (!exit) continue;
      child.process->wait_output_closed();
      child.process.reset();
      const auto ran = std::chrono::duration_cast<milliseconds>(Clock::now() - child.started);
      if (ran >= kStableRun) child.backoff = kFirstBackoff;
      {
        std::lock_guard lock(mutex_);
        child.status.running = false;
        child.status.pid = 0;
        child.status.last_exit = exit->describe();
      }
      child.up.set(0);
      child.restart_pending = true;
      child.restart_at = Clock::now() + child.backoff;
      events_("inferscope up: " + child.spec.name + " exited (" + exit->describe() + ") after " + seconds_text(ran) +
              "; restarting in " + seconds_text(child.backoff));
    }
    if (child.restart_pending && Clock::now() >= child.restart_at) {
      child.backoff = std::min(child.backoff * 2, kMaxBackoff);
      if (auto r = launch(child); !r) {
        child.restart_at = Clock::now() + child.backoff;
        events_("inferscope up: " + r.error().message + "; retrying in " + seconds_text(child.backoff));
        continue;
      }
      child.restart_pending = false;
      child.restarts.inc();
      int restarts = 0;
      {
        std::lock_guard lock(mutex_);
        restarts = ++child.status.restarts;
      }
      events_("inferscope up: " + child.spec.name + " restarted pid=" + std::to_string(child.status.pid) +
              " port=" + std::to_string(child.spec.port) + " restarts=" + std::to_string(restarts));
    }
  }
}

void Supervisor::run() {
  for (;;) {
    std::function<void()> command;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, milliseconds(100), [this] { return stopping_ || !commands_.empty(); });
      if (!commands_.empty()) {
        command = std::move(commands_.front());
        commands_.pop_front();
      } else if (stopping_) {
        break;
      }
    }
    if (command) {
      command();
      continue;
    }
    check_children();
  }
  // Reverse start order: Prometheus stops before the Alertmanager it sends to.
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
    Child& child = **it;
    if (child.process) {
      child.process->terminate(kStopGrace);
      child.process->wait_output_closed();
      child.process.reset();
    }
    std::lock_guard lock(mutex_);
    child.status.running = false;
    child.status.pid = 0;
    child.up.set(0);
  }
}

std::vector<ChildStatus> Supervisor::status() const {
  std::lock_guard lock(mutex_);
  std::vector<ChildStatus> out;
  for (const auto& child : children_) out.push_back(child->status);
  return out;
}

bool Supervisor::kill_for_test(const std::string& name, int signal) {
  std::lock_guard lock(mutex_);
  for (const auto& child : children_) {
    if (child->status.name == name && child->status.pid > 0) return ::kill(child->status.pid, signal) == 0;
  }
  return false;
}

void Supervisor::stop_all() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace inferscope::up
