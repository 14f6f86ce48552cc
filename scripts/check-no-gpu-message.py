#!/usr/bin/env python3
"""Checks that every program says the same thing where there is no GPU, and so do the READMEs.

Runs each program with no arguments. On a machine without a usable GPU each must exit 77
and print the same "No usable CUDA GPU: ..." line, and each Markdown page given with --page
must quote that line word for word. On a machine with a GPU the programs run instead, and
there is nothing to compare: exit 77 (CTest: skipped).

Usage: scripts/check-no-gpu-message.py PROGRAM... [--page README.md]...
"""
import argparse
import pathlib
import subprocess
import sys

SKIPPED = 77


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="+")
    parser.add_argument("--page", action="append", default=[], type=pathlib.Path)
    args = parser.parse_args()

    lines = {}
    for program in args.programs:
        run = subprocess.run([program], capture_output=True, text=True, timeout=120)
        if run.returncode != SKIPPED:
            print(f"{program} exited {run.returncode}, not 77: a GPU is here, nothing to compare")
            return SKIPPED
        first = next((l for l in run.stderr.splitlines() if l.startswith("No usable CUDA GPU")), None)
        if first is None:
            print(f"{program} exited 77 without a 'No usable CUDA GPU' line:\n{run.stderr}")
            return 1
        lines[program] = first

    ok = len(set(lines.values())) == 1
    for program, line in lines.items():
        print(f"{pathlib.Path(program).name}: {line}")
    if not ok:
        print("FAILED: the programs say different things")
    expected = next(iter(lines.values()))
    for page in args.page:
        if expected not in page.read_text(encoding="utf-8"):
            print(f"FAILED: {page} does not quote the line the programs print")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
