#include "relay/message_renderer.h"

#include "relay/utf8_truncate.h"

namespace inferscope::relay {
namespace {

struct Markup {
  MarkupStyle style;

  std::string bold(const std::string& s) const {
    if (style == MarkupStyle::kPlain) return s;
    if (style == MarkupStyle::kSlack) return "*" + s + "*";
    return "**" + s + "**";
  }
  std::string link(const std::string& text, const std::string& url) const {
    if (style == MarkupStyle::kPlain) return text + ": " + url;
    if (style == MarkupStyle::kSlack) return "<" + url + "|" + text + ">";
    return "[" + text + "](" + url + ")";
  }
  std::string heading(const std::string& s, bool firing) const {
    switch (style) {
      case MarkupStyle::kDingTalk: return "#### " + s;
      case MarkupStyle::kWeCom: return std::string("# <font color=\"") + (firing ? "warning" : "info") + "\">" + s + "</font>";
      case MarkupStyle::kLarkMd: return "**" + s + "**";
      case MarkupStyle::kSlack: return "*" + s + "*";
      case MarkupStyle::kPlain: return s;
    }
    return s;
  }
  // DingTalk's markdown joins single newlines into one paragraph.
  const char* newline() const { return style == MarkupStyle::kDingTalk ? "\n\n" : "\n"; }
  const char* separator() const {
    return style == MarkupStyle::kPlain || style == MarkupStyle::kSlack ? "\n\n----------------\n\n" : "\n\n---\n\n";
  }
};

std::string label_list(const LabelMap& labels, const LabelMap& skip) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (k == "alertname" || skip.count(k) != 0) continue;
    if (!out.empty()) out += ", ";
    out += k + "=" + v;
  }
  return out;
}

bool real_end(const std::string& ends_at) { return !ends_at.empty() && ends_at.rfind("0001-", 0) != 0; }

void render_alert(const Alert& a, const Notification& n, const Markup& m, std::string& out) {
  std::string line = "- " + m.bold(a.alertname().empty() ? std::string("alert") : a.alertname());
  const std::string labels = label_list(a.labels, n.group_labels);
  if (!labels.empty()) line += " " + labels;
  out += line;
  out += m.newline();
  auto field = [&](const char* name, const std::string& value) {
    if (value.empty()) return;
    out += "  ";
    out += m.bold(name);
    out += ": ";
    out += value;
    out += m.newline();
  };
  field("Summary", a.annotation("summary"));
  field("Description", a.annotation("description"));
  std::string runbook = a.annotation("runbook");
  if (runbook.empty()) runbook = a.annotation("runbook_url");
  field("Runbook", runbook);
  field(a.status == "resolved" ? "Resolved" : "Since", a.status == "resolved" && real_end(a.ends_at) ? a.ends_at : a.starts_at);
  if (!a.generator_url.empty()) {
    out += "  ";
    out += m.link("source", a.generator_url);
    out += m.newline();
  }
}

}  // namespace

std::string notification_title(const Notification& n) {
  std::size_t firing = 0;
  for (const Alert& a : n.alerts) firing += a.status == "firing";
  std::string title = n.status == "firing" ? "[FIRING:" + std::to_string(firing) + "]" : std::string("[RESOLVED]");
  std::string name;
  if (auto it = n.group_labels.find("alertname"); it != n.group_labels.end()) name = it->second;
  if (name.empty() && !n.alerts.empty()) name = n.alerts.front().alertname();
  if (!name.empty()) title += " " + name;
  const std::string rest = label_list(n.group_labels, {});
  if (!rest.empty()) title += " (" + rest + ")";
  return title;
}

std::string render_section(const Notification& n, MarkupStyle style, const std::string& diagnosis) {
  const Markup m{style};
  std::string out = m.heading(notification_title(n), n.status == "firing");
  out += m.newline();
  // Firing alerts first, then resolved ones, as Alertmanager delivered them within each part.
  for (const char* status : {"firing", "resolved"}) {
    bool any = false;
    for (const Alert& a : n.alerts) any = any || a.status == status;
    if (!any) continue;
    if (n.status == "firing" && std::string(status) == "resolved") {
      out += m.bold("Resolved");
      out += m.newline();
    }
    for (const Alert& a : n.alerts) {
      if (a.status == status) render_alert(a, n, m, out);
    }
  }
  if (n.truncated_alerts > 0) {
    out += "(+" + std::to_string(n.truncated_alerts) + " more alert(s) in this group not sent by Alertmanager)";
    out += m.newline();
  }
  if (!diagnosis.empty()) {
    // A resolved notification's part says what recovered (RelayOptions::recovered), not a diagnosis.
    out += m.bold(n.status == "resolved" ? "Recovered" : "Diagnosis");
    out += m.newline();
    out += diagnosis;
    out += m.newline();
  }
  if (!n.external_url.empty()) out += m.link("Alertmanager", n.external_url);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

ComposedMessage compose_message(MarkupStyle style, const std::vector<Notification>& batch, std::size_t max_bytes,
                                const std::vector<std::string>& diagnoses) {
  const Markup m{style};
  const std::size_t limit = max_bytes == 0 ? std::string::npos : max_bytes;
  ComposedMessage out;
  std::string header;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::string section = render_section(batch[i], style, i < diagnoses.size() ? diagnoses[i] : std::string());
    if (i == 0) {
      out.text = section;
      out.notifications = 1;
      continue;
    }
    // A merged message opens with a count line; reserve room for its longest form.
    const std::string candidate_header = "inferscope: " + std::to_string(i + 1) + " notifications" + m.newline();
    if (candidate_header.size() + out.text.size() + std::string_view(m.separator()).size() + section.size() > limit) break;
    out.text += m.separator();
    out.text += section;
    out.notifications = i + 1;
    header = candidate_header;
  }
  if (out.notifications > 1) {
    out.text = header + out.text;
    std::size_t firing = 0;
    for (std::size_t i = 0; i < out.notifications; ++i) firing += batch[i].status == "firing";
    out.title = "[inferscope] " + std::to_string(out.notifications) + " notifications (" + std::to_string(firing) +
                " firing, " + std::to_string(out.notifications - firing) + " resolved)";
  } else {
    out.title = notification_title(batch.front());
    if (out.text.size() > limit) {
      out.text = truncate_utf8(out.text, limit);
      out.truncated = true;
    }
  }
  return out;
}

}  // namespace inferscope::relay
