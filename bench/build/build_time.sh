#!/usr/bin/env bash
# Times inferscope's build the way a new contributor and CI meet it: a fresh clone of one revision,
# an empty private ccache, this machine's cores. Steps:
#   0. full   (FULL=1 only) the whole `scripts/test.sh` in the clone, which has no ../shared beside
#             it, with the empty ccache: as CI and a new contributor run it (test.sh builds what the
#             integration tests run, then the rest beside them, so a cold test.sh is not a cold build
#             plus a test.sh after it); its own step-time table is appended to the report. Then the
#             clone's build dirs and the ccache are emptied again for step 1;
#   1. cold   `scripts/build.sh release` (configure + every target);
#   2. touch  one .cpp under src/doctor/ changed (a declaration appended), release rebuilt.
# Usage: bench/build/build_time.sh [REV] (default HEAD); OUT=FILE (default build-time.txt) gets
# the report (and FILE.ninja_log, the cold build's per-step times; with FULL=1, FILE.test.log,
# the test run's whole output). Wall seconds and the CPU seconds
# of the step's processes (user + system) per step.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rev=${1:-HEAD}
out=${OUT:-$PWD/build-time.txt}
commit=$(git -C "$root" rev-parse --verify "$rev^{commit}")
work=$(mktemp -d /tmp/inferscope-build-time.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The clone sits one level down so that nothing named ../shared is beside it.
git clone -q --no-checkout "$root" "$work/clone"
git -C "$work/clone" checkout -q "$commit"
export CCACHE_DIR="$work/ccache"
mkdir -p "$CCACHE_DIR"

report=()
# timed NAME COMMAND...: runs COMMAND in the clone and records its wall time and the CPU time
# (user + system) of its processes: the inner shell reads its children's cutime and cstime, fields
# 16 and 17 of /proc/<pid>/stat, in clock ticks. The step's output goes to $work/step<N>.log.
timed() {
  local name=$1; shift
  local wall0=$SECONDS rc=0 cpu
  last_log="$work/step${#report[@]}.log"
  cpu=$(bash -c 'log=$1 dir=$2; shift 2; cd "$dir"; "$@" >"$log" 2>&1; rc=$?
                 awk -v t="$(getconf CLK_TCK)" "{ printf \"%.0f\", (\$16 + \$17) / t }" /proc/$$/stat; exit $rc' \
        timed "$last_log" "$work/clone" "$@") || rc=$?
  report+=("$(printf '%-58s %6d s wall %7s s CPU  exit %d' "$name" "$((SECONDS - wall0))" "$cpu" "$rc")")
  echo "${report[-1]}" >&2
  return "$rc"
}

{
  echo "inferscope build times: $(git -C "$root" log -1 --format='%h %s' "$commit")"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load before: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M UTC')"
} > "$out"
status=0
if [ "${FULL:-0}" = 1 ]; then
  timed "cold scripts/test.sh (fresh clone, empty ccache, no ../shared)" scripts/test.sh || status=$?
  # The whole log too: ctest's per-test seconds show which tests the integration step waits on.
  cp "$last_log" "$out.test.log"
  test_table=$(sed -n '/^==== step times ====$/,$p' "$last_log" | tail -n +2)
  rm -rf "$work/clone/build" "$CCACHE_DIR"
  mkdir -p "$CCACHE_DIR"
fi
if [ "$status" -eq 0 ]; then
  timed "cold scripts/build.sh release (empty ccache)" scripts/build.sh release || status=$?
fi
# Ninja's log of the cold build (start and end ms of every step) shows where the time went.
if [ -f "$work/clone/build/release/.ninja_log" ]; then
  cp "$work/clone/build/release/.ninja_log" "$out.ninja_log"
fi
if [ "$status" -eq 0 ]; then
  touched=$(cd "$work/clone" && ls src/doctor/*.cpp | head -n 1)
  # A real edit: an appended comment leaves the preprocessed text unchanged, and ccache would
  # answer it from the cache; a static_assert changes what the compiler sees.
  echo 'static_assert(sizeof(int) > 0, "build_time.sh: touched");' >> "$work/clone/$touched"
  timed "rebuild after touching $touched" scripts/build.sh release || status=$?
fi
printf '%s\n' "${report[@]}" >> "$out"
if [ -n "${test_table:-}" ]; then
  echo "scripts/test.sh's own step table:" >> "$out"
  echo "$test_table" >> "$out"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out"
if [ "$status" -ne 0 ]; then
  { echo "build_time.sh: a step failed (exit $status); the end of its log:"; tail -n 40 "$last_log"; } >> "$out"
fi
cat "$out"
exit "$status"
