#!/usr/bin/env python3
"""Lists the tests CTest skipped in the last run, each with the reason its program gave.

CTest's own summary names skipped tests but not why; every course program says why in
its output (no GPU, no ncu, no PyTorch, ...). The default test preset writes CTest's
JUnit file, build/ctest-junit.xml, which holds each test's output.

Usage: scripts/skipped-tests.py [build-dir]     (default: build)
"""
import pathlib
import sys
import xml.etree.ElementTree as ET


# What a line that says why holds, most telling first: a program's own verdict ("No usable CUDA
# GPU: ...", "skipped: PyTorch sees no usable CUDA GPU") before a table row that merely names a
# missing tool ("nvidia-smi    not found or no GPU", a row of scripts/check_env.py's versions).
REASONS = (("no usable", "skipped:"), ("not found", "not installed", "no nvidia", "needs", "skipping"))


def reason(output):
    """The line of a skipped test's output that says why, else its last line."""
    lines = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    for words in REASONS:
        for line in lines:
            if any(word in line.lower() for word in words):
                return line
    return lines[-1] if lines else "(the test printed nothing)"


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    junit = build / "ctest-junit.xml"
    if not junit.exists():
        print(f"skipped-tests: {junit} not found: run the tests first (cmake --workflow --preset default)")
        return 2
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    skipped = [(case.get("name"), reason(case.findtext("system-out") or ""))
               for case in cases if case.get("status") == "notrun"]
    if not skipped:
        print("No test was skipped.")
        return 0
    width = max(len(name) for name, _ in skipped)
    total = len(cases)
    # CTest's "100% tests passed, 0 tests failed out of N" counts these among the N.
    print(f"{len(skipped)} of the {total} tests were skipped (CTest's 'tests passed' line counts "
          f"them among the {total}: they did not fail, and they did not run); why:")
    for name, why in skipped:
        print(f"  {name:<{width}}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
