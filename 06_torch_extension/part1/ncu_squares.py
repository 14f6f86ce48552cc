"""Part 1, step 4: Nsight Compute on a Python process. ncu profiles one call of your CUDA kernel and one
of the Triton kernel that torch.compile writes for a * a, and a few metrics say why one is faster.

    python3 06_torch_extension/part1/ncu_squares.py [--log2n 28]

Like the lecture's `ncu python train.py`, it runs ncu on Python itself: ncu starts this script again
with --workload, profiles only the kernels launched inside its NVTX range "profiled" (the warm-up and
torch.compile's own work stay out), saves a report, and reads it back with `ncu --import --csv`,
parsed with Python's csv module. Set NCU=/path/to/ncu if ncu is off PATH. Exits 77 (skipped) without
ncu, a GPU or Triton, or when this user may not read the GPU's performance counters.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "demos"))  # the chapter's helpers
from summary import Summary  # noqa: E402
from timing import EXIT_NO_GPU, markdown_table, require_gpu, require_triton  # noqa: E402

# ncu's metric names (each in the Nsight Compute manual's table of nvprof equivalents), how the table
# labels them, and the unit a time or a byte count is converted to.
METRICS = {
    "gpu__time_duration.sum": ("duration (us)", "us"),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": ("DRAM throughput (% of peak)", None),
    "dram__bytes_read.sum": ("DRAM read (MB)", "MB"),
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": ("global load requests (one per warp-wide load)", None),
    "smsp__inst_executed.sum": ("warp instructions executed", None),
    "launch__block_size": ("threads per block", None),
    "sm__warps_active.avg.pct_of_peak_sustained_active": ("achieved occupancy (% of the SM's warps)", None),
}
TO = {"us": {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3},
      "MB": {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3}}
KERNELS = {"your CUDA kernel": "square_kernel", "Triton, by torch.compile": "triton_"}  # label: name contains


def workload(n: int) -> int:
    """What ncu runs: both squares once each inside the NVTX range, after a warm-up outside it."""
    import square_inline

    your_square = square_inline.build().square
    compiled_square = torch.compile(lambda t: t * t)
    x = torch.randn(n, device="cuda")
    summary = Summary()
    summary.exact("your kernel vs x * x", (your_square(x) - x * x).abs().max().item())
    summary.exact("torch.compile(x * x) vs x * x", (compiled_square(x) - x * x).abs().max().item())
    torch.cuda.synchronize()
    with torch.cuda.nvtx.range("profiled"):
        your_square(x)
        compiled_square(x)
    torch.cuda.synchronize()
    return summary.finish("06_torch_extension_part1_ncu_workload")


def read_ncu_csv(text: str) -> dict[str, dict[str, tuple[float, str]]]:
    """{kernel name: {metric: (value, unit)}} from `ncu --import <report> --csv --page details`."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)  # after ==PROF== lines
    kernels: dict[str, dict[str, tuple[float, str]]] = {}
    if header is None:
        return kernels
    for row in csv.DictReader(lines[header:]):
        try:
            value = float(row["Metric Value"].replace(",", ""))  # ncu may group thousands with commas
        except ValueError:
            continue  # text-valued rows
        kernels.setdefault(row["Kernel Name"], {})[row["Metric Name"]] = (value, row["Metric Unit"])
    return kernels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, choices=range(10, 31), default=28, metavar="10..30",
                        help="floats in the tensor = 2^LOG2N (default 28: 1 GiB, 20x the L2 cache)")
    parser.add_argument("--keep-report", type=Path, metavar="DIR",
                        help="keep ncu's report (squares.ncu-rep, for Nsight Compute's window) and its CSV in DIR")
    parser.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)  # what ncu runs
    args = parser.parse_args()
    if args.workload:
        return workload(2**args.log2n)

    ncu = shutil.which(os.environ.get("NCU", "ncu"))
    if ncu is None:
        print(f"ncu_squares: ncu is not installed (looked for '{os.environ.get('NCU', 'ncu')}'): skipping. "
              "Nsight Compute comes with the CUDA toolkit.", file=sys.stderr)
        return EXIT_NO_GPU
    require_gpu()
    require_triton()
    summary = Summary()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep_report or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        report = folder / "squares.ncu-rep"
        command = [ncu, "--nvtx", "--nvtx-include", "profiled/", "--clock-control", "none",
                   "--metrics", ",".join(METRICS), "--export", str(report),
                   sys.executable, __file__, "--workload", "--log2n", str(args.log2n)]
        print("$ ncu --nvtx --nvtx-include profiled/ --clock-control none --metrics <10 metrics> "
              "--export squares.ncu-rep python3 ncu_squares.py --workload\n", flush=True)
        # One compile thread: torch.compile's worker processes would each start under ncu as well.
        run = subprocess.run(command, capture_output=True, text=True,
                             env={**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1"})
        output = run.stdout + run.stderr
        print(output)
        if "ERR_NVGPUCTRPERM" in output:
            print("ncu_squares: this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM): "
                  "run as root, or see developer.nvidia.com/ERR_NVGPUCTRPERM. Skipping.", file=sys.stderr)
            return EXIT_NO_GPU
        workload_summary = [line for line in run.stdout.splitlines() if line.startswith("SUMMARY ")]
        verdict = json.loads(workload_summary[-1].removeprefix("SUMMARY ")) if workload_summary else {}
        summary.expect("ncu ran the workload, and its checks passed",
                       run.returncode == 0 and verdict.get("checks", 0) > 0 and verdict.get("failed") == 0)
        if not report.exists():
            return summary.finish("06_torch_extension_part1_ncu")
        exported = subprocess.run([ncu, "--import", str(report), "--csv", "--page", "details",
                                   "--print-units", "base"], capture_output=True, text=True)
        (folder / "squares.csv").write_text(exported.stdout)
    kernels = read_ncu_csv(exported.stdout)
    found = {label: next((name for name in kernels if part in name), None) for label, part in KERNELS.items()}
    print("Kernels ncu profiled: " + "; ".join(kernels))
    if not summary.expect("ncu profiled both kernels", all(found.values())):
        print(exported.stdout[:4000] + exported.stderr)  # what ncu exported instead
        return summary.finish("06_torch_extension_part1_ncu")

    def value(label: str, metric: str) -> float:
        number, unit = kernels[found[label]].get(metric, (float("nan"), "missing"))
        target = METRICS[metric][1]
        return number * TO[target].get(unit, float("nan")) if target else number

    table = {metric: {label: value(label, metric) for label in KERNELS} for metric in METRICS}
    summary.expect("ncu reported every metric for both kernels (times and bytes in known units)",
                   all(v == v for values in table.values() for v in values.values()))  # NaN != NaN
    rows = [[METRICS[metric][0]] + [f"{v:,.4g}" if v < 1e4 else f"{v:,.0f}" for v in values.values()]
            for metric, values in table.items()]
    n = 2**args.log2n
    per_request = {label: 4 * n / table["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"][label] for label in KERNELS}
    rows.append(["bytes of x per load request (4n / requests)"] + [f"{v:.0f}" for v in per_request.values()])
    print(f"\n## Nsight Compute: one call of each on {n:,} floats\n")
    print(markdown_table(["metric", *KERNELS], rows))
    for label in KERNELS:  # each float of x read once from DRAM: a check that ncu counted what we think
        read = table["dram__bytes_read.sum"][label] * 1e6
        summary.expect(f"{label} read {read / 1e6:.0f} MB from DRAM, x's {4 * n / 1e6:.0f} MB within 5%",
                       abs(read - 4 * n) <= 0.05 * 4 * n)
    duration = table["gpu__time_duration.sum"]
    ours, theirs = (duration[label] for label in KERNELS)
    print(f"\nTriton's kernel took {theirs:.1f} us, yours {ours:.1f} us: yours ran at {100 * theirs / ours:.1f}% of its "
          f"speed, with {per_request['your CUDA kernel']:.0f} bytes of x per load request against "
          f"{per_request['Triton, by torch.compile']:.0f}.")
    summary.figure("yours_us", round(ours, 1))
    summary.figure("triton_us", round(theirs, 1))
    summary.figure("yours_pct_of_triton", round(100 * theirs / ours, 1))
    for key, label in (("yours", "your CUDA kernel"), ("triton", "Triton, by torch.compile")):
        summary.figure(f"{key}_dram_pct", round(table["dram__throughput.avg.pct_of_peak_sustained_elapsed"][label], 1))
        summary.figure(f"{key}_bytes_per_request", round(per_request[label]))
    return summary.finish("06_torch_extension_part1_ncu")


if __name__ == "__main__":
    sys.exit(main())
