#!/usr/bin/env python3
"""Three clocks on the same kernel: CUDA events, the chapter's CUPTI tracer and nsys.

    three_tools.py --nsys NSYS --program build/.../05_tracer_check --workdir DIR

05_tracer_check launches seven spin kernels of about 1 ms (a fixed count of SM cycles), each
between its own pair of CUDA events. CUPTI serves one client per process, so the tracer and nsys
cannot watch the same process (started under nsys, the tracer takes the records nsys needs):
  run 1, under `nsys profile -t cuda,nvtx`: `05_tracer_check --events-only`, CUDA events and nsys
         on the same seven launches (nsys's times from its report, exported to SQLite);
  run 2, right after, without nsys: `05_tracer_check`, CUDA events and the tracer.
What must hold, for launches 2 to 7 (the first launch's event pair also holds one-time setup):
  - run 1's CUDA events and nsys within 10 us + 2%, launch by launch: an event pair also holds
    the gap between two kernels (tracer_check holds the tracer to the same rule);
  - the tracer's median kernel (run 2) and nsys's (run 1) within 1 us + 0.1%: both read CUPTI's
    GPU timestamps of a kernel of a fixed cycle count.
And each must see exactly seven launches. Exit 0 when all hold, 1 when one does not, 77
(skipped) without nsys, without a GPU, where CUPTI cannot trace, or where nsys is older than the
program's CUDA runtime and says so ("Unknown runtime API function index": nsys 2022.4 on a CUDA
12 or 13 program; a CUDA 11.8 build is within its reach).
"""

import argparse
import ctypes
import csv
import json
import re
import shutil
import statistics
import sqlite3
import subprocess
import sys
from pathlib import Path

LAUNCHES = 7
KERNEL = "spin(long long)"


def cupti_agrees(tracer_ms: float, nsys_ms: float) -> bool:
    return abs(tracer_ms - nsys_ms) <= 0.001 + 0.001 * nsys_ms


def events_agree(events_ms: float, nsys_ms: float) -> bool:
    return abs(events_ms - nsys_ms) <= 0.010 + 0.02 * nsys_ms


def skip(why: str) -> None:
    print(f"three_tools: {why}; skipping (exit code 77).")
    sys.exit(77)


def gpu_count() -> int:
    """CUDA devices the driver sees; 0 without a driver. Asked before nsys runs: without a GPU,
    nsys 2022.4 was seen to wait forever for the program it had started, long after it exited."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def run(command: list) -> subprocess.CompletedProcess:
    print("$ " + " ".join(str(c) for c in command), flush=True)
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300)
    except subprocess.TimeoutExpired:
        print("three_tools: FAILED, no answer in 300 s")
        sys.exit(1)
    # nsys draws progress bars with carriage returns: keep the lines a reader wants.
    lines = done.stdout.replace("\r", "\n").splitlines()
    print("\n".join(line for line in lines if not (line.startswith("[") and "%" in line)), flush=True)
    return done


def nsys_kernel_ms(database: Path):
    """Durations (ms) of the spin kernels in nsys's SQLite export, in launch order; None when
    the export has no kernel table."""
    with sqlite3.connect(database) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
            return None  # nsys kept no kernel table at all
        rows = db.execute(
            "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
            "JOIN StringIds AS s ON s.id = k.demangledName WHERE s.value = ? ORDER BY k.start",
            (KERNEL,)).fetchall()
    return [ns * 1e-6 for (ns,) in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nsys", default="nsys")
    parser.add_argument("--program", required=True, help="path to 05_tracer_check")
    parser.add_argument("--workdir", required=True, help="where the report and the times go")
    args = parser.parse_args()

    nsys = shutil.which(args.nsys)
    fetched = Path(__file__).resolve().parent.parent.parent / ".nsys" / "bin" / "nsys"
    if nsys is None and args.nsys == "nsys" and fetched.exists():
        nsys = str(fetched)  # scripts/fetch-nsys.sh unpacked one after the build was configured
    if nsys is None:
        skip(f"nsys is not installed (looked for '{args.nsys}'; scripts/fetch-nsys.sh unpacks it)")
    if gpu_count() == 0:
        skip("no usable CUDA GPU (the driver reports none)")
    version = subprocess.run([nsys, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f"three_tools: {version}, on {args.program}", flush=True)
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    report, database = work / "three_tools", work / "three_tools.sqlite"
    under_nsys, alone = work / "under_nsys.csv", work / "tracer.csv"
    for stale in (under_nsys, alone, database, report.with_suffix(".nsys-rep")):
        stale.unlink(missing_ok=True)  # what an earlier run left must not pass for this one

    # Run 1. --stats=true: nsys's own tables go into the output beside ours. With nvtx traced too,
    # nsys 2022.4 prints why it could not read a trace; with -t cuda alone it was seen to stay silent.
    done = run([nsys, "profile", "-t", "cuda,nvtx", "--stats=true", "--force-overwrite=true", "-o", report,
                args.program, "--events-only", "--times", under_nsys])
    if done.returncode == 77:
        skip("the program found no usable GPU (its output above)")
    if done.returncode != 0 or not under_nsys.exists():
        print(f"three_tools: FAILED, 05_tracer_check under nsys exited with status {done.returncode}")
        return 1
    exported = run([nsys, "export", "--type", "sqlite", "--force-overwrite=true", "-o", database,
                    report.with_suffix(".nsys-rep")])
    if exported.returncode != 0 or not database.exists():
        print("three_tools: FAILED, nsys could not export its report to SQLite")
        return 1
    by_nsys = nsys_kernel_ms(database)
    # nsys stops reading a trace at the first CUDA runtime call it has no name for (an nsys
    # older than the program's CUDA): a limit of that nsys, not a disagreement.
    unknown = re.search(r"Unknown runtime API function index: \d+", done.stdout)
    if by_nsys is None or (unknown and len(by_nsys) < LAUNCHES):
        skip(f"{version} could not read the program's CUDA trace "
             f"({unknown.group(0) if unknown else 'its report holds no kernel table'}): an nsys older "
             "than the program's CUDA runtime does this")
    # Run 2: the tracer, alone.
    traced = run([args.program, "--times", alone])
    if traced.returncode == 77:
        skip("CUPTI cannot trace here (05_tracer_check's output above)")
    if traced.returncode != 0 or not alone.exists():
        print(f"three_tools: FAILED, 05_tracer_check exited with status {traced.returncode}")
        return 1
    with open(under_nsys) as f:
        events = [float(row["events_ms"]) for row in csv.DictReader(f)]
    with open(alone) as f:
        tracer = [float(row["cupti_ms"]) for row in csv.DictReader(f)]

    checks, failed = 0, 0

    def check(what: str, ok: bool) -> None:
        nonlocal checks, failed
        checks += 1
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}: {what}")

    print()
    check(f"{LAUNCHES} launches: {len(events)} event pairs and {len(by_nsys)} nsys records of {KERNEL} "
          f"(run 1), {len(tracer)} tracer records (run 2)",
          len(events) == len(tracer) == len(by_nsys) == LAUNCHES)
    if failed:
        return 1
    largest_events_us = 0.0
    print("\n| Launch | CUDA events (run 1) | nsys (run 1) | Events - nsys | CUPTI tracer (run 2) | Compared |")
    print("|--------|---------------------|--------------|---------------|----------------------|----------|")
    for i in range(LAUNCHES):
        events_us = (events[i] - by_nsys[i]) * 1e3
        print(f"| {i + 1} | {events[i]:.4f} ms | {by_nsys[i]:.4f} ms | {events_us:+.1f} us | {tracer[i]:.4f} ms | "
              f"{'yes' if i > 0 else 'no (first launch)'} |")
    print()
    for i in range(1, LAUNCHES):
        largest_events_us = max(largest_events_us, abs(events[i] - by_nsys[i]) * 1e3)
        check(f"launch {i + 1}: events {events[i]:.4f} ms vs nsys {by_nsys[i]:.4f} ms, within 10 us + 2%",
              events_agree(events[i], by_nsys[i]))
    tracer_ms, nsys_ms = statistics.median(tracer[1:]), statistics.median(by_nsys[1:])
    tracer_us = (tracer_ms - nsys_ms) * 1e3
    check(f"median kernel, launches 2-{LAUNCHES}: tracer {tracer_ms:.6f} ms vs nsys {nsys_ms:.6f} ms, "
          "within 1 us + 0.1%", cupti_agrees(tracer_ms, nsys_ms))
    verdict = "all agree" if failed == 0 else f"{failed} of {checks} checks FAILED"
    print(f"three_tools: {verdict}. Launches 2-{LAUNCHES}: CUDA events and nsys at most "
          f"{largest_events_us:.1f} us apart; the tracer's median kernel {tracer_us:+.3f} us from nsys's.")
    summary = {"program": "05_three_tools", "checks": checks, "failed": failed, "exact": 0, "goals": [],
               "figures": {"tracer_nsys_us": round(abs(tracer_us), 3),
                           "events_nsys_us": round(largest_events_us, 1),
                           "kernel_ms": round(nsys_ms, 4)}}
    print("SUMMARY " + json.dumps(summary, separators=(",", ":")))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
