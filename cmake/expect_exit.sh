#!/usr/bin/env bash
# Runs a command that is meant to fail in a particular way: passes only if it
# exits with <status> and its output (stdout and stderr) matches <regex>.
# Used for bad-input tests: a negative size must be refused with exit 2 and a
# message, never a crash.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 <status> <extended-regex> <program> [args...]" >&2
  exit 2
fi
expected=$1
pattern=$2
shift 2
source "$(dirname "$0")/run_or_skip.sh"
if [ "$expected" -eq 77 ]; then
  run_captured "$@"  # the refusal under test is the skip itself
else
  run_or_skip expect_exit "$@"
fi
if [ "$status" -ne "$expected" ]; then
  echo "expect_exit: FAILED, exit status $status, expected $expected"
  exit 1
fi
if ! printf '%s\n' "$output" | grep -q -E -- "$pattern"; then
  echo "expect_exit: FAILED, output does not match: $pattern"
  exit 1
fi
echo "expect_exit: passed (status $status, output matches)"
