#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then configures, builds and runs a consumer
# project that finds the library with find_package(inferscope). Usage: <build-dir> <source-dir>
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/tests/install/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" -j2 >/dev/null
"$work/build/consumer"
