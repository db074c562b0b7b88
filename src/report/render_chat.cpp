// File: render_chat.cpp
// render_chat: the report for chat robots (DingTalk, Feishu/Lark, WeCom, Slack): "- " items one
// per line, label values kept out of robot markup (chat_safe).
#include <map>

#include "report/detail/figure_text.h"
#include "report/report.h"

namespace inferscope::report {
namespace {

using detail::change;
using detail::count;
using detail::depth_text;
using detail::group_name;
using detail::has_gpu;
using detail::has_traffic;
using detail::kNoData;
using detail::length_text;
using detail::peak;
using detail::per_s;
using detail::ratio_pct;
using detail::seconds;
using detail::several_jobs;
using detail::utc;
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

}  // namespace inferscope::report
