#include "up/up_report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "net/api_error.h"
#include "report/report.h"
#include "up/stack_status.h"

namespace inferscope::up {
namespace {

using Clock = std::chrono::system_clock;

double unix_seconds(Clock::time_point t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

UpReport::UpReport(relay::Relay& relay, std::optional<config::ReportSchedule> schedule, std::vector<std::string> all_channels,
                   std::string state_dir, std::function<std::string()> prometheus_url,
                   net::TlsOptions prometheus_tls, std::function<void(const std::string&)> print, std::function<Clock::time_point()> clock)
    : relay_(relay),
      schedule_(std::move(schedule)),
      all_channels_(std::move(all_channels)),
      state_dir_(std::move(state_dir)),
      prometheus_url_(std::move(prometheus_url)),
      prometheus_tls_(std::move(prometheus_tls)),
      print_(std::move(print)),
      clock_(clock ? std::move(clock) : std::function<Clock::time_point()>([] { return Clock::now(); })) {}

UpReport::~UpReport() { stop(); }

ReportQueued UpReport::queue_report(std::vector<std::string> channels, double since, double until,
                                    const std::string& trigger) {
  const Clock::time_point started = clock_();
  ReportQueued out = build_and_queue(std::move(channels), since, until);
  nlohmann::json last = {{"at", format_utc(started)},
                         {"trigger", trigger},
                         {"result", out.status == 200 ? "queued" : "failed"},
                         {"title", out.title},
                         {"channels", out.channels},
                         {"has_data", out.has_data},
                         {"error", out.error}};
  std::lock_guard lock(mutex_);
  last_ = std::move(last);
  return out;
}

void UpReport::record_delivery(const relay::RelayEvent& event) {
  if (!event.kind.starts_with("report_") || event.channel.empty()) return;
  const std::string result = event.kind == "report_sent" ? "sent" : event.kind == "report_retried" ? "retrying" : "failed";
  nlohmann::json d = {{"channel", event.channel}, {"result", result}, {"text", event.text}, {"at", format_utc(clock_())}};
  std::lock_guard lock(mutex_);
  deliveries_[event.channel] = std::move(d);
}

nlohmann::json UpReport::status_json() {
  nlohmann::json out = {{"schedule", nullptr}, {"last", nullptr}, {"deliveries", nlohmann::json::array()}};
  if (schedule_) {
    char daily_at[8];
    std::snprintf(daily_at, sizeof daily_at, "%02d:%02d", schedule_->hour, schedule_->minute);
    out["schedule"] = {{"daily_at", daily_at},
                       {"timezone", schedule_->timezone},
                       {"channels", schedule_->channels.empty() ? all_channels_ : schedule_->channels},
                       {"next_run", format_utc(config::next_report_time(*schedule_, clock_()))}};
  }
  std::lock_guard lock(mutex_);
  out["last"] = last_;
  for (const auto& [channel, d] : deliveries_) out["deliveries"].push_back(d);
  return out;
}

ReportQueued UpReport::build_and_queue(std::vector<std::string> channels, double since, double until) {
  ReportQueued out;
  if (channels.empty()) channels = schedule_ ? schedule_->channels : all_channels_;
  if (channels.empty()) {
    out.status = 400;
    out.error = "no channel to send the report to: configure notifications.channels";
    out.error_param = "channels";
    return out;
  }
  for (const std::string& name : channels) {
    if (std::find(all_channels_.begin(), all_channels_.end(), name) == all_channels_.end()) {
      out.status = 400;
      out.error = "unknown channel \"" + name + "\" (configured: " + (all_channels_.empty() ? "none" : join(all_channels_)) + ")";
      out.error_param = "channels";
      return out;
    }
  }
  const std::string url = prometheus_url_();
  if (url.empty()) {
    out.status = 503;
    out.error = "Prometheus is not ready yet";
    return out;
  }
  report::ReportRequest request;
  request.prometheus_url = url;
  request.tls = prometheus_tls_;
  request.since = since;
  request.until = until;
  request.state_dir = state_dir_;
  auto built = report::build_report(request);
  if (!built) {
    out.status = 502;
    out.error = "cannot build the report: " + built.error().message;
    return out;
  }
  relay::Document document{report::report_title(*built), report::render_markdown(*built), report::render_html(*built),
                           report::render_chat(*built)};
  if (auto queued = relay_.enqueue_document(document, channels); !queued) {
    out.status = 500;
    out.error = "cannot queue the report: " + queued.error().message;
    return out;
  }
  out.title = document.title;
  out.channels = std::move(channels);
  out.markdown_bytes = document.markdown.size();
  out.html_bytes = document.html.size();
  out.has_data = built->has_data;
  return out;
}

void UpReport::start() {
  if (!schedule_) return;
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void UpReport::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void UpReport::loop() {
  for (;;) {
    const Clock::time_point next = config::next_report_time(*schedule_, clock_());
    {
      std::unique_lock lock(mutex_);
      // Wake at least once a minute so that a wall-clock jump is noticed.
      while (!stopping_ && clock_() < next) {
        cv_.wait_for(lock, std::min<Clock::duration>(next - clock_(), std::chrono::minutes(1)));
      }
      if (stopping_) return;
    }
    const double until = unix_seconds(next);
    const ReportQueued q =
        queue_report(schedule_->channels, until - std::chrono::duration<double>(schedule_->period).count(), until,
                     "schedule");
    if (q.status == 200) {
      print_("inferscope up: report queued for " + join(q.channels) + ": " + q.title + (q.has_data ? "" : " (no data)"));
    } else {
      print_("inferscope up: report failed: " + q.error);
    }
  }
}

void add_report_route(net::Router& router, UpReport& report) {
  // Its own lane: building a report stalls on Prometheus for seconds; one at a time, two waiting.
  router.set_lane("report", {.threads = 1, .max_waiting = 2, .retry_after_s = 5});
  router.add_blocking(
      "POST", "/api/report/send",
      [&report](const net::Request& request) -> net::Response {
        std::vector<std::string> channels;
        double since = 0, until = 0;
        if (!request.body.empty()) {
          const auto body = nlohmann::json::parse(request.body, nullptr, false);
          if (!body.is_object()) return net::Response::error(net::ApiError::bad_request("body must be a JSON object"));
          for (const auto& [key, value] : body.items()) {
            if (key == "channels") {
              if (!value.is_array()) {
                return net::Response::error(net::ApiError::bad_request("'channels' must be a list of channel names", key));
              }
              for (const auto& c : value) {
                if (!c.is_string()) {
                  return net::Response::error(net::ApiError::bad_request("'channels' must be a list of channel names", key));
                }
                channels.push_back(c.get<std::string>());
              }
            } else if (key == "since" || key == "until") {
              if (!value.is_number() || value.get<double>() < 0) {
                return net::Response::error(net::ApiError::bad_request("'" + key + "' must be Unix seconds", key));
              }
              (key == "since" ? since : until) = value.get<double>();
            } else {
              return net::Response::error(
                  net::ApiError::bad_request("unknown field '" + key + "' (allowed: channels, since, until)", key));
            }
          }
        }
        const ReportQueued q = report.queue_report(std::move(channels), since, until);
        if (q.status != 200) {
          net::ApiError e;
          e.status = q.status;
          e.message = q.error;
          e.param = q.error_param;
          e.type = q.status == 400 ? "invalid_request_error" : q.status == 503 ? "service_unavailable" : "server_error";
          if (q.status == 503) e.retry_after = 2;
          return net::Response::error(e);
        }
        return net::Response::json(nlohmann::json({{"status", "queued"},
                                                   {"title", q.title},
                                                   {"channels", q.channels},
                                                   {"markdown_bytes", q.markdown_bytes},
                                                   {"html_bytes", q.html_bytes},
                                                   {"has_data", q.has_data}})
                                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      },
      "report");
}

}  // namespace inferscope::up
