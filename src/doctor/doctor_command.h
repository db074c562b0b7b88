// File: doctor_command.h
// add_doctor_command registers `inferscope doctor` on the CLI: --prometheus (window vs baseline
// over the query API), --scrape (direct scrapes, optional baseline files) and --check-metrics.
// Exit status: 0 healthy, 1 degraded, 2 no_data; 3 runtime error and CLI11's codes for usage
// errors (one line on stderr). Example: CLI::App app; add_doctor_command(app); app.parse(argc, argv);
// Setup code, main thread only.
#pragma once

namespace CLI {
class App;
}

namespace inferscope::doctor {

// add_doctor_command adds the subcommand; its callback throws CLI::RuntimeError(code) for a
// non-zero exit status.
void add_doctor_command(CLI::App& app);

}  // namespace inferscope::doctor
