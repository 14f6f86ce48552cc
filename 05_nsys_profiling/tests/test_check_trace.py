#!/usr/bin/env python3
"""Host test of check_trace.py: when may a trace lack unified-memory migrations?

Only when the program said, with a reason, that CUPTI would not trace them; and
then the trace must hold none. Everything else is checked as strictly either way.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

CHECK = pathlib.Path(__file__).with_name("check_trace.py")
UNTRACED = "Unified-memory migrations are not traced: cuptiActivityEnable(...) failed: CUPTI_ERROR_X\n"


def event(name, cat, **args):
    return {"ph": "X", "name": name, "cat": cat, "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0, "args": args}


KERNEL = event("add(int, float const*, float*)", "kernel", detail="<<<1, 1>>>")
TO_DEVICE = event("[CUDA memcpy Unified Host-to-Device]", "unified_memory", detail="on demand (page fault)",
                  bytes=65536)
TO_HOST = event("[CUDA memcpy Unified Device-to-Host]", "unified_memory", detail="on demand (page fault)",
                bytes=4096)


def run(events, output, folder):
    trace = folder / "trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    log = folder / "output.log"
    log.write_text(output)
    command = [sys.executable, str(CHECK), str(trace), "--kernel", "add(", "--migrations",
               "--program-output", str(log)]
    return subprocess.run(command, capture_output=True, text=True).returncode


def main():
    cases = [  # (what, events, program output, expected exit code)
        ("migrations both ways, traced", [KERNEL, TO_DEVICE, TO_HOST], "Max error: 0\n", 0),
        ("no migrations, no reason given", [KERNEL], "Max error: 0\n", 1),
        ("one direction only", [KERNEL, TO_DEVICE], "Max error: 0\n", 1),
        ("a migration of 0 bytes", [KERNEL, TO_DEVICE, dict(TO_HOST, args={"bytes": 0})], "", 1),
        ("no migrations, the program said why", [KERNEL], "Max error: 0\n" + UNTRACED, 0),
        ("said untraced, yet migrations", [KERNEL, TO_DEVICE, TO_HOST], UNTRACED, 1),
        ("said untraced, but no reason", [KERNEL], "Unified-memory migrations are not traced: \n", 1),
        ("said untraced, kernels still checked", [], UNTRACED, 1),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        for what, events, output, expected in cases:
            got = run(events, output, pathlib.Path(folder))
            ok = got == expected
            failures += not ok
            print(f"{'ok' if ok else 'FAILED'}: {what}: exit {got}, expected {expected}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
