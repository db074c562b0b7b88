// Renderers of a Report: Markdown (chat), one self-contained HTML file (inline CSS and SVG, no
// script, no URL), JSON. Every label value that came from outside (model, job, alert labels) is
// escaped for the output format.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "common/duration_text.h"
#include "doctor/diagnosis_format.h"
#include "report/report.h"

namespace inferscope::report {
namespace {

std::string utc(double t, const char* format = "%Y-%m-%d %H:%M") {
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

double unix_of(std::chrono::system_clock::time_point tp) {
  return std::chrono::duration<double>(tp.time_since_epoch()).count();
}

constexpr const char* kNoData = "no data";

std::string seconds(const Value& v) { return v ? common::format_seconds_readable(*v) : kNoData; }
std::string ratio_pct(const Value& v) { return v ? common::format_printf("%.2f %%", *v * 100) : kNoData; }
std::string per_s(const Value& v, const char* unit) {
  return v ? common::format_printf("%.3g", *v) + " " + unit : kNoData;
}
std::string count(const Value& v) {
  if (!v) return kNoData;
  return common::format_printf("%.0f", std::round(*v));
}
std::string change(const Value& now, const Value& before) {
  if (!now || !before || *before == 0) return "";
  double c = (*now - *before) / *before * 100;
  if (std::fabs(c) < 0.5) return "0 %";
  return common::format_printf("%+.0f %%", c);
}
std::string quantiles(const Latency& l) {
  if (!l.has_histogram) return l.mean ? "mean " + seconds(l.mean) : kNoData;
  return seconds(l.p50) + " / " + seconds(l.p95) + " / " + seconds(l.p99);
}
std::string length_text(double s) {
  if (s >= 2 * 86400 && std::fmod(s, 86400) == 0) return common::format_printf("%.0f days", s / 86400);
  if (s >= 3600 && std::fmod(s, 3600) == 0) return common::format_printf("%.0f h", s / 3600);
  if (s >= 3600) return common::format_printf("%.1f h", s / 3600);
  return common::format_printf("%.0f min", s / 60);
}
std::string peak(const PeriodFigures& f) {
  if (!f.peak_rate) return kNoData;
  return common::format_printf("%.3g", *f.peak_rate) + " req/s at " + utc(f.peak_rate_at, "%m-%d %H:%M");
}

bool has_traffic(const PeriodFigures& f) {
  return f.requests || f.e2e.mean || f.ttft.mean || f.tpot.mean || f.prompt_tokens_per_s || f.generation_tokens_per_s ||
         f.error_ratio;
}
bool has_gpu(const PeriodFigures& f) { return f.gpu_util_mean || f.gpu_util_max; }

std::string group_name(const GroupReport& g, bool show_job) {
  std::string name = g.model.empty() ? "(no model label)" : g.model;
  if (show_job) name += " (job " + (g.job.empty() ? std::string("?") : g.job) + ")";
  return name + " — " + g.dialect;
}
bool several_jobs(const Report& r) {
  for (const auto& g : r.groups)
    if (g.job != r.groups.front().job) return true;
  return false;
}

// One table row: label, current, previous, change.
struct Row {
  std::string what, now, before, delta;
};
std::vector<Row> rows(const GroupReport& g, double chart_step_s) {
  const std::string peak_label = "peak rate (" + common::format_printf("%.0f", std::max(300.0, chart_step_s) / 60) + " min)";
  const auto& c = g.current;
  const auto& p = g.previous;
  std::vector<Row> out = {
      {"requests", count(c.requests), count(p.requests), change(c.requests, p.requests)},
      {peak_label, peak(c), peak(p), change(c.peak_rate, p.peak_rate)},
      {"e2e p50 / p95 / p99", quantiles(c.e2e), quantiles(p.e2e), change(c.e2e.has_histogram ? c.e2e.p95 : c.e2e.mean,
                                                                          p.e2e.has_histogram ? p.e2e.p95 : p.e2e.mean)},
      {"TTFT p50 / p95 / p99", quantiles(c.ttft), quantiles(p.ttft),
       change(c.ttft.has_histogram ? c.ttft.p95 : c.ttft.mean, p.ttft.has_histogram ? p.ttft.p95 : p.ttft.mean)},
      {"TPOT p50 / p95 / p99", quantiles(c.tpot), quantiles(p.tpot),
       change(c.tpot.has_histogram ? c.tpot.p95 : c.tpot.mean, p.tpot.has_histogram ? p.tpot.p95 : p.tpot.mean)},
      {"error ratio", ratio_pct(c.error_ratio), ratio_pct(p.error_ratio), ""},
      {"prompt tokens", per_s(c.prompt_tokens_per_s, "tok/s"), per_s(p.prompt_tokens_per_s, "tok/s"),
       change(c.prompt_tokens_per_s, p.prompt_tokens_per_s)},
      {"generation tokens", per_s(c.generation_tokens_per_s, "tok/s"), per_s(p.generation_tokens_per_s, "tok/s"),
       change(c.generation_tokens_per_s, p.generation_tokens_per_s)},
  };
  return out;
}
std::vector<std::string> latency_notes(const GroupReport& g) {
  std::vector<std::string> out;
  for (const Latency* l : {&g.current.e2e, &g.current.ttft, &g.current.tpot})
    if (!l->note.empty() && std::find(out.begin(), out.end(), l->note) == out.end()) out.push_back(l->note);
  return out;
}

// The job queues' table: one row per queue, this period and the one before.
std::string depth_text(const Value& v) { return v ? common::format_printf("%.0f", std::round(*v)) : kNoData; }
std::string peak_depth(const QueueFigures& f) {
  if (!f.peak_depth) return kNoData;
  return depth_text(f.peak_depth) + (f.peak_depth_at > 0 ? " at " + utc(f.peak_depth_at, "%m-%d %H:%M") : "");
}
struct QueueRow {
  std::string queue, system, job, peak, peak_before, wait, wait_before;
};
std::vector<QueueRow> queue_rows(const Report& r) {
  std::vector<QueueRow> out;
  for (const auto& q : r.queues)
    out.push_back({q.queue, q.system, q.job, peak_depth(q.current), peak_depth(q.previous), seconds(q.current.wait_p95),
                   seconds(q.previous.wait_p95)});
  return out;
}
constexpr const char* kQueueColumns[] = {"queue", "system", "job", "peak depth", "previous", "wait p95", "previous"};

std::string alert_label(const relay::FiredAlert& a, const char* name) {
  auto it = a.labels.find(name);
  return it == a.labels.end() ? "" : it->second;
}

// ---- Markdown ----------------------------------------------------------------------------------
std::string md(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') out += ' ';
    else if (c == '|' || c == '*' || c == '_' || c == '`' || c == '[' || c == ']' || c == '<' || c == '>' || c == '\\') {
      out += '\\';
      out += c;
    } else out += c;
  }
  return out;
}

// ---- HTML --------------------------------------------------------------------------------------
std::string html(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// A line chart of one or more series over [t0, t1], values from 0 to the max.
std::string svg_lines(const std::vector<std::pair<std::string, const std::vector<Point>*>>& series, double t0,
                      double t1, const std::string& unit, bool as_ms) {
  const double w = 720, h = 200, left = 60, bottom = 24, top = 10;
  double vmax = 0;
  for (const auto& [name, pts] : series)
    for (const Point& p : *pts) vmax = std::max(vmax, p.v);
  std::string out = "<svg viewBox=\"0 0 " + common::format_printf("%.0f", w) + " " + common::format_printf("%.0f", h) +
                    "\" width=\"100%\" role=\"img\">";
  if (vmax <= 0) {
    return out + "<text x=\"20\" y=\"100\">no data</text></svg>";
  }
  auto x = [&](double t) { return left + (t - t0) / std::max(1.0, t1 - t0) * (w - left - 10); };
  auto y = [&](double v) { return top + (1 - v / vmax) * (h - top - bottom); };
  out += "<line x1=\"" + common::format_printf("%.0f", left) + "\" y1=\"" + common::format_printf("%.0f", h - bottom) + "\" x2=\"" +
         common::format_printf("%.0f", w - 10) + "\" y2=\"" + common::format_printf("%.0f", h - bottom) + "\" class=\"axis\"/>";
  auto label_v = [&](double v) { return as_ms ? common::format_printf("%.0f ms", v * 1000) : common::format_printf("%.3g", v) + " " + unit; };
  out += "<text x=\"2\" y=\"" + common::format_printf("%.0f", top + 10) + "\" class=\"tick\">" + html(label_v(vmax)) + "</text>";
  out += "<text x=\"2\" y=\"" + common::format_printf("%.0f", h - bottom) + "\" class=\"tick\">0</text>";
  for (int k = 0; k <= 4; ++k) {
    double t = t0 + (t1 - t0) * k / 4;
    out += "<text x=\"" + common::format_printf("%.0f", std::min(x(t) - 20, w - 80)) + "\" y=\"" + common::format_printf("%.0f", h - 6) +
           "\" class=\"tick\">" + utc(t, "%m-%d %H:%M") + "</text>";
  }
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c"};
  int i = 0;
  for (const auto& [name, pts] : series) {
    // Gaps (missing samples) split the line.
    std::string path;
    double prev_t = -1;
    double gap = 0;
    if (pts->size() >= 2) gap = ((*pts)[1].t - (*pts)[0].t) * 1.5;
    for (const Point& p : *pts) {
      bool jump = prev_t < 0 || (gap > 0 && p.t - prev_t > gap);
      path += jump ? 'M' : 'L';
      path += common::format_printf("%.1f", x(p.t));
      path += ',';
      path += common::format_printf("%.1f", y(p.v));
      path += ' ';
      prev_t = p.t;
    }
    const char* color = colors[i % 3];
    out += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\"/>";
    out += "<text x=\"" + common::format_printf("%.0f", w - 150) + "\" y=\"" + common::format_printf("%.0f", top + 12 + 14.0 * i) +
           "\" fill=\"" + color + "\" class=\"tick\">" + html(name) + "</text>";
    ++i;
  }
  return out + "</svg>";
}

std::string svg_hours(const HourProfile& p) {
  const double h = 180, bottom = 20, top = 10, bar = 720.0 / 24;
  double vmax = 0;
  for (const auto& r : p.hours)
    if (r.mean_rate) vmax = std::max(vmax, *r.mean_rate);
  std::string out = "<svg viewBox=\"0 0 720 180\" width=\"100%\" role=\"img\">";
  if (vmax <= 0) return out + "<text x=\"20\" y=\"90\">no data</text></svg>";
  for (const auto& r : p.hours) {
    double x = r.hour * bar;
    out += "<text x=\"" + common::format_printf("%.0f", x + 4) + "\" y=\"" + common::format_printf("%.0f", h - 5) + "\" class=\"tick\">" +
           common::format_printf("%02.0f", r.hour) + "</text>";
    if (!r.mean_rate) continue;
    double bh = *r.mean_rate / vmax * (h - top - bottom);
    std::string cls = r.over_slo ? "over" : r.peak ? "peak" : r.trough ? "trough" : "bar";
    out += "<rect x=\"" + common::format_printf("%.1f", x + 2) + "\" y=\"" + common::format_printf("%.1f", h - bottom - bh) +
           "\" width=\"" + common::format_printf("%.1f", bar - 4) + "\" height=\"" + common::format_printf("%.1f", bh) + "\" class=\"" +
           cls + "\"><title>" + common::format_printf("%02.0f:00", r.hour) + " " + common::format_printf("%.3g req/s", *r.mean_rate) +
           "</title></rect>";
  }
  return out + "</svg>";
}

nlohmann::json jv(const Value& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json latency_json(const Latency& l) {
  return {{"p50", jv(l.p50)}, {"p95", jv(l.p95)}, {"p99", jv(l.p99)}, {"mean", jv(l.mean)},
          {"has_histogram", l.has_histogram}, {"note", l.note}};
}
nlohmann::json figures_json(const PeriodFigures& f) {
  return {{"e2e_s", latency_json(f.e2e)},
          {"ttft_s", latency_json(f.ttft)},
          {"tpot_s", latency_json(f.tpot)},
          {"requests", jv(f.requests)},
          {"peak_rate_per_s", jv(f.peak_rate)},
          {"peak_rate_at", f.peak_rate ? nlohmann::json(doctor::format_time(f.peak_rate_at)) : nlohmann::json(nullptr)},
          {"error_ratio", jv(f.error_ratio)},
          {"prompt_tokens_per_s", jv(f.prompt_tokens_per_s)},
          {"generation_tokens_per_s", jv(f.generation_tokens_per_s)},
          {"gpu_utilization_mean", jv(f.gpu_util_mean)},
          {"gpu_utilization_max", jv(f.gpu_util_max)}};
}
nlohmann::json points_json(const std::vector<Point>& pts) {
  auto a = nlohmann::json::array();
  for (const auto& p : pts) a.push_back({p.t, p.v});
  return a;
}

// any_hour_data: whether some hour of day has a rate or a p95 (else its table is 24 empty rows).
bool any_hour_data(const HourProfile& p) {
  return std::any_of(p.hours.begin(), p.hours.end(), [](const HourRow& h) { return h.mean_rate || h.p95_e2e; });
}

}  // namespace

std::string report_title(const Report& r) {
  return "inferscope report " + utc(r.since) + " - " + utc(r.until) + " UTC";
}

std::string render_markdown(const Report& r) {
  std::string o = "## " + report_title(r) + "\n\n";
  o += "Compared with the " + length_text(r.until - r.since) + " before (" + utc(r.previous_since) +
       " - " + utc(r.since) + "). Source: Prometheus " + md(r.request.prometheus_url);
  if (!r.request.selector.empty()) o += ", selector " + md(r.request.selector);
  if (!r.request.model.empty()) o += ", model " + md(r.request.model);
  o += (r.dialects.empty() ? "" : ", dialect " + md(r.dialects)) + ".\n\n";
  for (const auto& n : r.notes) o += "- " + md(n) + "\n";
  if (!r.notes.empty()) o += "\n";
  const bool jobs = several_jobs(r);
  for (const auto& g : r.groups) {
    if (!has_traffic(g.current) && !has_traffic(g.previous)) continue;
    o += "### " + md(group_name(g, jobs)) + "\n\n| | this period | previous | change |\n|---|---|---|---|\n";
    for (const auto& row : rows(g, r.chart_step_s)) o += "| " + row.what + " | " + row.now + " | " + row.before + " | " + row.delta + " |\n";
    for (const auto& n : latency_notes(g)) o += "\n_" + md(n) + "_\n";
    o += "\n";
  }
  bool gpu = false;
  for (const auto& g : r.groups)
    if (has_gpu(g.current) || has_gpu(g.previous)) {
      if (!gpu) o += "### GPU utilization\n\n| job | mean | max | previous mean | previous max |\n|---|---|---|---|---|\n";
      gpu = true;
      o += "| " + md(g.job) + " | " + ratio_pct(g.current.gpu_util_mean) + " | " + ratio_pct(g.current.gpu_util_max) +
           " | " + ratio_pct(g.previous.gpu_util_mean) + " | " + ratio_pct(g.previous.gpu_util_max) + " |\n";
    }
  if (gpu) o += "\n";
  if (!r.queues.empty()) {
    o += "### Job queues\n\n|";
    for (const char* c : kQueueColumns) o += std::string(" ") + c + " |";
    o += "\n|---|---|---|---|---|---|---|\n";
    for (const auto& q : queue_rows(r))
      o += "| " + md(q.queue) + " | " + md(q.system) + " | " + md(q.job) + " | " + q.peak + " | " + q.peak_before +
           " | " + q.wait + " | " + q.wait_before + " |\n";
    o += "\n";
  }

  o += "### Alerts that fired\n\n";
  if (!r.alerts.available) o += md(r.alerts.note) + "\n\n";
  else if (r.alerts.alerts.empty()) o += "none (" + md(r.alerts.note) + ")\n\n";
  else {
    o += "| alert | severity | started | ended |\n|---|---|---|---|\n";
    for (const auto& a : r.alerts.alerts)
      o += "| " + md(a.alertname) + " | " + md(alert_label(a, "severity")) + " | " + utc(unix_of(a.starts_at)) + " | " +
           (a.ends_at ? utc(unix_of(*a.ends_at)) : std::string("still firing")) + " |\n";
    o += "\n";
  }

  o += "### Worst hour\n\n";
  if (!r.worst.found) {
    o += "none: " + md(r.worst.doctor_error.empty() ? "no data" : r.worst.doctor_error) + "\n\n";
  } else {
    o += utc(r.worst.start) + " - " + utc(r.worst.end, "%H:%M") + " UTC: e2e " + r.worst.quantile + " " +
         seconds(r.worst.value_s) + ".\n\n";
    if (r.worst.diagnosis) o += doctor::to_markdown(*r.worst.diagnosis, 1500) + "\n";
    else o += "The doctor could not run: " + md(r.worst.doctor_error) + "\n\n";
  }

  o += "### Hour of day (UTC)\n\n";
  for (const auto& c : r.hours.conclusions) o += "- " + c + "\n";  // built from numbers only
  if (!any_hour_data(r.hours)) return o + (r.hours.conclusions.empty() ? "no data for any hour\n" : "");
  o += "\n| hour | req/s | p95 e2e | |\n|---|---|---|---|\n";
  for (const auto& h : r.hours.hours) {
    std::string flags = std::string(h.peak ? "peak " : "") + (h.trough ? "trough " : "") + (h.over_slo ? "over limit" : "");
    o += "| " + common::format_printf("%02.0f", h.hour) + " | " + (h.mean_rate ? common::format_printf("%.3g", *h.mean_rate) : kNoData) +
         " | " + seconds(h.p95_e2e) + " | " + flags + " |\n";
  }
  return o;
}

// ---- Chat ----------------------------------------------------------------------------------------
namespace {

// chat_safe keeps a label value on its line and out of robot markup: newlines become spaces, and
// < > (Slack <!channel> and links, WeCom <font>) become ‹ ›.
std::string chat_safe(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') out += ' ';
    else if (c == '<') out += "\xe2\x80\xb9";
    else if (c == '>') out += "\xe2\x80\xba";
    else out += c;
  }
  return out;
}

// chat_item: "- e2e p95 1.20 s (was 900 ms, +33 %)"; "" when neither period has the figure.
std::string chat_item(const std::string& what, const std::string& now, const std::string& before,
                      const std::string& delta) {
  if (now == kNoData && before == kNoData) return "";
  std::string line = "- " + what + " " + now;
  if (before != kNoData || !delta.empty()) {
    line += " (was " + before;
    if (!delta.empty()) line += ", " + delta;
    line += ")";
  }
  return line + "\n";
}

// chat_latency: p95 and p99 lines of a histogram role, or its mean where the dialect has none.
std::string chat_latency(const std::string& what, const Latency& now, const Latency& before) {
  if (!now.has_histogram && !before.has_histogram)
    return chat_item(what + " mean", seconds(now.mean), seconds(before.mean), change(now.mean, before.mean));
  return chat_item(what + " p95", seconds(now.p95), seconds(before.p95), change(now.p95, before.p95)) +
         chat_item(what + " p99", seconds(now.p99), seconds(before.p99), change(now.p99, before.p99));
}

}  // namespace

std::string render_chat(const Report& r) {
  // Blocks are separated by a blank line (DingTalk joins single newlines outside lists); every
  // figure line is a "- " item, which all four robots show one per line.
  std::string o = report_title(r) + "\n\nCompared with the " + length_text(r.until - r.since) + " before.";
  if (!r.request.model.empty()) o += " Model " + chat_safe(r.request.model) + ".";
  o += "\n\n";
  if (!r.notes.empty()) {
    for (const auto& n : r.notes) o += "- " + chat_safe(n) + "\n";
    o += "\n";
  }
  const bool jobs = several_jobs(r);
  for (const auto& g : r.groups) {
    if (!has_traffic(g.current) && !has_traffic(g.previous)) continue;
    const auto& c = g.current;
    const auto& p = g.previous;
    o += chat_safe(group_name(g, jobs)) + "\n\n";
    o += chat_item("requests", count(c.requests), count(p.requests), change(c.requests, p.requests));
    o += chat_item("peak", peak(c), peak(p), change(c.peak_rate, p.peak_rate));
    o += chat_latency("e2e", c.e2e, p.e2e);
    o += chat_latency("TTFT", c.ttft, p.ttft);
    o += chat_latency("TPOT", c.tpot, p.tpot);
    o += chat_item("errors", ratio_pct(c.error_ratio), ratio_pct(p.error_ratio), "");
    o += chat_item("generation", per_s(c.generation_tokens_per_s, "tok/s"), per_s(p.generation_tokens_per_s, "tok/s"),
                   change(c.generation_tokens_per_s, p.generation_tokens_per_s));
    if (has_gpu(c) || has_gpu(p))
      o += chat_item("GPU util mean", ratio_pct(c.gpu_util_mean), ratio_pct(p.gpu_util_mean), "");
    o += "\n";
  }
  if (!r.queues.empty()) {
    o += "Job queues\n\n";
    for (const auto& q : r.queues) {
      o += chat_item("queue " + chat_safe(q.queue) + " (" + chat_safe(q.system) + ") peak depth",
                     depth_text(q.current.peak_depth), depth_text(q.previous.peak_depth),
                     change(q.current.peak_depth, q.previous.peak_depth));
      o += chat_item("queue " + chat_safe(q.queue) + " wait p95", seconds(q.current.wait_p95),
                     seconds(q.previous.wait_p95), change(q.current.wait_p95, q.previous.wait_p95));
    }
    o += "\n";
  }
  if (r.alerts.available) {
    std::map<std::string, int> fired;
    for (const auto& a : r.alerts.alerts) ++fired[a.alertname];
    o += "Alerts fired: " + std::to_string(r.alerts.alerts.size());
    int shown = 0;
    for (const auto& [name, n] : fired) {
      if (shown++ == 5) {
        o += ", ...";
        break;
      }
      o += (shown == 1 ? " (" : ", ") + chat_safe(name) + (n > 1 ? " x" + std::to_string(n) : "");
    }
    o += fired.empty() ? "\n\n" : ")\n\n";
  }
  if (r.worst.found) {
    o += "Worst hour " + utc(r.worst.start) + " - " + utc(r.worst.end, "%H:%M") + " UTC: e2e " + r.worst.quantile + " " +
         seconds(r.worst.value_s);
    if (r.worst.diagnosis && !r.worst.diagnosis->findings.empty())
      o += "; doctor: " + chat_safe(r.worst.diagnosis->findings.front().summary);
    o += "\n\n";
  }
  if (!r.hours.conclusions.empty()) {
    o += "Hour of day (UTC)\n\n";
    for (const auto& c : r.hours.conclusions) o += "- " + c + "\n";
    o += "\n";
  }
  o += "Tables and charts: the HTML version (email or webhook channel, or `inferscope report --format html`).";
  return o;
}

std::string render_html(const Report& r) {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html(report_title(r)) +
      "</title>\n<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#222}"
      "table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
      "th{background:#f3f3f3}.nodata{color:#999}.tick{font-size:11px;fill:#555}.axis{stroke:#888}"
      ".bar{fill:#9ecae1}.peak{fill:#3182bd}.trough{fill:#c7e9c0}.over{fill:#e6550d}"
      "svg{border:1px solid #eee;margin-bottom:1em}</style></head><body>\n";
  o += "<h1>" + html(report_title(r)) + "</h1>\n<p>Compared with the " +
       length_text(r.until - r.since) + " before (" + utc(r.previous_since) + " - " + utc(r.since) +
       ").</p>\n<p class=\"source\">Source: Prometheus " + html(r.request.prometheus_url) + "</p>\n<p>";
  if (!r.request.selector.empty()) o += "Selector " + html(r.request.selector) + ". ";
  if (!r.request.model.empty()) o += "Model " + html(r.request.model) + ". ";
  if (!r.dialects.empty()) o += "Dialect " + html(r.dialects) + ".";
  o += "</p>\n";
  if (!r.notes.empty()) {
    o += "<ul>";
    for (const auto& n : r.notes) o += "<li>" + html(n) + "</li>";
    o += "</ul>\n";
  }
  auto cell = [](const std::string& v) {
    return v == kNoData ? std::string("<td class=\"nodata\">no data</td>") : "<td>" + html(v) + "</td>";
  };
  const bool jobs = several_jobs(r);
  for (const auto& g : r.groups) {
    if (!has_traffic(g.current) && !has_traffic(g.previous)) continue;
    o += "<h2>" + html(group_name(g, jobs)) +
         "</h2>\n<table><tr><th></th><th>this period</th><th>previous</th><th>change</th></tr>\n";
    for (const auto& row : rows(g, r.chart_step_s))
      o += "<tr><th>" + html(row.what) + "</th>" + cell(row.now) + cell(row.before) + cell(row.delta) + "</tr>\n";
    o += "</table>\n";
    for (const auto& n : latency_notes(g)) o += "<p><em>" + html(n) + "</em></p>\n";
  }
  bool gpu = false;
  for (const auto& g : r.groups)
    if (has_gpu(g.current) || has_gpu(g.previous)) {
      if (!gpu) o += "<h2>GPU utilization</h2>\n<table><tr><th>job</th><th>mean</th><th>max</th><th>previous mean</th>"
                     "<th>previous max</th></tr>\n";
      gpu = true;
      o += "<tr><td>" + html(g.job) + "</td>" + cell(ratio_pct(g.current.gpu_util_mean)) +
           cell(ratio_pct(g.current.gpu_util_max)) + cell(ratio_pct(g.previous.gpu_util_mean)) +
           cell(ratio_pct(g.previous.gpu_util_max)) + "</tr>\n";
    }
  if (gpu) o += "</table>\n";
  if (!r.queues.empty()) {
    o += "<h2>Job queues</h2>\n<table><tr>";
    for (const char* c : kQueueColumns) o += std::string("<th>") + c + "</th>";
    o += "</tr>\n";
    for (const auto& q : queue_rows(r))
      o += "<tr><td>" + html(q.queue) + "</td><td>" + html(q.system) + "</td><td>" + html(q.job) + "</td>" + cell(q.peak) +
           cell(q.peak_before) + cell(q.wait) + cell(q.wait_before) + "</tr>\n";
    o += "</table>\n";
  }

  o += "<h2>Request rate</h2>\n" + svg_lines({{"requests/s", &r.rate}}, r.since, r.until, "req/s", false);
  o += "<h2>e2e latency</h2>\n" +
       svg_lines({{"p95 e2e", &r.p95_e2e}, {"p99 e2e", &r.p99_e2e}}, r.since, r.until, "s", true);

  o += "<h2>Alerts that fired</h2>\n";
  if (!r.alerts.available) o += "<p>" + html(r.alerts.note) + "</p>\n";
  else if (r.alerts.alerts.empty()) o += "<p>none (" + html(r.alerts.note) + ")</p>\n";
  else {
    o += "<table><tr><th>alert</th><th>severity</th><th>labels</th><th>started</th><th>ended</th></tr>\n";
    for (const auto& a : r.alerts.alerts) {
      std::string labels;
      for (const auto& [k, v] : a.labels)
        if (k != "alertname" && k != "severity") labels += (labels.empty() ? "" : ", ") + k + "=" + v;
      o += "<tr><td>" + html(a.alertname) + "</td><td>" + html(alert_label(a, "severity")) + "</td><td>" + html(labels) +
           "</td><td>" + utc(unix_of(a.starts_at)) + "</td><td>" +
           (a.ends_at ? utc(unix_of(*a.ends_at)) : std::string("still firing")) + "</td></tr>\n";
    }
    o += "</table>\n";
  }

  o += "<h2>Worst hour</h2>\n";
  if (!r.worst.found) {
    o += "<p>none: " + html(r.worst.doctor_error.empty() ? "no data" : r.worst.doctor_error) + "</p>\n";
  } else {
    o += "<p>" + utc(r.worst.start) + " - " + utc(r.worst.end, "%H:%M") + " UTC: e2e " + html(r.worst.quantile) + " " +
         html(seconds(r.worst.value_s)) + ".</p>\n";
    if (r.worst.diagnosis) {
      const auto& d = *r.worst.diagnosis;
      o += "<p><strong>Doctor</strong> (this hour vs the hour before): " + html(d.headline) + "</p>\n<ol>";
      for (const auto& f : d.findings) {
        o += "<li><strong>" + html(f.cause) + "</strong>" + (f.stage.empty() ? "" : " (" + html(f.stage) + ")") +
             common::format_printf(", score %.2f: ", f.score) + html(f.summary);
        if (!f.next_steps.empty()) {
          o += "<ul>";
          for (const auto& s : f.next_steps) o += "<li>" + html(s) + "</li>";
          o += "</ul>";
        }
        o += "</li>";
      }
      o += "</ol>\n";
    } else {
      o += "<p>The doctor could not run: " + html(r.worst.doctor_error) + "</p>\n";
    }
  }

  o += "<h2>Hour of day (UTC)</h2>\n<ul>";
  for (const auto& c : r.hours.conclusions) o += "<li>" + html(c) + "</li>";
  o += "</ul>\n" + svg_hours(r.hours) +
       "\n<p class=\"tick\">Bars: mean request rate per hour of day. Dark blue: peak; green: below " +
       common::format_printf("%.0f", r.hours.trough_threshold * 100) + " % of the peak; orange: p95 e2e over the limit.</p>" +
       "\n<table><tr><th>hour</th><th>req/s</th><th>p95 e2e</th><th></th></tr>\n";
  for (const auto& h : r.hours.hours) {
    std::string flags = std::string(h.peak ? "peak " : "") + (h.trough ? "trough " : "") + (h.over_slo ? "over limit" : "");
    o += "<tr><td>" + common::format_printf("%02.0f:00", h.hour) + "</td>" +
         cell(h.mean_rate ? common::format_printf("%.3g", *h.mean_rate) : kNoData) + cell(seconds(h.p95_e2e)) + "<td>" + flags +
         "</td></tr>\n";
  }
  o += "</table>\n<p class=\"tick\">" + common::format_printf("%d Prometheus queries, ", r.queries) +
       common::format_printf("%.2f s to gather.", r.seconds) + "</p>\n</body></html>\n";
  return o;
}

std::string render_json(const Report& r) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["title"] = report_title(r);
  j["period"] = {{"since", doctor::format_time(r.since)}, {"until", doctor::format_time(r.until)}};
  j["previous"] = {{"since", doctor::format_time(r.previous_since)}, {"until", doctor::format_time(r.since)}};
  j["prometheus"] = r.request.prometheus_url;
  j["selector"] = r.request.selector;
  j["model"] = r.request.model;
  j["dialects"] = r.dialects;
  j["has_data"] = r.has_data;
  j["notes"] = r.notes;
  j["groups"] = nlohmann::json::array();
  for (const auto& g : r.groups)
    j["groups"].push_back({{"job", g.job}, {"model", g.model}, {"dialect", g.dialect},
                           {"current", figures_json(g.current)}, {"previous", figures_json(g.previous)}});
  auto queue_json = [](const QueueFigures& f) {
    return nlohmann::json{{"peak_depth", jv(f.peak_depth)},
                          {"peak_depth_at", f.peak_depth ? nlohmann::json(doctor::format_time(f.peak_depth_at))
                                                         : nlohmann::json(nullptr)},
                          {"wait_p95_s", jv(f.wait_p95)}};
  };
  j["queues"] = nlohmann::json::array();
  for (const auto& q : r.queues)
    j["queues"].push_back({{"job", q.job}, {"queue", q.queue}, {"system", q.system},
                           {"current", queue_json(q.current)}, {"previous", queue_json(q.previous)}});
  j["charts"] = {{"step_s", r.chart_step_s}, {"request_rate", points_json(r.rate)},
                 {"p95_e2e_s", points_json(r.p95_e2e)}, {"p99_e2e_s", points_json(r.p99_e2e)}};
  auto hours = nlohmann::json::array();
  for (const auto& h : r.hours.hours)
    hours.push_back({{"hour", h.hour}, {"mean_rate", jv(h.mean_rate)}, {"p95_e2e_s", jv(h.p95_e2e)},
                     {"peak", h.peak}, {"trough", h.trough}, {"over_limit", h.over_slo}});
  j["hour_of_day"] = {{"hours", hours}, {"trough_threshold", r.hours.trough_threshold},
                      {"latency_limit_s", jv(r.hours.latency_limit_s)},
                      {"latency_limit_source", r.hours.latency_limit_source},
                      {"conclusions", r.hours.conclusions}};
  nlohmann::json worst = {{"found", r.worst.found}};
  if (r.worst.found) {
    worst["start"] = doctor::format_time(r.worst.start);
    worst["end"] = doctor::format_time(r.worst.end);
    worst["quantile"] = r.worst.quantile;
    worst["value_s"] = jv(r.worst.value_s);
  }
  worst["diagnosis"] = r.worst.diagnosis ? doctor::to_json(*r.worst.diagnosis) : nlohmann::json(nullptr);
  worst["doctor_error"] = r.worst.doctor_error;
  j["worst_hour"] = worst;
  auto alerts = nlohmann::json::array();
  for (const auto& a : r.alerts.alerts)
    alerts.push_back({{"alertname", a.alertname}, {"labels", a.labels},
                      {"starts_at", doctor::format_time(unix_of(a.starts_at))},
                      {"ends_at", a.ends_at ? nlohmann::json(doctor::format_time(unix_of(*a.ends_at)))
                                            : nlohmann::json(nullptr)}});
  j["alerts"] = {{"available", r.alerts.available}, {"note", r.alerts.note}, {"fired", alerts}};
  j["queries"] = r.queries;
  j["seconds"] = r.seconds;
  return j.dump(2) + "\n";
}

}  // namespace inferscope::report
