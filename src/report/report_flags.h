// File: report_flags.h
// The report's command-line texts (shared by `inferscope report` and whoever builds a report from
// flags) and their parsing into a ReportRequest: --until RFC 3339 / Unix seconds (default now),
// --since the same or a duration before --until ("24h", "7d"; default 24h).
// Example: auto r = request_from_flags({.prometheus = url, .since = "7d"}, now); if (r) build_report(*r);
// Pure; thread-safe; never throws.
#pragma once

#include <string>

#include "inferscope/common/result.h"
#include "report/report.h"

namespace inferscope::report {

// ReportFlags are the command line's texts before parsing.
struct ReportFlags {
  std::string prometheus, since, until, selector, model, state_dir;
  double slo_p95 = 0;
  net::TlsOptions tls;  // --ca-file, --insecure
};

// request_from_flags parses the times (see the file comment). Errors name the flag.
Result<ReportRequest> request_from_flags(const ReportFlags& flags, double now);

}  // namespace inferscope::report
