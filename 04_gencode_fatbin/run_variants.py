#!/usr/bin/env python3
"""Runs chapter 04's six builds with the environment each lesson needs.

    run_variants.py --bin-dir build/bin [--cuobjdump PATH] outputs
    run_variants.py --bin-dir build/bin [--cuobjdump PATH] jit-cost [--repeats 5]

With cuobjdump, each build is told what its binary embeds (--embeds, from
`cuobjdump --list-elf --list-ptx`), so it says which code the driver's rule picks
and checks that the driver ran that; without, it says what cudaFuncGetAttributes
alone tells.

`outputs` runs every build once and prints what it said: which code the driver
ran, and, with CUDA_FORCE_PTX_JIT=1, which builds still run.

`jit-cost` times how long the driver takes to load the kernels (the programs
print it) with machine code, with PTX and no JIT cache (CUDA_CACHE_DISABLE=1,
so every run compiles), and with PTX and a warm cache (a fresh CUDA_CACHE_PATH:
one untimed run fills it, the timed runs read it). Medians of --repeats runs,
as a Markdown table. A program cannot easily re-run itself in another
environment, hence this script. Exit status 1 if a build that must run did not.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

STARTUP = re.compile(r"^Startup \(CUDA context and main module\): ([0-9.]+) ms$", re.M)
LOAD = re.compile(r"^Kernel module load \((.*)\): ([0-9.]+) ms$", re.M)
DRIVER_RUNS = re.compile(r"^The driver runs: (.*)$", re.M)
GPU_RUNS = re.compile(r"^The GPU runs (sm_\d+) machine code, compiled from (compute_\d+) PTX", re.M)
LISTED = re.compile(r"sm_(\d+)\.(cubin|ptx)$", re.M)  # as check_embedded.sh reads cuobjdump
DEVICE = re.compile(r"^Device 0: (.*)$", re.M)
NO_GPU = re.compile(r"the driver reports no CUDA device|no NVIDIA driver found")


def embeds(cuobjdump, program):
    """The --embeds arguments for a build: its cubins and PTX as cuobjdump lists them ([] without it)."""
    if not cuobjdump:
        return []
    listing = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", program], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
    found = {("sm_" if kind == "cubin" else "compute_") + arch for arch, kind in LISTED.findall(listing)}
    in_order = sorted(found, key=lambda name: (name.startswith("compute_"), int(name.split("_")[1])))
    return ["--embeds", ",".join(in_order)] if in_order else []


def what_runs(text):
    """What the program said the driver runs, shortened for a table cell."""
    said = DRIVER_RUNS.search(text)
    if said:
        return said.group(1).split(" (")[0].replace(", JIT-compiled by the driver for", ", JIT for")
    machine_code, ptx = GPU_RUNS.search(text).groups()
    return f"{machine_code} from {ptx} PTX"


def run(program, env_changes, args=()):
    """Runs one build with the given environment changes (None removes a variable)."""
    env = dict(os.environ)
    for name in ("CUDA_FORCE_PTX_JIT", "CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "CUDA_MODULE_LOADING"):
        env.pop(name, None)  # start from the defaults, then set what this run is about
    env.update(env_changes)
    completed = subprocess.run([program, *args], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    return completed.returncode, completed.stdout


def shown_env(env_changes):
    """The settings a run is about, as a shell would take them (the private cache path left out)."""
    return " ".join(f"{k}={v}" for k, v in env_changes.items() if k != "CUDA_CACHE_PATH")


def outputs(bin_dir, cuobjdump):
    cases = [  # (build, environment, must it exit 0?)
        ("cubin_only", {}, True),
        ("ptx_only", {}, True),
        ("fatbin", {}, True),
        ("nvcc_default", {}, True),
        ("gencode_sm80", {}, None),  # runs only on a compute capability 8.x GPU
        ("gencode_sm80_ptx", {}, True),
        ("cubin_only", {"CUDA_FORCE_PTX_JIT": "1"}, False),
        ("ptx_only", {"CUDA_FORCE_PTX_JIT": "1"}, True),
        ("fatbin", {"CUDA_FORCE_PTX_JIT": "1"}, True),
    ]
    problems = []
    with tempfile.TemporaryDirectory(prefix="ch04-jit-cache-") as cache:
        for build, env, must_pass in cases:
            env = {"CUDA_CACHE_PATH": cache, **env}  # never the reader's own cache
            program = os.path.join(bin_dir, f"04_{build}")
            args = embeds(cuobjdump, program)
            status, text = run(program, env, args)
            print(f"$ {(shown_env(env) + ' ') if shown_env(env) else ''}04_{build} {' '.join(args)}".rstrip())
            print(text.rstrip())
            print(f"(exit status {status})\n")
            if NO_GPU.search(text):
                print("run_variants: no GPU here; nothing to show.")
                return 77
            if must_pass is True and status != 0 or must_pass is False and status == 0:
                problems.append(f"04_{build} {shown_env(env) or '(defaults)'}: exit status {status}")
    for problem in problems:
        print(f"run_variants: UNEXPECTED: {problem}")
    return 1 if problems else 0


def measure(program, env, repeats, args):
    """Median startup, module load and whole-run times of `repeats` runs, and what the driver ran."""
    startups, loads, walls = [], [], []
    ran, status, text = "", 0, ""
    for _ in range(repeats):
        begin = time.perf_counter()
        status, text = run(program, env, args)
        wall_ms = (time.perf_counter() - begin) * 1e3
        if status != 0:
            break
        startups.append(float(STARTUP.search(text).group(1)))
        loads.append(float(LOAD.search(text).group(2)))
        walls.append(wall_ms)
        ran = what_runs(text)
    if status != 0:
        return None, status, text
    return (statistics.median(startups), statistics.median(loads), statistics.median(walls), ran), status, text


def jit_cost(bin_dir, cuobjdump, repeats):
    size = ["--n", "4096"]  # small: the times here are about loading, not computing
    rows, failures, device, module = [], [], "", ""
    cold = {"CUDA_CACHE_DISABLE": "1"}
    cases = [  # (build, JIT cache, environment, fill the cache first?)
        ("cubin_only", "none (machine code)", cold, False),
        ("fatbin", "none (machine code)", cold, False),
        ("ptx_only", "cold: CUDA_CACHE_DISABLE=1", cold, False),
        ("ptx_only", "warm: CUDA_CACHE_PATH, filled", {}, True),
        ("nvcc_default", "cold: CUDA_CACHE_DISABLE=1", cold, False),
        ("nvcc_default", "warm: CUDA_CACHE_PATH, filled", {}, True),
        ("gencode_sm80_ptx", "cold: CUDA_CACHE_DISABLE=1", cold, False),
        ("fatbin", "cold, CUDA_FORCE_PTX_JIT=1", {**cold, "CUDA_FORCE_PTX_JIT": "1"}, False),
        ("ptx_only", "cold, CUDA_MODULE_LOADING=EAGER", {**cold, "CUDA_MODULE_LOADING": "EAGER"}, False),
    ]
    for build, cache_text, env, fill in cases:
        program = os.path.join(bin_dir, f"04_{build}")
        args = size + embeds(cuobjdump, program)
        with tempfile.TemporaryDirectory(prefix="ch04-jit-cache-") as cache:
            env = {"CUDA_CACHE_PATH": cache, **env}
            if fill:
                run(program, env, args)  # the first run compiles and fills the cache
            result, status, text = measure(program, env, repeats, args)
        if NO_GPU.search(text):
            print("run_variants: no GPU here; nothing to time.")
            return 77
        if result is None:
            failures.append(f"04_{build} ({cache_text}) exited with status {status}:\n{text}")
            continue
        device = device or DEVICE.search(text).group(1)
        module = module or LOAD.search(text).group(1)
        startup, load, wall, ran = result
        rows.append([f"04_{build}", ran, cache_text, f"{startup:.1f}", f"{load:.1f}", f"{wall:.0f}"])

    print(f"Device 0: {device}")
    print(f"Date: {datetime.date.today().isoformat()}; medians of {repeats} runs of each program "
          f"with {' '.join(size)}; wall-clock times on the CPU.")
    print(f"Kernel module: {module}. Startup: CUDA context and the main module (require_gpu()).\n")
    header = ["build", "the driver runs", "JIT cache", "startup (ms)", "kernel module load (ms)", "whole run (ms)"]
    print_table(header, rows)
    # (startup, load, whole run) of the three runs the README compares
    times = {(r[0], r[2]): [float(t) for t in r[3:]] for r in rows}
    machine = times.get(("04_cubin_only", "none (machine code)"), [None] * 3)
    cold_ptx = times.get(("04_ptx_only", "cold: CUDA_CACHE_DISABLE=1"), [None] * 3)
    warm_ptx = times.get(("04_ptx_only", "warm: CUDA_CACHE_PATH, filled"), [None] * 3)
    run_growth_pct = None
    if machine[2] and cold_ptx[2]:
        run_growth_pct = (cold_ptx[2] / machine[2] - 1) * 100
        print(f"\nLoading the kernels: {machine[1]:.1f} ms from machine code, {cold_ptx[1]:.1f} ms when the driver "
              f"compiles the PTX, against {machine[0]:.1f} ms to create the CUDA context.")
        print(f"The whole run: {machine[2]:.0f} ms from machine code, {cold_ptx[2]:.0f} ms with a cold JIT "
              f"({run_growth_pct:+.0f}%).")
    if warm_ptx[1]:
        print(f"From a warm JIT cache, loading the kernels took {warm_ptx[1]:.1f} ms.")
    for failure in failures:
        print(f"\nrun_variants: FAILED: {failure}")
    # The course's machine-readable last line: each program run is a check (its exit code).
    figures = {"machine_code_load_ms": machine[1], "cold_jit_load_ms": cold_ptx[1], "warm_jit_load_ms": warm_ptx[1],
               "machine_code_startup_ms": machine[0], "machine_code_run_ms": machine[2],
               "cold_jit_run_ms": cold_ptx[2], "cold_jit_run_growth_pct": run_growth_pct}
    summary = {"program": "04_jit_cost", "checks": len(rows) + len(failures), "failed": len(failures),
               "exact": 0, "goals": [],
               "figures": {key: round(value, 1) if key.endswith("_ms") else round(value)
                           for key, value in figures.items() if value is not None}}
    print("\nSUMMARY " + json.dumps(summary, separators=(",", ":")))
    return 1 if failures else 0


def print_table(header, rows):
    widths = [max(len(str(row[c])) for row in [header, *rows]) for c in range(len(header))]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", required=True, help="folder holding the 04_* programs")
    parser.add_argument("--cuobjdump", default="", help="cuobjdump, to tell each build what it embeds")
    sub = parser.add_subparsers(dest="mode", required=True)
    sub.add_parser("outputs", help="run every build once and show its output")
    timing = sub.add_parser("jit-cost", help="time kernel loading: machine code, cold and warm JIT")
    timing.add_argument("--repeats", type=int, default=5, help="runs per row (median); 1 to 50")
    args = parser.parse_args()
    if args.mode == "jit-cost" and not 1 <= args.repeats <= 50:
        parser.error("--repeats must be between 1 and 50")
    if args.mode == "outputs":
        return outputs(args.bin_dir, args.cuobjdump)
    return jit_cost(args.bin_dir, args.cuobjdump, args.repeats)


if __name__ == "__main__":
    sys.exit(main())
