// File: render_html.cpp
// render_html: one self-contained HTML file (inline CSS and SVG charts, no script, no URL). Every
// label value that came from outside is escaped (html).
#include <algorithm>

#include "common/duration_text.h"
#include "report/detail/figure_text.h"
#include "report/report.h"

namespace inferscope::report {
namespace {

using detail::alert_label;
using detail::change;
using detail::group_name;
using detail::has_gpu;
using detail::has_traffic;
using detail::kNoData;
using detail::kQueueColumns;
using detail::latency_notes;
using detail::length_text;
using detail::peak;
using detail::queue_rows;
using detail::ratio_pct;
using detail::rows;
using detail::seconds;
using detail::several_jobs;
using detail::unix_of;
using detail::utc;
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

}  // namespace

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

}  // namespace inferscope::report
