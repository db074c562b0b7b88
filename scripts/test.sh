#!/usr/bin/env bash
# Runs inferscope's whole test suite on a fresh Debian 12 machine (as root): installs packages,
# builds the release flavour, then runs two halves side by side:
#   - in the foreground, every test (unit + integration) of the Release build, then each
#     micro-benchmark once, briefly, to prove it runs and prints its figures;
#   - in the background at the lowest CPU and I/O priority, scripts/test_sanitizers.sh: the unit
#     tests under AddressSanitizer + UndefinedBehaviorSanitizer and the threaded ones under
#     ThreadSanitizer, each in its own build, then each libFuzzer target for FUZZ_SECONDS (10).
# The integration tests spend most of their time waiting on servers, Prometheus and alert windows
# (about half a core of 2 busy), so the sanitizer builds use the idle cores instead of running
# after them: nice 19 yields the CPU to the tests whenever they want it, which the tests judged on
# latency need (the serial ones: a neighbour's CPU is a slowdown to them).
# Exits non-zero when a step fails. Each step prints its wall time when it ends, and the script
# ends with a table of all of them (also on failure), after the sanitizer half's own table, so
# every CI log shows where time goes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/test_steps.sh
jobs=$(nproc)
sanitizer_pid=
sanitizer_log="$root/build/test_sanitizers.log"
finish() {
  local rc=$?
  if [ -n "$sanitizer_pid" ] && kill -0 "$sanitizer_pid" 2>/dev/null; then
    # setsid made the sanitizer half a process group of its own: stop its builds and tests too.
    kill -TERM -- "-$sanitizer_pid" 2>/dev/null || true
    echo "test.sh: stopped the sanitizer steps; their output so far is in $sanitizer_log" >&2
  fi
  print_step_times "step times" "$rc"
}
trap finish EXIT
# A stopped run (CI's timeout, ^C) still stops the sanitizer half and prints the table.
trap 'exit 143' TERM
trap 'exit 130' INT

step "packages"
scripts/install-deps.sh

step "release build"
release=$(scripts/build.sh release)

mkdir -p "$(dirname "$sanitizer_log")"
# A non-interactive shell's background job is no group leader, so setsid runs in this very process
# ($! is the new group's id) instead of forking.
setsid nice -n 19 ionice -c 3 -t bash scripts/test_sanitizers.sh \
  > "$sanitizer_log" 2>&1 &
sanitizer_pid=$!

step "unit tests (release)"
run_ctest --test-dir "$release" -L unit --output-on-failure -j"$jobs"
step "integration tests (release)"
# Integration tests bind ephemeral loopback ports, use private temp dirs and wait on events, so
# they run in parallel like the unit tests.
run_ctest --test-dir "$release" -L integration --output-on-failure -j"$jobs"

step "benchmark smoke run"
for bench in "$release"/bench/*/*_bench; do
  [ -x "$bench" ] || continue
  "$bench" --benchmark_min_time=0.01 >/dev/null
  echo "ran $(basename "$bench")"
done

step "sanitizer half (scripts/test_sanitizers.sh, since the release build): waiting for it"
sanitizer_rc=0
wait "$sanitizer_pid" || sanitizer_rc=$?
sanitizer_pid=
cat "$sanitizer_log"
[ "$sanitizer_rc" -eq 0 ] || { echo "test.sh: the sanitizer half failed (exit $sanitizer_rc); its output is above" >&2; exit 1; }

end_step
printf '\n==== all test steps passed ====\n'
