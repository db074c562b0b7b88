#!/usr/bin/env bash
# Configures and builds one flavour of inferscope into build/<flavour>; prints the build dir.
#   scripts/build.sh release [targets...]   Release, everything (default)
#   scripts/build.sh sanitize [targets...]  Debug + ASan/UBSan, no benchmarks
#   scripts/build.sh fuzz [targets...]      clang++ + libFuzzer targets only
#   scripts/build.sh tsan [targets...]      RelWithDebInfo + ThreadSanitizer (g++), no benchmarks
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-release}
shift || true
dir="$root/build/$flavour"
# ccache (the compiler launcher when installed) keys on compile commands; rewriting absolute paths
# under the checkout to relative ones lets a fresh clone elsewhere on the machine reuse the cache.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
case "$flavour" in
  release)  args=(-DCMAKE_BUILD_TYPE=Release) ;;
  sanitize) args=(-DCMAKE_BUILD_TYPE=Debug -DINFERSCOPE_SANITIZE=ON -DINFERSCOPE_BUILD_BENCH=OFF) ;;
  tsan)     args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERSCOPE_TSAN=ON -DINFERSCOPE_BUILD_BENCH=OFF) ;;
  fuzz)     args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERSCOPE_BUILD_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++) ;;
  *) echo "build.sh: unknown flavour '$flavour' (release, sanitize, tsan, fuzz)" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$dir" "${args[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$dir" -j"$(nproc)" "${targets[@]}" >&2
echo "$dir"
