# Sourced by the course's test wrappers (bash): run a command once, keep what it said.
#
#   source cmake/run_or_skip.sh
#   run_or_skip <who> <command> [args...]
#
# Runs the command with stderr joined to stdout, prints its output, and leaves the output in
# $output and the exit status in $status. Exit 77 means the program found no usable GPU (or
# no tool it needs) and said so: the caller ends with 77 too, which CTest reports as skipped.
# run_captured does the same without the skip, for a caller that expects 77.
run_captured() {
  output=$("$@" 2>&1)
  status=$?
  printf '%s\n' "$output"
}

run_or_skip() {
  local who=$1
  shift
  run_captured "$@"
  if [ "$status" -eq 77 ]; then
    echo "$who: skipped (exit 77: the reason is in the output above)"
    exit 77
  fi
}
