#!/usr/bin/env bash
# Runs inferscope's whole test suite on a fresh Debian 12 machine (as root): installs packages,
# builds, then runs
#   1. every test (unit + integration) of the Release build,
#   2. the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer, and the threaded
#      ones (metrics core, timeline, engine driver) under ThreadSanitizer,
#   3. each libFuzzer target for a bounded time (FUZZ_SECONDS, default 20) over its corpus,
#   4. each micro-benchmark once, briefly, to prove it runs and prints its figures.
# Exits non-zero on the first failing step. Each step prints its wall time when it ends, and the
# script ends with a table of all of them (also on failure), so every CI log shows where time goes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fuzz_seconds=${FUZZ_SECONDS:-20}
jobs=$(nproc)
step_names=()
step_seconds=()
step_started=
script_started=$SECONDS
# end_step closes the running step: its wall time on one line, and in the table printed at exit.
end_step() {
  [ -n "$step_started" ] || return 0
  local took=$((SECONDS - step_started))
  step_seconds+=("$took")
  printf -- '---- %s: %d s\n' "${step_names[-1]}" "$took"
  step_started=
}
step() {
  end_step
  step_names+=("$*")
  step_started=$SECONDS
  printf '\n==== %s ====\n' "$*"
}
print_step_times() {
  local rc=$?
  end_step
  printf '\n==== step times ====\n'
  local i
  for i in "${!step_seconds[@]}"; do
    printf '%6d s  %s\n' "${step_seconds[$i]}" "${step_names[$i]}"
  done
  printf '%6d s  total (exit %d)\n' "$((SECONDS - script_started))" "$rc"
}
trap print_step_times EXIT

step "packages"
scripts/install-deps.sh

step "release build"
release=$(scripts/build.sh release)

# run_ctest runs one ctest selection and fails on a skipped test as on a failed one: ctest counts a
# skip as passing, and a test skips only when a peer program it needs is missing (install it).
run_ctest() {
  local log rc=0
  log=$(mktemp)
  ctest "$@" 2>&1 | tee "$log" || rc=$?
  if grep -q '(Skipped)' "$log"; then
    echo "test.sh: ctest skipped tests, which count as passes; install what they need (scripts/install-deps.sh):" >&2
    grep '(Skipped)' "$log" >&2
    rc=1
  fi
  rm -f "$log"
  return "$rc"
}

step "unit tests (release)"
run_ctest --test-dir "$release" -L unit --output-on-failure -j"$jobs"
step "integration tests (release)"
# Integration tests bind ephemeral loopback ports, use private temp dirs and wait on events, so
# they run in parallel like the unit tests.
run_ctest --test-dir "$release" -L integration --output-on-failure -j"$jobs"

step "sanitizer build (clang, ASan + UBSan: unit tests and fuzz targets)"
sanitize=$(scripts/build.sh sanitize unit_tests fuzzers)
step "unit tests (sanitizers)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest --test-dir "$sanitize" -L unit --output-on-failure -j"$jobs"

step "ThreadSanitizer build (metrics core, timeline, engine driver)"
tsan=$(scripts/build.sh tsan tsan_tests)
step "threaded tests (ThreadSanitizer)"
# setarch -R: TSan's shadow-memory layout fails under the high mmap randomisation of newer kernels.
while read -r test_binary; do
  [ -n "$test_binary" ] || continue
  echo "tsan: $(basename "$test_binary")"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 setarch "$(uname -m)" -R "$test_binary" --gtest_brief=1 </dev/null
done < "$tsan/tsan_tests.txt"

step "fuzzers (${fuzz_seconds}s each, ${jobs} at a time)"
fuzz=$sanitize
# fuzz_one TARGET: runs one libFuzzer target over a copy of its corpus; its output is printed
# whole when it ends, so the outputs of targets running side by side do not interleave.
fuzz_one() {
  local target="$1" name corpus rc=0
  name=$(basename "$target" _fuzz)
  corpus=$(mktemp -d)
  cp -r fuzz/corpus/"$name"/. "$corpus"/ 2>/dev/null || true
  (cd "$corpus" && "$target" -max_total_time="$fuzz_seconds" -print_final_stats=1 "$corpus" > "$corpus.log" 2>&1) || rc=$?
  { echo "fuzzing $name"; tail -n 12 "$corpus.log"; } 
  [ "$rc" -eq 0 ] || { echo "fuzzing $name failed (exit $rc):"; cat "$corpus.log"; } >&2
  rm -rf "$corpus" "$corpus.log"
  return "$rc"
}
# One target per core: each is single-threaded, so on a 2-core CI machine two at a time halve
# this step; a failing target fails the step once every started target has ended.
fuzz_failed=0
running=0
for target in "$fuzz"/fuzz/*_fuzz; do
  [ -x "$target" ] || continue
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || fuzz_failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || fuzz_failed=1
  running=$((running - 1))
done
[ "$fuzz_failed" -eq 0 ] || { echo "test.sh: a fuzz target failed" >&2; exit 1; }

step "benchmark smoke run"
for bench in "$release"/bench/*/*_bench; do
  [ -x "$bench" ] || continue
  "$bench" --benchmark_min_time=0.01 >/dev/null
  echo "ran $(basename "$bench")"
done

end_step
printf '\n==== all test steps passed ====\n'
