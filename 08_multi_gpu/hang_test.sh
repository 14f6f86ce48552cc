#!/usr/bin/env bash
# A job in which one rank never comes must end by itself, fast, non-zero, naming that rank:
#
#   hang_test.sh <max seconds> <regex> <command> [args...]
#
# Passes if the command exits non-zero (77 is a skip), within <max seconds> of starting
# (start-up included), and its output matches <regex>.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 <max seconds> <regex> <command> [args...]" >&2
  exit 2
fi
limit=$1
pattern=$2
shift 2
source "$(dirname "$0")/../cmake/run_or_skip.sh"
start=$(date +%s%N)
run_or_skip hang_test "$@"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "hang_test: exit status $status after $elapsed_ms ms (limit $limit s)"
if [ "$status" -eq 0 ]; then
  echo "hang_test: FAILED, the job exited 0 although a rank never came"
  exit 1
fi
if [ "$elapsed_ms" -gt $((limit * 1000)) ]; then
  echo "hang_test: FAILED, the job took longer than ${limit} s to end"
  exit 1
fi
if ! printf '%s\n' "$output" | grep -q -E -- "$pattern"; then
  echo "hang_test: FAILED, output does not match: $pattern"
  exit 1
fi
echo "hang_test: passed"
