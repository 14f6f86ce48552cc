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
source "$(dirname "$0")/run_or_skip.sh"
run_or_skip verify "$@"
if [ "$status" -ne 0 ]; then
  echo "verify: FAILED, the program exited with status $status"
  exit 1
fi

# The SUMMARY line is JSON: read it as JSON.
printf '%s\n' "$output" | python3 -c '
import json, sys
lines = [line for line in sys.stdin if line.startswith("SUMMARY {")]
if not lines:
    sys.exit("verify: FAILED, the program printed no SUMMARY line")
summary = json.loads(lines[-1][len("SUMMARY "):])
checks, failed = summary.get("checks", 0), summary.get("failed")
if not checks:
    sys.exit("verify: FAILED, the program checked nothing")
if failed != 0:
    sys.exit(f"verify: FAILED, exit status 0 but the summary counts {failed} failed checks")
print(f"verify: passed ({checks} checks)")
' 2>&1
