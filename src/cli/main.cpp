// File: main.cpp
// The inferscope binary: parses the command line and dispatches to a subcommand. Each part adds
// itself with one add_<name>_command(app) call; nothing else lives here.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "bench/bench_command.h"
#include "doctor/doctor_command.h"
#include "drill/drill_command.h"
#include "gateway/gateway_command.h"
#include "report/report_command.h"
#include "serve/serve_command.h"
#ifdef INFERSCOPE_HAVE_UP
#include "up/up_command.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"inferscope: find which stage of an inference request got slower, and why"};
  app.set_version_flag("--version", "inferscope 0.1.0");
  app.require_subcommand(1);
  inferscope::bench::add_bench_command(app);
  inferscope::serve::add_serve_command(app);
  inferscope::gateway::add_gateway_command(app);
  inferscope::doctor::add_doctor_command(app);
  inferscope::drill::add_drill_command(app);
  inferscope::report::add_report_command(app);
#ifdef INFERSCOPE_HAVE_UP
  inferscope::up::add_up_command(app);
#endif
  // A bad flag must cost the user one line that names it, not a screen of help.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("inferscope: ") + e.what() + "\n";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
