#include "drill/drill_runner.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "drill/drill_cases.h"
#include "drill/notification_route.h"
#include "loadgen/request_runner.h"
#include "stack/blocking_http.h"

namespace inferscope::drill {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

Result<json> get_json(const std::string& url) {
  auto reply = stack::blocking_http_request("GET", url, {}, {}, std::chrono::seconds(5));
  if (!reply) return reply.error();
  if (reply->status != 200) return make_error(fmt::format("cannot GET {}: HTTP {}", url, reply->status));
  auto parsed = json::parse(reply->body, nullptr, false);
  if (parsed.is_discarded()) return make_error("cannot GET " + url + ": the answer is not JSON");
  return parsed;
}

Result<void> post_faults(const std::string& base, std::string_view body) {
  auto reply = stack::blocking_http_request("POST", base + "/admin/faults", body, "application/json");
  if (!reply) return reply.error();
  if (reply->status != 200) {
    return make_error(fmt::format("cannot POST {}/admin/faults: HTTP {} {}", base, reply->status, reply->body));
  }
  return {};
}

// DrillTarget is the serve target faults go to.
struct DrillTarget {
  std::string job;
  std::string base;  // scheme://host:port
};

// find_target picks the first inferscope target that is up and answers GET /admin/faults.
Result<DrillTarget> find_target(const std::string& api) {
  auto status = get_json(api + "/api/status");
  if (!status) return make_error("cannot read the status of inferscope up at --api " + api + ": " + status.error().message);
  std::string seen;
  for (const json& t : status->value("targets", json::array())) {
    const std::string url = t.value("url", "");
    const auto scheme = url.find("://");
    const auto path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    const std::string base = url.substr(0, path);
    seen += (seen.empty() ? "" : ", ") + t.value("job", "?") + " (" + t.value("kind", "?") + ")";
    if (t.value("kind", "") != "inferscope" || t.value("health", "") != "up") continue;
    auto probe = stack::blocking_http_request("GET", base + "/admin/faults", {}, {}, std::chrono::seconds(3));
    if (probe && probe->status == 200) return DrillTarget{t.value("job", ""), base};
  }
  return make_error("cannot find a target to drill in " + api + "/api/status: need an `inferscope serve` target that "
                    "is up and runs with --enable-admin (targets: " + (seen.empty() ? "none" : seen) + ")");
}

// LoadThread keeps an open-loop constant-rate load on the target until destroyed.
class LoadThread {
 public:
  static Result<std::unique_ptr<LoadThread>> start(const std::string& base, double rate) {
    auto target = loadgen::parse_base_url(base);
    if (!target) return target.error();
    return std::unique_ptr<LoadThread>(new LoadThread(*target, rate));
  }
  ~LoadThread() {
    runner_.stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  LoadThread(const loadgen::Target& target, double rate)
      // 60 prompt + 40 output tokens: with 16-token KV blocks a sequence needs two new blocks while
      // decoding, which is what makes the kv_capacity case preempt.
      : workload_({{"drill", 1, loadgen::fixed_length(60), loadgen::fixed_length(40)}}, 0, 1),
        builder_(target, request_options()),
        runner_(config(target, rate), workload_, builder_) {
    thread_ = std::thread([this] { (void)runner_.run(); });
  }
  static loadgen::RequestOptions request_options() {
    loadgen::RequestOptions options;
    options.ignore_eos = true;  // exactly 40 output tokens per request
    return options;
  }
  static loadgen::RunConfig config(const loadgen::Target& target, double rate) {
    loadgen::RunConfig c;
    c.target = target;
    c.plan.stages = {{std::chrono::nanoseconds(0), rate, 0}};
    c.plan.kind = loadgen::ArrivalKind::kConstant;
    c.bounds.max_duration = std::chrono::hours(6);  // ended by stop()
    c.request_timeout = std::chrono::minutes(2);
    c.handle_signals = false;
    return c;
  }
  loadgen::SyntheticWorkload workload_;
  loadgen::RequestBuilder builder_;
  loadgen::RequestRunner runner_;
  std::thread thread_;
};

// Seen identifies one fired alert in the relay's history.
using Seen = std::pair<std::string, double>;  // fingerprint, starts_at

struct Notifications {
  std::string api;
  double since = 0;

  Result<json> list() const {
    auto body = get_json(fmt::format("{}{}?since={:.3f}", api, kNotificationsPath, since));
    if (!body) return body.error();
    return body->value("notifications", json::array());
  }
};

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// seconds_after returns `field` (the relay's receipt time) minus `start` when the relay gave one,
// else the time the drill saw it (polling granularity, 0.5 s).
double seconds_after(const json& entry, const char* field, double start) {
  const json& at = entry.value(field, json());
  return at.is_number() && at.get<double>() > 0 ? std::max(0.0, at.get<double>() - start) : unix_now() - start;
}

// wait_for polls until `done` holds for every pending alert or `timeout` passes.
void wait_for(const Notifications& n, std::chrono::seconds timeout, std::map<std::string, DrillRow*>& pending,
              const std::function<bool()>& interrupted, const std::function<bool(DrillRow&, const json&)>& done) {
  const auto deadline = Clock::now() + timeout;
  while (!pending.empty() && Clock::now() < deadline && !(interrupted && interrupted())) {
    if (auto list = n.list()) {
      for (const json& entry : *list) {
        auto it = pending.find(entry.value("alertname", ""));
        if (it != pending.end() && done(*it->second, entry)) pending.erase(it);
      }
    }
    if (!pending.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

bool DrillReport::all_fired() const {
  for (const DrillRow& row : rows) {
    if (!row.fired) return false;
  }
  return !rows.empty();
}

Result<DrillReport> run_drill(const DrillOptions& o) {
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  const std::vector<DrillCase> cases = select_cases(o.only);
  if (cases.empty()) return make_error("cannot drill --only " + o.only + ": no such alert or fault in the drill catalog");
  if (auto status = get_json(o.api + "/api/status"); !status) {
    return make_error("cannot read the status of inferscope up at --api " + o.api + ": " + status.error().message);
  }
  // Right after `up` is ready its Prometheus may not have scraped the target yet: wait a little.
  auto target = find_target(o.api);
  for (const auto deadline = Clock::now() + std::chrono::seconds(30);
       !target && Clock::now() < deadline && !(o.interrupted && o.interrupted());) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    target = find_target(o.api);
  }
  if (!target) return target.error();
  const Notifications notifications{o.api, std::chrono::duration<double>(
                                               std::chrono::system_clock::now().time_since_epoch()).count() - 3600};
  if (auto probe = notifications.list(); !probe) {
    return make_error("cannot read the relay's notifications from --api " + o.api + ": " + probe.error().message);
  }
  if (auto clear = post_faults(target->base, kClearFaultsJson); !clear) return clear.error();
  auto load = LoadThread::start(target->base, o.load_rate);
  if (!load) return make_error("cannot start the drill's load on " + target->base + ": " + load.error().message);
  say(fmt::format("drill: target {} ({}), load {} requests/s", target->job, target->base, o.load_rate));

  DrillReport report;
  for (const NotDrillable& skip : not_drillable()) {
    if (o.only.empty() || o.only == skip.alert) report.skipped.emplace_back(skip.alert, skip.why);
  }
  for (const DrillCase& c : cases) {
    std::set<Seen> before;
    if (auto list = notifications.list()) {
      for (const json& e : *list) before.insert({e.value("fingerprint", ""), e.value("starts_at", 0.0)});
    }
    const std::size_t first = report.rows.size();
    std::map<std::string, DrillRow*> pending;
    for (std::string_view alert : c.alerts) {
      report.rows.push_back({std::string(alert), target->job, std::string(c.name)});
    }
    for (std::size_t i = first; i < report.rows.size(); ++i) pending[report.rows[i].alert] = &report.rows[i];
    std::map<std::string, Seen> fired_as;
    say(fmt::format("drill: {}: {}", c.name, c.why));
    if (auto set = post_faults(target->base, c.inject_json); !set) {
      (void)post_faults(target->base, kClearFaultsJson);
      return set.error();
    }
    const double injected = unix_now();
    wait_for(notifications, o.fire_timeout, pending, o.interrupted, [&](DrillRow& row, const json& e) {
      const Seen seen{e.value("fingerprint", ""), e.value("starts_at", 0.0)};
      if (before.count(seen) || e.value("labels", json::object()).value("job", "") != row.job) return false;
      row.fired = true;
      row.seconds_to_notification = seconds_after(e, "received_at", injected);
      fired_as[row.alert] = seen;
      say(fmt::format("drill: {} fired after {:.1f} s", row.alert, row.seconds_to_notification));
      return true;
    });
    if (auto clear = post_faults(target->base, kClearFaultsJson); !clear) return clear.error();
    if (o.interrupted && o.interrupted()) {
      return make_error("interrupted; the faults set on " + target->job + " (" + target->base + ") were cleared");
    }
    const double cleared = unix_now();
    for (std::size_t i = first; i < report.rows.size(); ++i) {
      if (report.rows[i].fired) pending[report.rows[i].alert] = &report.rows[i];
    }
    wait_for(notifications, o.resolve_timeout, pending, o.interrupted, [&](DrillRow& row, const json& e) {
      const Seen seen{e.value("fingerprint", ""), e.value("starts_at", 0.0)};
      if (fired_as[row.alert] != seen || e.value("ends_at", json()).is_null()) return false;
      row.resolved = true;
      row.seconds_to_resolve = seconds_after(e, "resolved_received_at", cleared);
      say(fmt::format("drill: {} resolved after {:.1f} s", row.alert, row.seconds_to_resolve));
      return true;
    });
  }
  return report;
}

std::string render_table(const DrillReport& r) {
  std::string out = fmt::format("{:<34} {:<16} {:<6} {:>14} {:<8} {:>14}\n", "alert", "fault", "fired",
                                "to notify (s)", "resolved", "to resolve (s)");
  for (const DrillRow& row : r.rows) {
    out += fmt::format("{:<34} {:<16} {:<6} {:>14} {:<8} {:>14}\n", row.alert, row.fault, row.fired ? "yes" : "NO",
                       row.fired ? fmt::format("{:.1f}", row.seconds_to_notification) : "-",
                       row.resolved ? "yes" : "NO", row.resolved ? fmt::format("{:.1f}", row.seconds_to_resolve) : "-");
  }
  for (const auto& [alert, why] : r.skipped) out += fmt::format("{:<34} not drilled: {}\n", alert, why);
  return out;
}

std::string render_json(const DrillReport& r) {
  json rows = json::array();
  for (const DrillRow& row : r.rows) {
    rows.push_back({{"alert", row.alert},
                    {"job", row.job},
                    {"fault", row.fault},
                    {"fired", row.fired},
                    {"seconds_to_notification", row.fired ? json(row.seconds_to_notification) : json(nullptr)},
                    {"resolved", row.resolved},
                    {"seconds_to_resolve", row.resolved ? json(row.seconds_to_resolve) : json(nullptr)}});
  }
  json skipped = json::array();
  for (const auto& [alert, why] : r.skipped) skipped.push_back({{"alert", alert}, {"why", why}});
  return json{{"rows", rows}, {"skipped", skipped}, {"all_fired", r.all_fired()}}.dump(2) + "\n";
}

}  // namespace inferscope::drill
