// File: up_command.h
// add_up_command registers `inferscope up` (flags in docs/up.md) on the CLI app: run the monitoring
// stack, `--check` its generated files, or print a running instance's `--status`.
// Example: CLI::App app; inferscope::up::add_up_command(app); app.parse(argc, argv);
// Call once, from main, before parsing. Not thread-safe (CLI setup). Prints the ready line and one
// line per event to stdout; errors are one line on stderr and a non-zero exit.
#pragma once

#include <CLI/CLI.hpp>

namespace inferscope::up {

// add_up_command adds the `up` subcommand. Its callback runs until SIGINT/SIGTERM; a failure
// prints "inferscope up: <message>" and throws CLI::RuntimeError(1).
void add_up_command(CLI::App& app);

}  // namespace inferscope::up
