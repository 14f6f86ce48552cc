#!/usr/bin/env bash
# Nsight Compute's "GPU Speed Of Light" figures for the key steps of chapter 07: how busy each
# kernel keeps the memory system and the SMs, as a percentage of the hardware's peak.
#
# Usage: 07_optimization/ncu_steps.sh <folder with 07_sgemm, 07_reduction, 07_elementwise>
#        (e.g. build/bin). Prints a Markdown table, then ncu's own output (CSV and the programs').
#
# ncu replays each profiled kernel several times to collect its counters, so only a few launches
# are profiled: -k picks kernels by name, -c stops after that many. The programs run with
# --check-only, in which each step's first launch is its exact check at full size.
# --clock-control none: keep the GPU's normal boost clocks (ncu's default locks them to base
# clocks, which makes every kernel look slower than in the benchmark tables).
# Exit 77 (skipped) without ncu or without a GPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-}
if [ -z "$bin" ] || [ ! -x "$bin/07_sgemm" ] || [ ! -x "$bin/07_reduction" ] || [ ! -x "$bin/07_elementwise" ]; then
  echo "usage: $0 <folder with the 07_sgemm, 07_reduction and 07_elementwise programs>" >&2
  exit 2
fi
if ! command -v ncu >/dev/null; then
  echo "ncu (Nsight Compute) is not installed or not on PATH: no profile taken."
  echo "It ships with the CUDA toolkit (nsight-compute); add its folder to PATH and run again."
  exit 77
fi
source "$here/../cmake/run_or_skip.sh"

# The Speed Of Light section's figures, as metrics: read from ncu's CSV, not from its text.
metrics=gpu__time_duration.sum,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
raw=""
# profile <kernel regex> <launch count> <program and arguments...>
profile() {
  local kernels=$1 count=$2
  shift 2
  run_or_skip --quiet ncu_steps ncu --clock-control none --csv --page raw --print-units base \
    --metrics "$metrics" -k "regex:$kernels" -c "$count" "$@"
  raw+=$output$'\n'
  if [ "$status" -ne 0 ]; then
    printf '%s\n' "$output"
    echo "ncu failed (exit $status) on: $*"
    echo "(ERR_NVGPUCTRPERM means this user may not read GPU performance counters: see"
    echo " https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
    exit "$status"
  fi
}

# SGEMM at 4096: the naive kernel, warp tiling, and double buffering in its five tile
# configurations (8a-8e, which ncu names sgemm_double_buffered<Tiles8a, 0> ...).
profile 'sgemm_naive|sgemm_warptiling|sgemm_double_buffered' 7 "$bin/07_sgemm" --check-only
# Reduction over 2^28 floats: the single-pass step and CUB's main kernel.
profile 'sum_single_pass|DeviceReduceKernel' 2 "$bin/07_reduction" --check-only --step 7
# z = x + y over 2^28 floats, float4.
profile 'add_float4' 1 "$bin/07_elementwise" --check-only

echo "### ncu Speed Of Light, chapter 07 key steps (--clock-control none)"
echo
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
printf '%s\n' "$raw" >"$csv"
PYTHONPATH="$here/../scripts" python3 - "$csv" <<'EOF' || exit 1
import sys
import ncu_csv


def duration(ns):  # as ncu shows it: 275.83 ms, 353.34 us
    for unit, scale in (("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.2f} ns"


def kernel(name):  # without "void " and the parameter list, at most 70 characters
    name = name.removeprefix("void ")
    name = name[:name.rfind("(")] if name.endswith(")") else name
    return name if len(name) <= 70 else name[:67] + "..."


launches = ncu_csv.read(open(sys.argv[1]).read())
if not launches:
    sys.exit("ncu_steps: ncu profiled no kernel")
print("| Kernel | Grid x block | Duration | Memory throughput | DRAM throughput | Compute (SM) throughput |")
print("| --- | --- | --- | --- | --- | --- |")
for launch in launches:
    pct = [f"{ncu_csv.value(launch, f'{unit}.avg.pct_of_peak_sustained_elapsed'):.2f} %"
           for unit in ("gpu__compute_memory_throughput", "gpu__dram_throughput", "sm__throughput")]
    print(f"| {kernel(launch['Kernel Name'])} | {launch['Grid Size']}x{launch['Block Size']} "
          f"| {duration(ncu_csv.value(launch, 'gpu__time_duration.sum'))} | " + " | ".join(pct) + " |")
EOF
echo
echo "Raw ncu output (CSV, with the programs' own output):"
echo
printf '%s' "$raw"
