#include "drill/drill_runner.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "alerts/rules_generator.h"
#include "common/prom_duration.h"
#include "drill/drill_cases.h"
#include "drill/drill_robot.h"
#include "drill/notification_route.h"
#include "loadgen/request_runner.h"
#include "net/blocking_client.h"

namespace inferscope::drill {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

Result<json> get_json(const std::string& url) {
  auto reply = net::blocking_http_request("GET", url, {}, {}, std::chrono::seconds(5));
  if (!reply) return reply.error();
  if (reply->status != 200) return make_error(fmt::format("cannot GET {}: HTTP {}", url, reply->status));
  auto parsed = json::parse(reply->body, nullptr, false);
  if (parsed.is_discarded()) return make_error("cannot GET " + url + ": the answer is not JSON");
  return parsed;
}

Result<void> post_json(const std::string& url, std::string_view body) {
  auto reply = net::blocking_http_request("POST", url, body, "application/json");
  if (!reply) return reply.error();
  if (reply->status != 200) return make_error(fmt::format("cannot POST {}: HTTP {} {}", url, reply->status, reply->body));
  return {};
}

Result<void> post_faults(const std::string& base, std::string_view body) { return post_json(base + "/admin/faults", body); }

// DrillTarget is a serve target faults go to.
struct DrillTarget {
  std::string job;
  std::string base;  // scheme://host:port
};

// FoundTargets are the drillable targets and whether every inferscope target was scraped up.
struct FoundTargets {
  std::vector<DrillTarget> drillable;  // kind inferscope, up, GET /admin/faults answers 200
  bool all_up = false;                 // every target of kind inferscope is up (scraped at least once)
};

// find_targets lists the inferscope targets that are up and answer GET /admin/faults.
Result<FoundTargets> find_targets(const std::string& api, std::string& seen) {
  auto status = get_json(api + "/api/status");
  if (!status) return make_error("cannot read the status of inferscope up at --api " + api + ": " + status.error().message);
  FoundTargets out;
  out.all_up = true;
  seen.clear();
  for (const json& t : status->value("targets", json::array())) {
    const std::string url = t.value("url", "");
    const auto scheme = url.find("://");
    const auto path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    const std::string base = url.substr(0, path);
    seen += (seen.empty() ? "" : ", ") + t.value("job", "?") + " (" + t.value("kind", "?") + ")";
    if (t.value("kind", "") != "inferscope") continue;
    if (t.value("health", "") != "up") {
      out.all_up = false;
      continue;
    }
    auto probe = net::blocking_http_request("GET", base + "/admin/faults", {}, {}, std::chrono::seconds(3));
    if (probe && probe->status == 200) out.drillable.push_back({t.value("job", ""), base});
  }
  return out;
}

// DrillWorkload is the drill's request mix: 60 prompt tokens and exactly kFullOutputTokens output
// tokens (ignore_eos), or kShortOutputTokens while `short_outputs` is set. With 16-token KV blocks
// a full sequence needs two new blocks while decoding, which is what makes kv_capacity preempt.
class DrillWorkload final : public loadgen::Workload {
 public:
  DrillWorkload()
      : base_({{"drill", 1, loadgen::fixed_length(60), loadgen::fixed_length(kFullOutputTokens)}}, 0, 1) {}
  loadgen::RequestSpec next(std::uint64_t index) const override {
    loadgen::RequestSpec spec = base_.next(index);
    if (short_outputs.load()) spec.max_tokens = kShortOutputTokens;
    return spec;
  }
  const std::vector<std::string>& class_names() const override { return base_.class_names(); }
  std::atomic<bool> short_outputs{false};

 private:
  loadgen::SyntheticWorkload base_;
};

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
  void set_short_outputs(bool on) { workload_.short_outputs.store(on); }
  Clock::time_point started() const { return started_; }

 private:
  LoadThread(const loadgen::Target& target, double rate)
      : builder_(target, request_options()), runner_(config(target, rate), workload_, builder_) {
    thread_ = std::thread([this] { (void)runner_.run(); });
  }
  static loadgen::RequestOptions request_options() {
    loadgen::RequestOptions options;
    options.ignore_eos = true;  // exactly max_tokens output tokens per request
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
  DrillWorkload workload_;
  loadgen::RequestBuilder builder_;
  loadgen::RequestRunner runner_;
  Clock::time_point started_ = Clock::now();
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

bool stopped(const DrillOptions& o) { return o.interrupted && o.interrupted(); }

// wait_for polls until `done` holds for every pending alert or `timeout` passes.
void wait_for(const Notifications& n, std::chrono::seconds timeout, std::map<std::string, DrillRow*>& pending,
              const DrillOptions& o, const std::function<bool(DrillRow&, const json&)>& done) {
  const auto deadline = Clock::now() + timeout;
  while (!pending.empty() && Clock::now() < deadline && !stopped(o)) {
    if (auto list = n.list()) {
      for (const json& entry : *list) {
        auto it = pending.find(entry.value("alertname", ""));
        if (it != pending.end() && done(*it->second, entry)) pending.erase(it);
      }
    }
    if (!pending.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// ThroughputTiming is what the throughput case needs of the generated rules of one job.
struct ThroughputTiming {
  std::chrono::milliseconds offset{0};  // the alert's "offset <d>" (baseline age)
  std::chrono::milliseconds window{0};  // the rate window of inferscope:generation_tokens:rate
};

// throughput_timing reads the job's rule group from Prometheus' GET /api/v1/rules.
Result<ThroughputTiming> throughput_timing(const std::string& prometheus, const std::string& job) {
  if (prometheus.empty()) return make_error("up reports no Prometheus URL");
  auto rules = get_json(prometheus + "/api/v1/rules");
  if (!rules) return rules.error();
  ThroughputTiming t;
  const std::regex offset_re(R"(offset ([0-9][0-9a-z.]*))"), window_re(R"(\[([0-9][0-9a-z.]*)\])");
  for (const json& group : rules->value("data", json::object()).value("groups", json::array())) {
    if (group.value("name", "") != "inferscope-target-" + job) continue;
    for (const json& rule : group.value("rules", json::array())) {
      const std::string name = rule.value("name", ""), query = rule.value("query", "");
      std::smatch m;
      if (name == alerts::kThroughputHalved && std::regex_search(query, m, offset_re)) {
        if (auto d = common::parse_prom_duration(m[1].str())) t.offset = *d;
      } else if (name == "inferscope:generation_tokens:rate" && std::regex_search(query, m, window_re)) {
        if (auto d = common::parse_prom_duration(m[1].str())) t.window = *d;
      }
    }
  }
  if (t.offset.count() == 0) return make_error("job " + job + " has no " + alerts::kThroughputHalved + " rule");
  if (t.window.count() == 0) return make_error("job " + job + " records no inferscope:generation_tokens:rate");
  return t;
}

// Shared is what every lane reads: options, up's endpoints, whether up's drill robot is on.
struct Shared {
  const DrillOptions& o;
  Notifications notifications;
  std::string prometheus;
  bool robot = false;
  std::mutex say_mu;

  void say(const std::string& line) {
    std::lock_guard lock(say_mu);
    if (o.progress) o.progress(line);
  }
};

// Lane runs its cases one after the other on one target, under its own load.
struct Lane {
  DrillTarget target;
  std::vector<DrillCase> cases;
  std::vector<DrillRow> rows;
  std::vector<std::pair<std::string, std::string>> skipped;
  std::optional<Error> error;
  bool refused = false;  // set the robot refusing at least once (cleared at the end)
};

std::string robot_url(const Shared& s) { return s.o.api + kDrillApiPath; }

// cause starts the case's condition; false plus a reason in `skip` when it cannot run here.
Result<void> cause(Shared& s, Lane& lane, LoadThread& load, const DrillCase& c, std::string& skip) {
  switch (c.how) {
    case DrillHow::kFault:
      return post_faults(lane.target.base, c.inject_json);
    case DrillHow::kLoad: {
      auto timing = throughput_timing(s.prometheus, lane.target.job);
      if (!timing) {
        skip = "cannot read its baseline from the rules: " + timing.error().message;
        return {};
      }
      // The baseline `offset` ago must be steady load (rate window) with full outputs, plus 2 s.
      const auto hold = timing->offset + timing->window + std::chrono::seconds(2);
      if (hold > s.o.fire_timeout) {
        skip = fmt::format("needs {} of steady load first (alerts.throughput_baseline_offset {} + rate window), "
                           "more than --fire-timeout; set a short offset in up's config for drills",
                           common::format_prom_duration(hold), common::format_prom_duration(timing->offset));
        return {};
      }
      const auto until = load.started() + hold;
      if (Clock::now() < until) {
        s.say(fmt::format("drill: {}: holding steady load until the {} baseline is in place ({:.0f} s)", c.name,
                          common::format_prom_duration(timing->offset),
                          std::chrono::duration<double>(until - Clock::now()).count()));
      }
      while (Clock::now() < until && !stopped(s.o)) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      load.set_short_outputs(true);
      return {};
    }
    case DrillHow::kRefusingChannel: {
      if (!s.robot) {
        skip = "up runs without `drill: {enabled: true}`, so it has no drill robot channel to refuse messages";
        return {};
      }
      lane.refused = true;
      if (auto r = post_json(robot_url(s), R"({"refuse": true})"); !r) return r;
      return post_faults(lane.target.base, c.inject_json);
    }
  }
  return {};
}

// clear ends the case's condition.
Result<void> clear(Shared& s, Lane& lane, LoadThread& load, const DrillCase& c) {
  load.set_short_outputs(false);
  if (c.how == DrillHow::kRefusingChannel) {
    if (auto r = post_json(robot_url(s), R"({"refuse": false})"); !r) return r;
  }
  return post_faults(lane.target.base, kClearFaultsJson);
}

void run_lane(Shared& s, Lane& lane) {
  const DrillOptions& o = s.o;
  auto load = LoadThread::start(lane.target.base, o.load_rate);
  if (!load) {
    lane.error = make_error("cannot start the drill's load on " + lane.target.base + ": " + load.error().message);
    return;
  }
  if (auto r = post_faults(lane.target.base, kClearFaultsJson); !r) {
    lane.error = r.error();
    return;
  }
  s.say(fmt::format("drill: target {} ({}), load {} requests/s", lane.target.job, lane.target.base, o.load_rate));
  for (const DrillCase& c : lane.cases) {
    if (stopped(o)) return;
    std::set<Seen> before;
    if (auto list = s.notifications.list()) {
      for (const json& e : *list) before.insert({e.value("fingerprint", ""), e.value("starts_at", 0.0)});
    }
    s.say(fmt::format("drill: {}: {}", c.name, c.why));
    std::string skip;
    if (auto caused = cause(s, lane, **load, c, skip); !caused) {
      (void)clear(s, lane, **load, c);
      lane.error = caused.error();
      return;
    }
    if (!skip.empty()) {
      for (const std::string& alert : c.alerts) lane.skipped.emplace_back(alert, skip);
      s.say(fmt::format("drill: {}: skipped: {}", c.name, skip));
      continue;
    }
    if (stopped(o)) return;
    const double injected = unix_now();
    const std::size_t first = lane.rows.size();
    for (const std::string& alert : c.alerts) {
      lane.rows.push_back({alert, lane.target.job, c.name, std::string(how_name(c.how))});
    }
    std::map<std::string, DrillRow*> pending;
    for (std::size_t i = first; i < lane.rows.size(); ++i) pending[lane.rows[i].alert] = &lane.rows[i];
    std::map<std::string, Seen> fired_as;
    wait_for(s.notifications, o.fire_timeout, pending, o, [&](DrillRow& row, const json& e) {
      const Seen seen{e.value("fingerprint", ""), e.value("starts_at", 0.0)};
      const json labels = e.value("labels", json::object());
      // Relay failures are per channel: that alert carries the channel, not the target.
      const bool ours = row.alert == alerts::kNotificationsFailing ? labels.value("channel", "") == kDrillChannel
                                                                  : labels.value("job", "") == row.job;
      if (before.count(seen) || !ours) return false;
      row.fired = true;
      row.seconds_to_notification = seconds_after(e, "received_at", injected);
      fired_as[row.alert] = seen;
      s.say(fmt::format("drill: {} fired after {:.1f} s", row.alert, row.seconds_to_notification));
      return true;
    });
    if (auto cleared = clear(s, lane, **load, c); !cleared) {
      lane.error = cleared.error();
      return;
    }
    if (stopped(o)) return;
    const double cleared = unix_now();
    for (std::size_t i = first; i < lane.rows.size(); ++i) {
      if (lane.rows[i].fired) pending[lane.rows[i].alert] = &lane.rows[i];
    }
    wait_for(s.notifications, o.resolve_timeout, pending, o, [&](DrillRow& row, const json& e) {
      // The same alert (fingerprint) resolved. Its startsAt is normally the one it fired with; a
      // later one counts too (Alertmanager may have restarted the alert after a flap), never an
      // alert that was in the history before the case.
      const Seen seen{e.value("fingerprint", ""), e.value("starts_at", 0.0)};
      const Seen& fired = fired_as[row.alert];
      if (seen.first != fired.first || seen.second < fired.second || before.count(seen) ||
          e.value("ends_at", json()).is_null()) {
        return false;
      }
      row.resolved = true;
      row.seconds_to_resolve = seconds_after(e, "resolved_received_at", cleared);
      s.say(fmt::format("drill: {} resolved after {:.1f} s", row.alert, row.seconds_to_resolve));
      return true;
    });
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
  const std::vector<DrillCase> cases = select_cases(o.only);
  if (cases.empty()) return make_error("cannot drill --only " + o.only + ": no such alert or fault in the drill catalog");
  auto status = get_json(o.api + "/api/status");
  if (!status) {
    return make_error("cannot read the status of inferscope up at --api " + o.api + ": " + status.error().message);
  }
  // Right after `up` is ready its Prometheus may not have scraped every target yet: wait a little
  // until every inferscope target is up (and at least one is drillable).
  std::string seen;
  auto found = find_targets(o.api, seen);
  for (const auto deadline = Clock::now() + std::chrono::seconds(30);
       (!found || found->drillable.empty() || !found->all_up) && Clock::now() < deadline && !stopped(o);) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    found = find_targets(o.api, seen);
  }
  if (!found) return found.error();
  if (found->drillable.empty()) {
    return make_error("cannot find a target to drill in " + o.api + "/api/status: need an `inferscope serve` target "
                      "that is up and runs with --enable-admin (targets: " + (seen.empty() ? "none" : seen) + ")");
  }
  Shared shared{o, {o.api, unix_now() - 3600}, status->value("prometheus", ""), false, {}};
  if (auto probe = shared.notifications.list(); !probe) {
    return make_error("cannot read the relay's notifications from --api " + o.api + ": " + probe.error().message);
  }
  auto robot = net::blocking_http_request("GET", o.api + kDrillApiPath, {}, {}, std::chrono::seconds(5));
  shared.robot = robot && robot->status == 200;

  // One lane per target; cases dealt round-robin (one target: every case in catalog order).
  std::vector<Lane> lanes;
  for (const DrillTarget& t : found->drillable) {
    if (lanes.size() == cases.size()) break;
    lanes.push_back({t, {}, {}, {}, {}, false});
  }
  for (std::size_t i = 0; i < cases.size(); ++i) lanes[i % lanes.size()].cases.push_back(cases[i]);
  std::vector<std::thread> threads;
  for (Lane& lane : lanes) threads.emplace_back([&shared, &lane] { run_lane(shared, lane); });
  for (std::thread& t : threads) t.join();

  // Whatever happened, no fault and no refusal is left behind.
  std::string where;
  bool refused = false;
  for (Lane& lane : lanes) {
    (void)post_faults(lane.target.base, kClearFaultsJson);
    refused = refused || lane.refused;
    where += fmt::format("{}{} ({})", where.empty() ? "" : ", ", lane.target.job, lane.target.base);
  }
  if (refused) (void)post_json(o.api + kDrillApiPath, R"({"refuse": false})");
  if (stopped(o)) return make_error("interrupted; the faults set on " + where + " were cleared");
  DrillReport report;
  for (Lane& lane : lanes) {
    if (lane.error) return *lane.error;
  }
  // A whole drill says which generated alerts it cannot exercise, rather than leaving them out.
  if (o.only.empty()) {
    for (const char* alert : alerts::kEngineFeatureAlerts) {
      report.skipped.emplace_back(alert, "no drill case yet: it needs serve running the engine feature under a load "
                                         "that uses it; promtool tests cover the rule");
    }
    for (const char* alert : alerts::kDisaggregationAlerts) {
      report.skipped.emplace_back(alert, "no drill case yet: it needs serve running as a disaggregated fleet "
                                         "(--prefill-workers/--decode-workers); promtool tests cover the rule");
    }
  }
  // Rows in catalog order, whichever lane ran them.
  for (const DrillCase& c : cases) {
    for (Lane& lane : lanes) {
      for (DrillRow& row : lane.rows) {
        if (row.fault == c.name) report.rows.push_back(row);
      }
      for (auto& skip : lane.skipped) {
        if (std::find(c.alerts.begin(), c.alerts.end(), skip.first) != c.alerts.end()) report.skipped.push_back(skip);
      }
    }
  }
  return report;
}

std::string render_table(const DrillReport& r) {
  std::string out = fmt::format("{:<34} {:<18} {:<16} {:<6} {:>14} {:<8} {:>14}\n", "alert", "fault", "how", "fired",
                                "to notify (s)", "resolved", "to resolve (s)");
  for (const DrillRow& row : r.rows) {
    out += fmt::format("{:<34} {:<18} {:<16} {:<6} {:>14} {:<8} {:>14}\n", row.alert, row.fault, row.how,
                       row.fired ? "yes" : "NO", row.fired ? fmt::format("{:.1f}", row.seconds_to_notification) : "-",
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
                    {"how", row.how},
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
