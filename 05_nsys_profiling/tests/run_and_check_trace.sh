#!/usr/bin/env bash
# Runs a command that writes a Chrome trace, then checks the trace.
#   run_and_check_trace.sh <trace.json> <check_trace.py options...> -- <command...>
# What the command prints is shown and kept in <trace.json>.log, which
# check_trace.py reads (--program-output) for what the program said it traced.
# Exit 77 from the command (no usable GPU) is passed on, so CTest reports *skipped*.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 <trace.json> <check_trace.py options...> -- <command...>" >&2
  exit 2
fi
trace=$1
shift
checks=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  checks+=("$1")
  shift
done
shift  # the "--"

log=$trace.log
rm -f "$trace" "$log"  # files left by an earlier run must not pass for this one
source "$(dirname "$0")/../../cmake/run_or_skip.sh"
run_or_skip run_and_check_trace "$@"  # exit 77 (no usable GPU): skipped
printf '%s\n' "$output" >"$log"
if [ "$status" -ne 0 ]; then
  echo "run_and_check_trace: FAILED, the command exited with status $status"
  exit 1
fi
python3 "$(dirname "$0")/check_trace.py" "$trace" --program-output "$log" "${checks[@]}"
