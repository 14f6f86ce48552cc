#!/usr/bin/env python3
"""NCCL's all-reduce under each algorithm and protocol it has here, at every size, in CUDA graphs.

NCCL reads NCCL_ALGO and NCCL_PROTO once, when the process starts, so each combination is its own
run of `08_allreduce --nccl-only` (NCCL alone, checked exactly, timed in CUDA graphs): Ring and
Tree, each with LL (8-byte stores of 4 data bytes beside a 4-byte flag), LL128 (128-byte lines,
one flag per line) and Simple (plain copies, then a flag after a fence). A seventh run leaves the
choice to NCCL and asks it to say what it chose (NCCL_DEBUG_SUBSYS=TUNING).

Prints a table, writes every time to a CSV (the model and the figure read it) and ends with a
SUMMARY line whose figures name each time: <algo>_<proto>_us_<size> and nccl_us_<size>.
Usage: nccl_protocols.py <08_allreduce program> [--csv FILE] [--max-bytes N]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

ALGOS = ("Ring", "Tree")
PROTOS = ("LL", "LL128", "Simple")
# NCCL prints its choice as names in recent versions and as numbers in older ones.
ALGO_NUMBERS = {"0": "Tree", "1": "Ring"}
PROTO_NUMBERS = {"0": "LL", "1": "LL128", "2": "Simple"}
CHOICE = re.compile(r"(\d+) Bytes -> Algo (\w+) proto (\w+)")


def canonical(name, numbers, known):
    name = numbers.get(name, name)
    for k in known:
        if k.lower() == name.lower():
            return k
    return name


def choices(output):
    """NCCL's choice per message size in bytes, from its TUNING lines."""
    chosen = {}
    for m in CHOICE.finditer(output):
        chosen[int(m.group(1))] = (canonical(m.group(2), ALGO_NUMBERS, ALGOS),
                                   canonical(m.group(3), PROTO_NUMBERS, PROTOS))
    return chosen


def summary(output):
    lines = [l for l in output.splitlines() if l.startswith("SUMMARY ")]
    return json.loads(lines[-1][len("SUMMARY "):]) if lines else None


def run(program, extra_env, args):
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
               **extra_env)
    p = subprocess.run([program, "--nccl-only", "--runs", "10", "--rounds", "1"] + args, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return p.returncode, p.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("--csv", help="where to write every time (size_bytes, algo, proto, us, chosen)")
    parser.add_argument("--max-bytes", default=str(1 << 30))
    options = parser.parse_args()
    args = ["--max-bytes", options.max_bytes]

    times = {}  # (algo, proto) -> {label: us}; ("NCCL", "choice") for NCCL's own
    checks = failed = exact = 0
    chosen = {}
    for algo, proto in [(None, None)] + [(a, p) for a in ALGOS for p in PROTOS]:
        forced = algo is not None
        env = {"NCCL_ALGO": algo, "NCCL_PROTO": proto} if forced else {"NCCL_DEBUG": "INFO",
                                                                         "NCCL_DEBUG_SUBSYS": "TUNING"}
        code, output = run(options.program, env, args)
        s = summary(output)
        key = (algo, proto) if forced else ("NCCL", "choice")
        if code == 77:
            print(output.strip().splitlines()[-1])
            return 77
        if s is None or (code != 0 and forced and s["checks"] == 0):
            # NCCL may refuse a combination on this machine: say so, and go on without it.
            print(f"{key[0]} {key[1]}: not run here (exit {code}): {output.strip().splitlines()[-1:]}")
            if not forced:
                return 1
            continue
        checks, failed, exact = checks + s["checks"], failed + s["failed"], exact + s["exact"]
        if code != 0:
            failed += 1 if s["failed"] == 0 else 0
            print(output)
        times[key] = {k[len("nccl_graph_us_"):]: v for k, v in s["figures"].items() if k.startswith("nccl_graph_us_")}
        if not forced:
            chosen = choices(output)

    labels = list(times[("NCCL", "choice")])
    sizes = {label: size_bytes(label) for label in labels}
    columns = [k for k in times if k != ("NCCL", "choice")]
    print("### NCCL all-reduce, fp32, in CUDA graphs: microseconds per call, each algorithm and protocol forced\n")
    print("| Size | " + " | ".join(f"{a} {p}" for a, p in columns) + " | NCCL's choice | its time |")
    print("|" + "---|" * (len(columns) + 3))
    figures = {}
    rows = []
    for label in labels:
        pick = chosen.get(sizes[label])
        cells = []
        for a, p in columns:
            us = times[(a, p)].get(label)
            cells.append("-" if us is None else f"{us:g}")
            if us is not None:
                figures[f"{a.lower()}_{p.lower()}_us_{label}"] = us
                rows.append((sizes[label], a, p, us, int(pick == (a, p))))
        us = times[("NCCL", "choice")][label]
        figures[f"nccl_us_{label}"] = us
        rows.append((sizes[label], "NCCL", "choice", us, 1))
        pick_text = f"{pick[0]} {pick[1]}" if pick else "(not printed)"
        print(f"| {label} | " + " | ".join(cells) + f" | {pick_text} | {us:g} |")
    print()
    if options.csv:
        with open(options.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["size_bytes", "algo", "proto", "us", "chosen"])
            w.writerows(rows)
    line = {"program": "08_nccl_protocols", "checks": checks, "failed": failed, "exact": exact, "goals": [],
            "figures": figures}
    print("SUMMARY " + json.dumps(line, separators=(",", ":")))
    return 0 if failed == 0 else 1


def size_bytes(label):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)):
        if label.endswith(unit):
            return int(label[: -len(unit)]) * scale
    raise ValueError(label)


if __name__ == "__main__":
    sys.exit(main())
