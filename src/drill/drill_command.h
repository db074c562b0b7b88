// File: drill/drill_command.h
// add_drill_command registers `inferscope drill [--api URL] [--only NAME] [--json]`: run the fire
// drill against a running `inferscope up` and print the table (or JSON).
// Example: CLI::App app; inferscope::drill::add_drill_command(app); app.parse(argc, argv);
// Call once, from main. Exit status: 0 every drilled alert fired, 1 one never fired, 2 the drill
// could not run (one line on stderr naming the flag or the cause).
#pragma once

#include <CLI/CLI.hpp>

namespace inferscope::drill {

// add_drill_command adds the `drill` subcommand.
void add_drill_command(CLI::App& app);

}  // namespace inferscope::drill
