#!/usr/bin/env bash
# Runs inferscope's whole test suite on a fresh Debian 12 machine (as root): installs packages,
# builds what the release flavour's integration tests run, then runs two halves side by side:
#   - in the foreground, the integration tests of the Release build;
#   - in the background at the lowest CPU and I/O priority, scripts/test_background.sh: the rest
#     of the Release build (its unit tests and benchmarks), its unit tests, then
#     scripts/test_sanitizers.sh (the unit tests under AddressSanitizer +
#     UndefinedBehaviorSanitizer and the threaded ones under ThreadSanitizer,
#     each in its own build, then each libFuzzer target for FUZZ_SECONDS (10)), then each
#     micro-benchmark once, briefly, to prove it runs and prints its figures.
# The integration tests spend most of their time waiting on servers, Prometheus and alert windows
# (about half a core of 2 busy), so everything else uses the idle CPU instead of running before or
# after them: nice 19 yields the CPU to the tests whenever they want it, which the tests judged on
# latency need (the serial ones: a neighbour's CPU is a slowdown to them).
# Exits non-zero when a step fails. Each step prints its wall time when it ends, and the script
# ends with a table of all of them (also on failure), after the background half's own tables, so
# every CI log shows where time goes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/test_steps.sh
jobs=$(nproc)
background_pid=
background_log="$root/build/test_background.log"
# show_background_log prints what the background half wrote, once: CI keeps the log, not build/.
show_background_log() {
  printf '\n==== the background half (%s) ====\n' "$background_log"
  cat "$background_log" 2>/dev/null || true
  background_pid=
}
finish() {
  local rc=$?
  if [ -n "$background_pid" ]; then
    if kill -0 "$background_pid" 2>/dev/null; then
      # setsid made the background half a process group of its own: stop its builds and tests too.
      kill -TERM -- "-$background_pid" 2>/dev/null || true
      echo "test.sh: stopped the background half; its output so far follows" >&2
    fi
    show_background_log
  fi
  print_step_times "step times" "$rc"
}
# A stopped run (CI's timeout, ^C) still stops the background half and prints the table.
on_exit_or_stop finish

step "packages"
scripts/install-deps.sh

step "release build (what the integration tests run)"
# The integration tests are the longest step, so they start as soon as their executables and the
# binary are built; the unit tests and benchmarks (a quarter of a cold build's CPU) are built by
# the background half, in the same build dir, on the CPU the waiting integration tests leave idle.
release=$(scripts/build.sh release integration_tests)

mkdir -p "$(dirname "$background_log")"
# A non-interactive shell's background job is no group leader, so setsid runs in this very process
# ($! is the new group's id) instead of forking.
setsid nice -n 19 ionice -c 3 -t bash scripts/test_background.sh "$release" \
  > "$background_log" 2>&1 &
background_pid=$!

step "integration tests (release)"
# Integration tests bind ephemeral loopback ports, use private temp dirs and wait on events, so
# they run in parallel, one per core.
run_ctest --test-dir "$release" -L integration --output-on-failure -j"$jobs"

step "background half (scripts/test_background.sh, since the release build): waiting for it"
background_rc=0
wait "$background_pid" || background_rc=$?
show_background_log
[ "$background_rc" -eq 0 ] || { echo "test.sh: the background half failed (exit $background_rc); its output is above" >&2; exit 1; }

end_step
printf '\n==== all test steps passed ====\n'
