// File: bench_command.h
// add_bench_command registers `inferscope bench` (and `inferscope bench compare A.json B.json`)
// on the CLI: flags modelled on vllm bench serve plus inferscope's own, validation with one-line
// errors naming the flag, the run, and the outputs (table, --json, --csv, --jsonl, --metrics-port).
// Example: CLI::App app; inferscope::loadgen::add_bench_command(app); app.parse(argc, argv);
// Setup code, main thread only. Never logs or saves the API key (read from --api-key-env/-file).
#pragma once

namespace CLI {
class App;
}

namespace inferscope::bench {

// add_bench_command adds the subcommand. Run errors print "inferscope bench: cannot ..." to
// stderr and throw CLI::RuntimeError(1).
void add_bench_command(CLI::App& app);

}  // namespace inferscope::bench
