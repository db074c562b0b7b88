// File: up_report.h
// The daily report of `inferscope up` (`report: {daily_at, channels, timezone}` in its config):
// at each daily_at, build the report of the last 24 h against up's Prometheus (or --prometheus)
// and queue it durably to the relay's channels; POST /api/report/send does the same at once.
// Example:
//   UpReport report(relay, config.report, channel_names, state_dir, [&] { return ctx.prometheus_url(); }, print);
//   add_report_route(router, report);  ...  report.start();  ...  report.stop();
// Thread-safe: queue_report may run on several threads; start/stop from up's main thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/report_schedule.h"
#include "net/blocking_client.h"
#include "net/router.h"
#include "relay/relay.h"

namespace inferscope::up {

// ReportQueued answers one queue_report: status 200 with the report's title and sizes, or an
// HTTP status (400 unknown channel, 503 Prometheus not ready, 502 the report could not be built,
// 500 the outbox could not be written) with a one-line error.
struct ReportQueued {
  int status = 200;
  std::string error;
  std::string error_param;
  std::string title;
  std::vector<std::string> channels;
  std::size_t markdown_bytes = 0, html_bytes = 0;
  bool has_data = false;
};

class UpReport {
 public:
  // schedule: the config's report section (none: only the route works, for every channel).
  // prometheus_tls: how an https:// Prometheus is reached (up's --ca-file, --insecure).
  // clock: the wall clock the schedule follows (tests shift it; unset = system_clock::now).
  UpReport(relay::Relay& relay, std::optional<config::ReportSchedule> schedule, std::vector<std::string> all_channels,
           std::string state_dir, std::function<std::string()> prometheus_url, net::TlsOptions prometheus_tls,
           std::function<void(const std::string&)> print,
           std::function<std::chrono::system_clock::time_point()> clock = {});
  ~UpReport();
  UpReport(const UpReport&) = delete;
  UpReport& operator=(const UpReport&) = delete;

  // queue_report builds the report of [since, until) (Unix seconds; 0 = until - 24 h / now) and
  // enqueues it for `channels` (empty = the schedule's, else every channel). Blocks while the
  // report is built (Prometheus queries and the doctor's worst hour: seconds).
  // `trigger` ("api" or "schedule") is what status_json's "last" says started it.
  ReportQueued queue_report(std::vector<std::string> channels, double since, double until,
                            const std::string& trigger = "api");

  // start runs the schedule's thread (nothing without a schedule); stop wakes and joins it.
  void start();
  void stop();

  // record_delivery keeps the relay's last report_sent / report_retried / report_failed event per
  // channel for status_json (up forwards the relay's report_* events here).
  void record_delivery(const relay::RelayEvent& event);

  // status_json is the `report` part of GET /api/status and `up --status`:
  // {"schedule": null | {"daily_at","timezone","channels","next_run"},
  //  "last": null | {"at","trigger","result":"queued"|"failed","title","channels","has_data","error"},
  //  "deliveries": [{"channel","result":"sent"|"retrying"|"failed","text","at"}]} (times RFC 3339 UTC).
  nlohmann::json status_json();

 private:
  void loop();
  ReportQueued build_and_queue(std::vector<std::string> channels, double since, double until);

  relay::Relay& relay_;
  std::optional<config::ReportSchedule> schedule_;
  std::vector<std::string> all_channels_;
  std::string state_dir_;
  std::function<std::string()> prometheus_url_;
  net::TlsOptions prometheus_tls_;
  std::function<void(const std::string&)> print_;
  std::function<std::chrono::system_clock::time_point()> clock_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  nlohmann::json last_ = nullptr;                   // guarded by mutex_
  std::map<std::string, nlohmann::json> deliveries_;  // by channel; guarded by mutex_
  std::thread thread_;
};

// add_report_route registers POST /api/report/send on up's router: body empty or JSON
// {"channels": ["name", ...], "since": unix_s, "until": unix_s} (all optional); answers 200
// {"status":"queued","title","channels","markdown_bytes","html_bytes","has_data"} once the report
// is stored in the outbox (delivery follows, with retries), else OpenAI error JSON (400 bad body or
// unknown channel, 503 Prometheus not ready or the lane full, 502 report not built, 500 outbox).
// Runs on its own blocking lane "report" (one build at a time), never on an io thread. `report`
// must outlive the server.
void add_report_route(net::Router& router, UpReport& report);

}  // namespace inferscope::up
