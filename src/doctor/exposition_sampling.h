// File: exposition_sampling.h
// Turns rounds of direct scrapes (parsed expositions of one or more targets) into SampledRoles:
// detects the dialect, picks each role's metric (current name first, renamed ones noted) and
// aggregates matching series per round. Used by `doctor --scrape` and `--check-metrics`.
// Example: auto sampled = sample_rounds(rounds, "", &notes);
// Pure functions; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "dialect/custom_dialect.h"
#include "doctor/sampled_roles.h"
#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::doctor {

// ScrapeRound is one scrape of every target at (about) the same time; a failed scrape leaves
// its exposition out and is counted in `failed`.
struct ScrapeRound {
  double time = 0;  // Unix seconds
  std::vector<metrics::ParsedExposition> expositions;
  int failed = 0;
  std::vector<std::size_t> sources = {};  // for each exposition, the index of the URL it came from
};

// SamplingReport says what the sampler found: dialects, renamed metrics still in use, expected
// roles with no metric.
struct SamplingReport {
  std::vector<std::string> dialects;
  std::vector<std::string> renamed;
  std::vector<std::string> missing;
};

// metric_names lists every family and sample name of an exposition.
std::set<std::string> metric_names(const metrics::ParsedExposition& exposition);

// sample_rounds builds the grid from the rounds. `model` ("" = all) keeps series whose model
// label (per dialect) equals it.
// `custom` (a custom target's role mapping) replaces dialect detection: its names are the roles.
SampledRoles sample_rounds(const std::vector<ScrapeRound>& rounds, const std::string& model, SamplingReport& report,
                           const dialect::CustomDialect* custom = nullptr);

// choose_metric returns the first of spec.metrics that `names` contains (checking the series
// names of its kind), or "" when none; sets `renamed_from_current` when only a later (old) name is there.
std::string choose_metric(const RoleSpec& spec, const std::set<std::string>& names, bool& renamed);

}  // namespace inferscope::doctor
