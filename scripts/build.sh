#!/usr/bin/env bash
# Configures and builds one flavour of inferscope into build/<flavour>; prints the build dir.
#   scripts/build.sh release [targets...]   Release, everything (default)
#   scripts/build.sh sanitize [targets...]  clang++, ASan + UBSan, libFuzzer targets, no benchmarks
#   scripts/build.sh fuzz [targets...]      the same build as sanitize (build/sanitize)
#   scripts/build.sh tsan [targets...]      RelWithDebInfo + ThreadSanitizer (g++), no benchmarks
# The sanitizer unit tests and the fuzz targets share one clang build: both want ASan + UBSan, and
# one build of the parts they link instead of two saves CI a third of its sanitizer time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-release}
shift || true
[ "$flavour" = fuzz ] && flavour=sanitize
dir="$root/build/$flavour"
# ccache (the compiler launcher when installed) keys on compile commands; rewriting absolute paths
# under the checkout to relative ones lets a fresh clone elsewhere on the machine reuse the cache.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
case "$flavour" in
  release)  args=(-DCMAKE_BUILD_TYPE=Release) ;;
  # -O0: this build runs beside the integration tests, and its compiles are most of the CPU a cold
  # test.sh spends; under clang ASan a unity batch compiles in 40 % less CPU than at -O1 (src/gateway
  # 50 -> 31 s, the serve unit tests 15 -> 9 s), while the unit tests it runs are short and the
  # fuzzers run for a fixed time. simdjson would turn its development checks on without
  # __OPTIMIZE__; they stay off as in release, so the JSON code is tested as it ships. Line tables
  # are all a sanitizer report reads. Unity batches like release: one TU per file cost this build a
  # third more CPU (src/gateway at -O1: 334 s of CPU as 12 TUs, 229 s as one batch).
  sanitize) args=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -gline-tables-only -DSIMDJSON_DEVELOPMENT_CHECKS=0"
                  -DCMAKE_CXX_COMPILER=clang++ -DINFERSCOPE_BUILD_FUZZ=ON -DINFERSCOPE_BUILD_BENCH=OFF
                  -DINFERSCOPE_UNITY_BUILD=ON) ;;
  # -g1: line tables for TSan's reports, not the full debug info nothing here reads. One TU per file
  # (it compiles only the metrics core, the timeline and the engine, a few minutes of CPU), so a
  # source of those parts that leans on a batch sibling's includes still fails somewhere.
  tsan)     args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
                  -DINFERSCOPE_TSAN=ON -DINFERSCOPE_BUILD_BENCH=OFF -DINFERSCOPE_UNITY_BUILD=OFF) ;;
  *) echo "build.sh: unknown flavour '$flavour' (release, sanitize, tsan, fuzz)" >&2; exit 2 ;;
esac
# A build dir configured before the sanitize flavour moved to clang keeps its old compiler in the
# cache; start it over rather than mix the two.
if [ "$flavour" = sanitize ] && [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$dir/CMakeCache.txt"; then
  rm -rf "$dir"
fi
# Ninja when installed (it schedules the ~500 compile and link steps better than make), but never
# switch the generator of a build dir that exists.
if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
  args+=(-G Ninja)
fi
cmake -S "$root" -B "$dir" "${args[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$dir" -j"$(nproc)" "${targets[@]}" >&2
echo "$dir"
