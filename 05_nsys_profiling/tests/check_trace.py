#!/usr/bin/env python3
"""Checks a Chrome trace written by the chapter's CUPTI tracer.

The file must parse as JSON, hold "traceEvents" whose complete ("X") events have
numeric ts, dur, pid and tid, and name what the program did: kernels starting
with --kernel (exactly --count of them, if given) and events named --name.
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("trace", help="the JSON file")
    parser.add_argument("--kernel", required=True, help="kernel names start with this, e.g. 'add('")
    parser.add_argument("--count", type=int, help="exact number of such kernels (default: at least 1)")
    parser.add_argument("--name", action="append", default=[],
                        help="an event with exactly this name must be present (repeatable)")
    args = parser.parse_args()

    with open(args.trace) as f:
        trace = json.load(f)  # raises, and so fails the test, on anything but valid JSON
    complete = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    problems = []
    for e in complete:
        if not all(isinstance(e.get(key), (int, float)) for key in ("ts", "dur", "pid", "tid")):
            problems.append(f"event without numeric ts/dur/pid/tid: {e}")
        elif e["dur"] < 0 or e["ts"] < 0:
            problems.append(f"event with negative time: {e}")

    kernels = [e for e in complete if e.get("cat") == "kernel" and e["name"].startswith(args.kernel)]
    if args.count is not None and len(kernels) != args.count:
        problems.append(f"{len(kernels)} kernels named {args.kernel}..., expected {args.count}")
    if args.count is None and not kernels:
        problems.append(f"no kernel named {args.kernel}...")
    names = {e["name"] for e in complete}
    problems += [f"no event named {name!r}" for name in args.name if name not in names]

    print(f"check_trace: {args.trace}: {len(complete)} events, {len(kernels)} kernels named "
          f"{args.kernel}..., {len(names)} distinct names")
    for problem in problems:
        print(f"check_trace: FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
