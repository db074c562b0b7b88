# Sourced by scripts/test.sh, test_background.sh and test_sanitizers.sh: named steps that print
# their wall time when they end, a table of every step and the total at exit (also on failure),
# and run_ctest.
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
# print_step_times TITLE EXIT_CODE: the table, headed by TITLE.
print_step_times() {
  local title=$1 rc=$2 i
  end_step
  printf '\n==== %s ====\n' "$title"
  for i in "${!step_seconds[@]}"; do
    printf '%6d s  %s\n' "${step_seconds[$i]}" "${step_names[$i]}"
  done
  printf '%6d s  total (exit %d)\n' "$((SECONDS - script_started))" "$rc"
}

# on_exit_or_stop COMMAND: runs COMMAND at exit, also when the script is stopped (TERM exits 143,
# INT 130, so COMMAND sees the status of a stopped run, not the last step's).
on_exit_or_stop() {
  trap "$1" EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
}

# run_ctest runs one ctest selection and fails on a skipped test as on a failed one: ctest counts a
# skip as passing, and a test skips only when a peer program it needs is missing (install it).
run_ctest() {
  local log rc=0
  log=$(mktemp)
  ctest "$@" 2>&1 | tee "$log" || rc=$?
  if grep -q '(Skipped)' "$log"; then
    echo "ctest skipped tests, which count as passes; install what they need (scripts/install-deps.sh):" >&2
    grep '(Skipped)' "$log" >&2
    rc=1
  fi
  rm -f "$log"
  return "$rc"
}
