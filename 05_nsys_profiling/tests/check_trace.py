#!/usr/bin/env python3
"""Checks a Chrome trace written by the chapter's CUPTI tracer.

The file must parse as JSON, hold "traceEvents" whose complete ("X") events have
numeric ts, dur, pid and tid, and name what the program did: kernels starting
with --kernel (exactly --count of them, if given) and events named --name.
With --migrations it must also hold unified-memory migrations both ways, with
their bytes, unless the program's output (--program-output) says in so many
words that CUPTI would not trace them, and why: then the trace must hold none.
"""
import argparse
import json
import re
import sys

MIGRATIONS = ("[CUDA memcpy Unified Host-to-Device]", "[CUDA memcpy Unified Device-to-Host]")
# The line profile_add.cu prints when CUPTI refuses the unified-memory counters.
UNTRACED = re.compile(r"^Unified-memory migrations are not traced: (\S.*)$", re.M)


def check_migrations(complete, program_output):
    """Problems with the unified-memory events, and a note for the log."""
    untraced = UNTRACED.search(program_output) if program_output is not None else None
    migrations = [e for e in complete if e.get("cat") == "unified_memory"]
    if untraced:
        note = f"migrations not checked: the program says they are not traced: {untraced.group(1)}"
        if migrations:
            return [f"the program says migrations are not traced, yet the trace holds {len(migrations)}"], note
        return [], note
    problems = []
    for name in MIGRATIONS:
        found = [e for e in migrations if e["name"] == name]
        if not found:
            problems.append(f"no event named {name!r} (and the program did not say it could not trace them)")
        elif not all(isinstance(e.get("args", {}).get("bytes"), int) and e["args"]["bytes"] > 0 for e in found):
            problems.append(f"a {name!r} event without a positive byte count")
    causes = sorted({e.get("args", {}).get("detail", "?") for e in migrations})
    return problems, f"{len(migrations)} unified-memory events; migration causes: {', '.join(causes)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("trace", help="the JSON file")
    parser.add_argument("--kernel", required=True, help="kernel names start with this, e.g. 'add('")
    parser.add_argument("--count", type=int, help="exact number of such kernels (default: at least 1)")
    parser.add_argument("--name", action="append", default=[],
                        help="an event with exactly this name must be present (repeatable)")
    parser.add_argument("--migrations", action="store_true",
                        help="unified-memory migrations both ways must be present (see above)")
    parser.add_argument("--program-output", help="what the program printed, for --migrations")
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
    if args.migrations:
        program_output = None
        if args.program_output:
            with open(args.program_output, errors="replace") as f:
                program_output = f.read()
        found, note = check_migrations(complete, program_output)
        problems += found
        print(f"check_trace: {note}")
    for problem in problems:
        print(f"check_trace: FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
