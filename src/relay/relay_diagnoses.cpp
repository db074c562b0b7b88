// Relay diagnoses: the doctor's Markdown for each notification, computed once and shared by its
// channels and retries (a bounded cache by notification id); the firing record kept per alert
// and handed back when it resolves.
#include <spdlog/spdlog.h>

#include "relay/detail/relay_impl.h"

namespace inferscope::relay {
namespace {

constexpr std::size_t kDiagnosisCacheSize = 1000;

}  // namespace

std::vector<std::string> Relay::Impl::diagnoses(const std::vector<Notification>& batch,
                                                const std::vector<PendingDelivery>& rows) {
  std::vector<std::string> out;
  if (!options_.diagnose && !options_.recovered) return out;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::int64_t id = rows[i].notification_id;
    {
      std::lock_guard lock(diagnosis_mutex_);
      if (auto it = diagnosis_cache_.find(id); it != diagnosis_cache_.end()) {
        out.push_back(it->second);
        continue;
      }
    }
    // Computed outside the lock (it queries Prometheus); two channels racing may both compute it.
    std::string text;
    try {
      text = batch[i].status == "resolved" ? recovery(batch[i]) : firing_with_recovered(batch[i]);
    } catch (const std::exception& e) {
      spdlog::warn("relay: diagnosis failed, sending without it: {}", e.what());
    }
    std::lock_guard lock(diagnosis_mutex_);
    diagnosis_cache_.emplace(id, text);
    // Ids only grow: dropping the smallest keeps the newest notifications' diagnoses.
    while (diagnosis_cache_.size() > kDiagnosisCacheSize) diagnosis_cache_.erase(diagnosis_cache_.begin());
    out.push_back(std::move(text));
  }
  return out;
}

std::string Relay::Impl::firing_diagnosis(const Notification& n) {
  if (!options_.diagnose) return {};
  FiringDiagnosis d = options_.diagnose(n);
  if (d.record.empty()) return std::move(d.markdown);
  for (const Alert& a : n.alerts) {
    if (a.status != "firing") continue;
    if (auto kept = outbox_->keep_firing_record(a, d.record); !kept) {
      spdlog::warn("relay: cannot keep the firing diagnosis of {}: {}", a.alertname(), kept.error().message);
    }
  }
  return std::move(d.markdown);
}

// A group whose alerts partly resolved comes as one "firing" notification: the firing ones get
// the diagnosis, and the resolved ones still say what recovered, after it (the diagnosis is
// Markdown shown as is, so the part's own title is Markdown too).
std::string Relay::Impl::firing_with_recovered(const Notification& n) {
  std::string text = firing_diagnosis(n);
  Notification resolved = n;
  std::erase_if(resolved.alerts, [](const Alert& a) { return a.status != "resolved"; });
  if (resolved.alerts.empty()) return text;
  resolved.status = "resolved";
  const std::string recovered = recovery(resolved);
  if (recovered.empty()) return text;
  return text + (text.empty() ? "" : "\n\n") + "**Recovered** (the resolved alerts of this group)\n" + recovered;
}

std::string Relay::Impl::recovery(const Notification& n) {
  if (!options_.recovered) return {};
  std::vector<std::string> records;
  for (const Alert& a : n.alerts) {
    auto record = outbox_->firing_record(a);
    if (!record) spdlog::warn("relay: cannot read the firing diagnosis of {}: {}", a.alertname(), record.error().message);
    records.push_back(record && *record ? **record : std::string());
  }
  return options_.recovered(n, records);
}

}  // namespace inferscope::relay
