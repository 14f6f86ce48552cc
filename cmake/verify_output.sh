#!/usr/bin/env bash
# The course's verification rule, used by every chapter's CTest test:
# run the program; its exit code is the verdict (0: every check passed).
# The program's last line, "SUMMARY {...}", must agree: at least one check ran
# and none failed, so a program that checks nothing cannot pass.
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
  echo "verify: skipped: the program found no usable GPU (its message is above)"
  exit 77
fi
if [ "$status" -ne 0 ]; then
  echo "verify: FAILED, the program exited with status $status"
  exit 1
fi

summary=$(printf '%s\n' "$output" | grep '^SUMMARY {' | tail -n 1)
if [ -z "$summary" ]; then
  echo "verify: FAILED, the program printed no SUMMARY line"
  exit 1
fi
checks=$(printf '%s\n' "$summary" | sed -n 's/.*"checks":\([0-9][0-9]*\).*/\1/p')
failed=$(printf '%s\n' "$summary" | sed -n 's/.*"failed":\([0-9][0-9]*\).*/\1/p')
if [ -z "$checks" ] || [ "$checks" -eq 0 ]; then
  echo "verify: FAILED, the program checked nothing"
  exit 1
fi
if [ "$failed" != 0 ]; then
  echo "verify: FAILED, exit status 0 but the summary counts $failed failed checks"
  exit 1
fi
echo "verify: passed ($checks checks)"
