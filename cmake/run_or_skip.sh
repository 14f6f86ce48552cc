# Sourced by the course's test wrappers (bash): run a command once, keep what it said.
#
#   source cmake/run_or_skip.sh
#   run_or_skip [--quiet] <who> <command> [args...]
#
# Runs the command with stderr joined to stdout, prints its output (with --quiet, only when it
# skips: the caller shows it later), and leaves the output in $output and the exit status in
# $status. Exit 77 means the program found no usable GPU (or no tool it needs) and said why:
# the caller then ends with 77 too, which CTest reports as skipped.
# run_captured runs and prints the same way, without the skip, for a caller that expects 77.
run_captured() {
  output=$("$@" 2>&1)
  status=$?
  printf '%s\n' "$output"
}

run_or_skip() {
  local quiet=""
  [ "$1" = --quiet ] && quiet=1 && shift
  local who=$1
  shift
  if [ -n "$quiet" ]; then
    run_captured "$@" >/dev/null
  else
    run_captured "$@"
  fi
  if [ "$status" -eq 77 ]; then
    [ -n "$quiet" ] && printf '%s\n' "$output"
    echo "$who: skipped (exit 77: the reason is in the output above)"
    exit 77
  fi
}
