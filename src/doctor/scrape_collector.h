// File: scrape_collector.h
// Direct-scrape collection for `doctor --scrape` and `--check-metrics`: fetches /metrics of one
// or more targets on a fixed interval (no Prometheus), parses each answer with the library's
// exposition parser, and keeps baseline files (--save-baseline / --baseline-file).
// Example: auto rounds = scrape_rounds({{"http://127.0.0.1:8000/metrics"}, 60, 1});
// Blocking; thread-compatible. Never throws; failures are Errors or counted per round.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "doctor/exposition_sampling.h"
#include "doctor/localize.h"
#include "doctor/snapshot.h"
#include "inferscope/common/result.h"
#include "net/blocking_client.h"

namespace inferscope::doctor {

// FetchedExposition is one parsed scrape and its raw text.
struct FetchedExposition {
  std::string text;
  std::string content_type;
  metrics::ParsedExposition parsed;
};

// fetch_exposition GETs one metrics URL and parses it (format from Content-Type). Errors:
// "cannot scrape <url>: <cause>" (connect, timeout, TLS, HTTP status, parse error with line).
Result<FetchedExposition> fetch_exposition(const std::string& url, std::chrono::milliseconds timeout,
                                           const net::TlsOptions& tls = {});

struct ScrapeOptions {
  std::vector<std::string> urls;
  double duration_s = 60;
  double interval_s = 1;
  std::chrono::milliseconds timeout{5000};
  net::TlsOptions tls = {};  // for https:// URLs
  std::shared_ptr<const dialect::CustomDialect> custom = {};  // --roles: the targets' own names mapped to roles
};

// ScrapeResult is every round plus, per URL, the last error (empty when its last scrape worked).
struct ScrapeResult {
  std::vector<ScrapeRound> rounds;
  std::vector<std::string> last_errors;
  std::vector<int> failures;  // failed rounds per URL
};

// scrape_rounds scrapes every URL each interval for the duration (the first round at once, the
// last at the end: duration/interval + 1 rounds). Fails only on a bad option.
Result<ScrapeResult> scrape_rounds(const ScrapeOptions& options);

// snapshot_from_scrapes builds the Snapshot: without a baseline, first half vs second half of
// the rounds; with one, the baseline file's statistics vs the whole run. Targets that failed
// every round are reported down.
Snapshot snapshot_from_scrapes(const ScrapeOptions& options, const ScrapeResult& result, const std::string& model,
                               const Snapshot* baseline);

// SavedBaseline is a baseline file: the whole data's statistics and each target's own (each
// instance of a job+model served by two or more, each model of two or more; Slice::snapshot's
// incident side holds them), so that replicas are compared one by one against a saved baseline too.
struct SavedBaseline {
  Snapshot whole;
  std::vector<Slice> targets;
};

// whole_run_slices is each slice of a run worth comparing (plan_slices) over the whole run, the
// targets' part of a baseline file.
std::vector<Slice> whole_run_slices(const ScrapeOptions& options, const ScrapeResult& result, const std::string& model,
                                    const std::vector<Where>& sources);

// localize_scrapes breaks one run down by URL (each URL is one instance, host:port) and, without
// `model`, by model, and localizes `d`'s findings (localize.h). Without `saved`, each slice is
// first half vs second half; with it, the whole run against the saved slice of the same
// instance (or model), and against no baseline of its own where the file has none (then only
// the comparison with its peers in the window speaks).
void localize_scrapes(const ScrapeOptions& options, const ScrapeResult& result, const std::string& model,
                      Diagnosis& d, const SavedBaseline* saved = nullptr);

// save_baseline writes the statistics of a whole scrape run (its incident side), and of each
// target's slice, as JSON.
Result<void> save_baseline(const Snapshot& whole_run, const std::vector<Slice>& targets, const std::string& path);

// load_baseline reads a file written by save_baseline: snapshots whose incident side holds the
// saved statistics (a file written before targets were saved has none). Errors name the file.
Result<SavedBaseline> load_baseline(const std::string& path);

// apply_baseline replaces the baseline side of `snapshot` with the saved statistics (the saved
// incident side) and recomputes derived quantities.
void apply_baseline(Snapshot& snapshot, const Snapshot& saved);

}  // namespace inferscope::doctor
