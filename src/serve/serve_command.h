// File: serve_command.h
// add_serve_command registers `inferscope serve` (flags in docs/serve.md) on the CLI app.
// Example: CLI::App app; inferscope::serve::add_serve_command(app); app.parse(argc, argv);
// Call once, from main, before parsing. Not thread-safe (CLI setup). The subcommand never
// prompts; it prints one "listening on" line to stdout and logs to stderr.
#pragma once

#include <CLI/CLI.hpp>

namespace inferscope::serve {

// add_serve_command adds the `serve` subcommand. Its callback runs the server until SIGINT,
// SIGTERM or --duration; a start failure prints "inferscope serve: cannot ..." and throws
// CLI::RuntimeError(1).
void add_serve_command(CLI::App& app);

}  // namespace inferscope::serve
