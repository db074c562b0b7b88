#!/usr/bin/env bash
# The background half of scripts/test.sh, which starts it at the lowest CPU and I/O priority once
# what the integration tests run is built, beside the integration tests (which it must not slow: nice 19 hands
# them the CPU whenever they want it):
#   1. the rest of the release build (test.sh built what the integration tests run): the unit
#      tests and the micro-benchmarks,
#   2. the release build's unit tests (no timing in them, so the low priority costs them nothing),
#   3. scripts/test_sanitizers.sh: the ASan/UBSan and TSan builds and tests, and the fuzzers,
#   4. each micro-benchmark once, briefly, to prove it runs and prints its figures (a smoke run:
#      its numbers mean nothing at this priority; bench/ measures).
# Usage: scripts/test_background.sh RELEASE_BUILD_DIR. Exits non-zero on the first failing step,
# after printing its own step table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
release=${1:?usage: scripts/test_background.sh RELEASE_BUILD_DIR}
cd "$root"
source scripts/test_steps.sh
jobs=$(nproc)
on_exit_or_stop 'print_step_times "background step times" $?'

step "release build (the rest: unit tests, benchmarks)"
built=$(scripts/build.sh release)
[ "$built" = "$release" ] || { echo "test_background.sh: scripts/build.sh built $built, not $release" >&2; exit 1; }

step "unit tests (release)"
run_ctest --test-dir "$release" -L unit --output-on-failure -j"$jobs"

step "sanitizer half (scripts/test_sanitizers.sh)"
bash scripts/test_sanitizers.sh

step "benchmark smoke run"
ran=0
for bench in "$release"/bench/*/*_bench; do
  [ -x "$bench" ] || continue
  "$bench" --benchmark_min_time=0.01 >/dev/null
  echo "ran $(basename "$bench")"
  ran=$((ran + 1))
done
# No benchmark found is a broken build or layout, not a passed smoke run.
[ "$ran" -gt 0 ] || { echo "test_background.sh: no benchmark executable under $release/bench" >&2; exit 1; }
end_step
