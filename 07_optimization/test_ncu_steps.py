#!/usr/bin/env python3
"""Runs ncu_steps.sh against a stand-in for ncu and for the programs, on any machine.

The real profile needs a GPU and ncu, so it runs only in the GPU check; this test checks what
can be checked without them, before that run: the script parses ncu's CSV, prints its three
tables, and ends with a SUMMARY line that holds every figure the course's pages quote as
<!--fig:07_ncu:KEY--> (a page naming a key the script never emits would fail after the run).

The stand-in ncu answers `-k regex:... -c N` with the kernels each program launches under
--check-only, in order (for the reduction: four passes each for steps 1-5, two for step 6,
one for step 7), and numbers in its CSV.

    python3 07_optimization/test_ncu_steps.py      # CTest: 07_optimization.ncu_steps_parses
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

FAKE_NCU = r'''#!/usr/bin/env python3
import csv, io, re, sys
args = sys.argv[1:]
metrics = args[args.index("--metrics") + 1].split(",")
pattern = args[args.index("-k") + 1][len("regex:"):]
count = int(args[args.index("-c") + 1])
program = next(a for a in args if "/07_" in a).rsplit("/", 1)[1]
passes = [("sum_interleaved_divergent", 4), ("sum_interleaved_strided", 4), ("sum_sequential", 4),
          ("sum_first_add_during_load", 4), ("sum_warp_shuffle", 4), ("sum_grid_stride", 2), ("sum_single_pass", 1)]
launched = {
    "07_sgemm": ["sgemm_naive", "sgemm_coalesced", "sgemm_warptiling<WarptileConfig, 0>"]
                + ["sgemm_double_buffered<Tiles8%s, 0>" % c for c in "abcde"],
    "07_reduction": (["reduction::sum_single_pass", "cub::DeviceReduceKernel<cub::policy_hub<float>>"]
                     if "--step" in args else ["reduction::" + k for k, n in passes for _ in range(n)]),
    "07_elementwise": ["add_one_per_thread", "add_grid_stride", "add_float4", "add_float4", "add_grid_stride"],
    "07_fusion": ["fusion::map1<Cube>", "fusion::gelu_fused", "fusion::gelu_fused_float4"],
}[program]
chosen = [k for k in launched if re.search(pattern, re.sub(r"<.*", "", k).split("::")[-1])][:count]
print("==PROF== Connected to process 1")
print('SUMMARY {"program": "%s", "checks": 1, "failed": 0}' % program)
out = io.StringIO()
rows = csv.writer(out, quoting=csv.QUOTE_ALL)
rows.writerow(["ID", "Kernel Name", "Block Size", "Grid Size"] + metrics)
rows.writerow(["", "", "", ""] + ["%"] * len(metrics))
for i, kernel in enumerate(chosen):
    rows.writerow([str(i), "void %s(const float *, float *, int)" % kernel, "(256, 1, 1)", "(1,024, 1, 1)"]
                  + ["{:,}".format(1000 + 37 * i + j) for j in range(len(metrics))])
print(out.getvalue(), end="")
'''


def keys_in_pages():
    """Every KEY of <!--fig:07_ncu:KEY--> in the pages sync-results.py fills."""
    pages = list(ROOT.glob("[0-9][0-9]_*/README.md")) + list(ROOT.glob("[0-9][0-9]_*/*/README.md"))
    pages += list((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
    found = {}
    for page in pages:
        if page.is_file():
            for key in re.findall(r"<!--fig:07_ncu:([\w.]+)-->", page.read_text(encoding="utf-8")):
                found.setdefault(key, page.relative_to(ROOT))
    return found


def main():
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        (work / "path").mkdir()
        (work / "bin").mkdir()
        (work / "path" / "ncu").write_text(FAKE_NCU)
        (work / "path" / "ncu").chmod(0o755)
        for program in ("07_sgemm", "07_reduction", "07_elementwise", "07_fusion"):
            (work / "bin" / program).write_text("#!/bin/sh\nexit 0\n")
            (work / "bin" / program).chmod(0o755)
        env = dict(os.environ, PATH=f"{work / 'path'}{os.pathsep}{os.environ['PATH']}")
        run = subprocess.run(["bash", str(HERE / "ncu_steps.sh"), str(work / "bin")], env=env,
                             capture_output=True, text=True)
    output = run.stdout + run.stderr
    problems = []
    if run.returncode != 0:
        problems.append(f"ncu_steps.sh exited {run.returncode}:\n{output[-3000:]}")
    lines = output.splitlines()
    summary = [line for line in lines if line.startswith('SUMMARY {"program": "07_ncu"')]
    if not summary or lines[-1] != summary[-1]:
        problems.append("the last line of the output is not ncu_steps.sh's own SUMMARY line")
    figures = json.loads(summary[-1][len("SUMMARY "):])["figures"] if summary else {}
    tables = sum(1 for line in lines if line.startswith("| --- "))
    if tables != 3:
        problems.append(f"expected 3 tables, found {tables}")
    for key, page in sorted(keys_in_pages().items()):
        if key not in figures:
            problems.append(f"{page} quotes <!--fig:07_ncu:{key}-->, which ncu_steps.sh does not emit")
    for problem in problems:
        print(f"test_ncu_steps: {problem}")
    if problems:
        return 1
    print(f"test_ncu_steps: 3 tables and {len(figures)} figures, every one the pages quote among them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
