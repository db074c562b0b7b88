// File: report_command.h
// add_report_command registers `inferscope report`: the periodic report over Prometheus for a
// period (default the last 24 h) vs the period before, as Markdown, HTML or JSON, to stdout or
// --output FILE. Exit status: 0 report written, 2 no data at all in the period (the report still
// says why), 3 runtime error (one line on stderr naming the flag or file), CLI11's codes for usage.
// Example: CLI::App app; add_report_command(app); app.parse(argc, argv);
// Setup code, main thread only.
#pragma once

#include <string>

#include "report/report_flags.h"

namespace CLI {
class App;
}

namespace inferscope::report {

// add_report_command adds the subcommand; its callback throws CLI::RuntimeError(code) for a
// non-zero exit status.
void add_report_command(CLI::App& app);

}  // namespace inferscope::report
