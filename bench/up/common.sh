# Sourced by bench/up/*.sh: a scratch directory and the processes started there, both gone when
# the script exits (even on failure). Usage: source "$(dirname "$0")/common.sh"; bench_workdir NAME;
# then `something & pids+=($!)`.
bench_workdir() {
  work=$(mktemp -d "/tmp/inferscope-$1-XXXXXX")
  pids=()
  trap bench_cleanup EXIT
}
bench_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
