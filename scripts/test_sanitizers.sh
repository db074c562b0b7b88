#!/usr/bin/env bash
# The sanitizer steps of scripts/test.sh, whose background half (scripts/test_background.sh) runs
# them at the lowest CPU priority beside the integration tests; they run alone as well (packages
# installed):
#   1. the clang ASan + UBSan build of the unit tests and the fuzz targets, and the unit tests in it,
#   2. the ThreadSanitizer build of the threaded tests (metrics core, timeline, engine driver), run,
#   3. each libFuzzer target for FUZZ_SECONDS (default 10) over its corpus, one per core: a replay of
#      the corpus and a short search, which is what a test run affords (FUZZ_SECONDS=600 for a hunt).
# Exits non-zero on the first failing step, after printing its own step table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/test_steps.sh
fuzz_seconds=${FUZZ_SECONDS:-10}
jobs=$(nproc)
on_exit_or_stop 'print_step_times "sanitizer step times" $?'

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
[ "$fuzz_failed" -eq 0 ] || { echo "test_sanitizers.sh: a fuzz target failed" >&2; exit 1; }
end_step
