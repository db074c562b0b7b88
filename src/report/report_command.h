// File: report_command.h
// add_report_command registers `inferscope report`: the periodic report over Prometheus for a
// period (default the last 24 h) vs the period before, as Markdown, HTML or JSON, to stdout or
// --output FILE. Exit status: 0 report written, 2 no data at all in the period (the report still
// says why), 3 runtime error (one line on stderr naming the flag or file), CLI11's codes for usage.
// Example: CLI::App app; add_report_command(app); app.parse(argc, argv);
// Setup code, main thread only.
#pragma once

#include <string>

#include "inferscope/common/result.h"
#include "report/report.h"

namespace CLI {
class App;
}

namespace inferscope::report {

// ReportFlags are the command line's texts before parsing.
struct ReportFlags {
  std::string prometheus, since, until, selector, model, state_dir;
  double slo_p95 = 0;
};

// request_from_flags parses the times: --until RFC 3339 / Unix seconds (default now); --since the
// same, or a duration ("24h", "7d") meaning that long before --until (default 24h). Errors name
// the flag.
Result<ReportRequest> request_from_flags(const ReportFlags& flags, double now);

// add_report_command adds the subcommand; its callback throws CLI::RuntimeError(code) for a
// non-zero exit status.
void add_report_command(CLI::App& app);

}  // namespace inferscope::report
