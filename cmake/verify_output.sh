#!/usr/bin/env bash
# The course's verification rule, used by every chapter's CTest test:
# run the program; pass only if it exits 0 and prints at least one
# "Max error:" line, every one of which reads exactly 0.
# Exit 77 (no usable GPU) is passed through, and CTest reports it as skipped.
set -u
if [ $# -eq 0 ]; then
  echo "usage: $0 <program> [args...]" >&2
  exit 2
fi

output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"

if [ "$status" -eq 77 ]; then
  echo "verify: skipped (the program found no usable GPU)"
  exit 77
fi
if [ "$status" -ne 0 ]; then
  echo "verify: FAILED, the program exited with status $status"
  exit 1
fi

reports=$(printf '%s\n' "$output" | grep 'Max error:')
if [ -z "$reports" ]; then
  echo "verify: FAILED, the program printed no 'Max error:' line"
  exit 1
fi
# "Max error: 0" must be followed by white space or the end of the line:
# "Max error: 0.5" and "Max error: 0e-3" are not zero.
not_zero=$(printf '%s\n' "$reports" | grep -v -E 'Max error: 0([[:space:]]|$)')
if [ -n "$not_zero" ]; then
  echo "verify: FAILED, these results are not exact:"
  printf '%s\n' "$not_zero"
  exit 1
fi
echo "verify: passed ($(printf '%s\n' "$reports" | wc -l) exact checks, all 0)"
