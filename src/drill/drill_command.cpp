#include "drill/drill_command.h"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <memory>

#include "common/prom_duration.h"
#include "drill/drill_runner.h"

namespace inferscope::drill {
namespace {

struct DrillFlags {
  std::string api = "http://127.0.0.1:9300";
  std::string only;
  bool json = false;
  std::string fire_timeout = "5m";
  std::string resolve_timeout = "5m";
  double load_rate = 8;
};

// A drill stopped with Ctrl-C must not leave a fault injected: the handler only raises a flag that
// the drill polls, and the drill clears its faults before it ends.
std::atomic<bool> g_interrupted{false};
extern "C" void on_stop_signal(int) { g_interrupted.store(true); }

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "inferscope drill: %s\n", message.c_str());
  throw CLI::RuntimeError(2);
}

std::chrono::seconds seconds_flag(const std::string& text, const char* flag) {
  auto d = common::parse_prom_duration(text);
  if (!d) fail(std::string(flag) + ": " + d.error().message);
  return std::chrono::duration_cast<std::chrono::seconds>(*d);
}

void run(const DrillFlags& f) {
  DrillOptions options;
  options.api = f.api;
  while (!options.api.empty() && options.api.back() == '/') options.api.pop_back();
  options.only = f.only;
  options.fire_timeout = seconds_flag(f.fire_timeout, "--fire-timeout");
  options.resolve_timeout = seconds_flag(f.resolve_timeout, "--resolve-timeout");
  if (!(f.load_rate > 0)) fail("--load-rate: must be > 0 requests/s");
  options.load_rate = f.load_rate;
  if (!f.json) {
    options.progress = [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    };
  }
  options.interrupted = [] { return g_interrupted.load(); };
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  auto report = run_drill(options);
  if (!report) fail(report.error().message);
  std::fputs((f.json ? render_json(*report) : render_table(*report)).c_str(), stdout);
  std::fflush(stdout);
  if (!report->all_fired()) throw CLI::RuntimeError(1);
}

}  // namespace

void add_drill_command(CLI::App& app) {
  auto flags = std::make_shared<DrillFlags>();
  CLI::App* cmd = app.add_subcommand(
      "drill",
      "fire drill: cause each alert on a running inferscope up (faults on its `inferscope serve --enable-admin` "
      "targets, its own load, up's drill robot refusing messages when up has `drill: {enabled: true}`), see it "
      "notified and resolved");
  cmd->add_option("--api", flags->api, "inferscope up's API URL (default http://127.0.0.1:9300)");
  cmd->add_option("--only", flags->only, "drill one alert (e.g. InferscopeTargetDown) or one case (e.g. metrics_down)");
  cmd->add_flag("--json", flags->json, "print the result as JSON");
  cmd->add_option("--fire-timeout", flags->fire_timeout, "per case: longest wait for the firing notification (default 5m; the throughput case's baseline must fit in it too)");
  cmd->add_option("--resolve-timeout", flags->resolve_timeout, "per case: longest wait for the resolve (default 5m)");
  cmd->add_option("--load-rate", flags->load_rate, "requests/s sent to each target during the drill (default 8)");
  cmd->callback([flags] { run(*flags); });
}

}  // namespace inferscope::drill
