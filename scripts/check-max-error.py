#!/usr/bin/env python3
"""Verifies a program that reports its check as one "Max error: X" line (chapter 01's add).

Chapter 01's first program prints no SUMMARY line (cmake/verify_output.sh's rule for every
later program): a first program should show its lesson, not the course's test plumbing. This
script reads what it does print. The program passes only if it exits 0 AND prints exactly one
line "Max error: 0": a NaN ("Max error: nan"), any other value, a missing line or a second one
fails, and so does an exit status that disagrees with the line. Exit 77 (no usable GPU) is
passed through, and CTest reports it as skipped.

With --summary NAME (the GPU check's record, scripts/results.py) the program's output is
followed by the SUMMARY line that the course's record reads: one exact check, and whether it
failed. Without it, a verdict line follows instead.

Usage: scripts/check-max-error.py [--summary NAME] PROGRAM [ARGS...]
Exit status: 0 passed; 1 failed; 77 skipped (the program found no usable GPU).
"""
import json
import re
import subprocess
import sys

SKIPPED = 77
MAX_ERROR = re.compile(r"^Max error: (\S+)")


def verdict(status, output):
    """None if the run passed, else what was wrong."""
    values = [m.group(1) for m in map(MAX_ERROR.match, output.splitlines()) if m]
    if len(values) != 1:
        return f"expected one 'Max error:' line, found {len(values)}"
    if values[0] != "0":
        return f"Max error: {values[0]}, not 0"
    if status != 0:
        return f"Max error: 0 but exit status {status}"
    return None


def main(argv):
    summary = None
    if argv[:1] == ["--summary"]:
        if len(argv) < 3:
            print(__doc__, file=sys.stderr)
            return 2
        summary, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode == SKIPPED:
        print("check-max-error: skipped (exit 77: the reason is in the output above)")
        return SKIPPED
    problem = verdict(run.returncode, run.stdout)
    if problem:
        print(f"check-max-error: FAILED, {problem}")
    elif not summary:
        print("check-max-error: passed (exit 0, Max error: 0)")
    if summary:  # last, like every program's own SUMMARY line
        print("SUMMARY " + json.dumps({"program": summary, "checks": 1, "failed": int(problem is not None),
                                       "exact": 1, "goals": [], "figures": {}}, separators=(",", ":")))
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
