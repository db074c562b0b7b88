// File: gateway_command.h
// add_gateway_command registers `inferscope gateway` (flags in docs/gateway.md) on the CLI app.
// Example: CLI::App app; inferscope::gateway::add_gateway_command(app); app.parse(argc, argv);
// Call once, from main, before parsing. Not thread-safe (CLI setup). Prints one
// "inferscope gateway: listening on http://HOST:PORT" line to stdout when ready; logs to stderr.
#pragma once

#include <CLI/CLI.hpp>

namespace inferscope::gateway {

// add_gateway_command adds the `gateway` subcommand. Its callback runs the gateway until SIGINT or
// SIGTERM (then drains); a start failure prints "inferscope gateway: cannot ..." and exits 1.
void add_gateway_command(CLI::App& app);

}  // namespace inferscope::gateway
