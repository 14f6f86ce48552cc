#!/usr/bin/env bash
# Nsight Compute on each tensor-core step and on cuBLAS BF16, at M = N = K = 4096: how busy each
# kernel keeps the tensor pipes, how much of DRAM's bandwidth it uses, and how many shared-memory
# bank conflicts its loads from shared memory cause.
#
# Usage: 07_optimization/tensor_cores/ncu_steps.sh <path to the 07_tensor_cores program>
#        Prints a Markdown table, then ncu's own output.
#
# The program runs with --check-only: each step's first launch is its exact check at full size.
# ncu replays each profiled kernel several times to collect its counters, so only those first
# launches are profiled (-k picks kernels by name, -c stops after that many).
# --clock-control none: keep the GPU's normal boost clocks (ncu's default locks them to base
# clocks, which makes every kernel look slower than in the benchmark tables).
set -u
program=${1:-}
if [ -z "$program" ] || [ ! -x "$program" ]; then
  echo "usage: $0 <path to the 07_tensor_cores program>" >&2
  exit 2
fi
if ! command -v ncu >/dev/null; then
  echo "ncu (Nsight Compute) is not installed or not on PATH: no profile taken."
  echo "It ships with the CUDA toolkit (nsight-compute); add its folder to PATH and run again."
  exit 0
fi

# Tensor pipes: HMMA is mma.sync (and WMMA, built on it); GMMA is wgmma, Hopper's warpgroup MMA.
metrics=gpu__time_duration.sum
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,launch__registers_per_thread

raw=$(mktemp)
csv=$(mktemp)
trap 'rm -f "$raw" "$csv"' EXIT

# profile <kernel regex> <launch count> <program arguments...>
profile() {
  local kernels=$1 count=$2
  shift 2
  ncu --clock-control none --csv --metrics "$metrics" -k "regex:$kernels" -c "$count" \
    "$program" "$@" >"$raw" 2>&1
  local status=$?
  if [ "$status" -ne 0 ]; then
    cat "$raw"
    echo "ncu failed (exit $status) on: $program $*"
    echo "(ERR_NVGPUCTRPERM means this user may not read GPU performance counters: see"
    echo " https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
    exit "$status"
  fi
  grep '^"' "$raw" >>"$csv"
}

size=(--m 4096 --n 4096 --k 4096 --check-only)
# cuBLAS's kernel for the exact check's reference (the first cuBLAS launch).
profile 'gemm|nvjet|xmma|cutlass' 1 "${size[@]}" --step 1
# Steps 1-4, in order: each one's first launch.
profile 'tc_wmma_naive|tc_cp_async_wmma|tc_mma_ldmatrix|tc_tma_wgmma' 4 "${size[@]}"

echo "### ncu, tensor-core steps and cuBLAS BF16 at M = N = K = 4096 (--clock-control none)"
echo
python3 - "$csv" <<'EOF'
import csv, sys

rows, order = {}, []
with open(sys.argv[1], newline="") as f:
    for record in csv.reader(f):
        if record[0] == "ID":
            header = record
            continue
        r = dict(zip(header, record))
        key = (r["Kernel Name"], r["ID"])
        if key not in rows:
            rows[key] = {}
            order.append(key)
        rows[key][r["Metric Name"]] = (r["Metric Value"], r["Metric Unit"])

def value(m, name, unit=""):
    v = m.get(name)
    return "n/a" if v is None else f"{v[0]}{unit}"

print("| Kernel | Duration | Registers | Tensor pipe, mma.sync (HMMA) | Tensor pipe, wgmma (GMMA) "
      "| DRAM throughput | Shared-load bank conflicts |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, _ in order:
    m = rows[(name, _)]
    short = name.split("(")[0].replace("void ", "")
    if len(short) > 60:
        short = short[:57] + "..."
    duration = m.get("gpu__time_duration.sum", ("?", ""))
    print(f"| {short} | {duration[0]} {duration[1]} | {value(m, 'launch__registers_per_thread')} "
          f"| {value(m, 'sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active', ' %')} "
          f"| {value(m, 'sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active', ' %')} "
          f"| {value(m, 'dram__throughput.avg.pct_of_peak_sustained_elapsed', ' %')} "
          f"| {value(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum')} |")
EOF
echo
echo "Tensor pipe: share of the active cycles in which that tensor pipe was busy. Bank conflicts:"
echo "extra shared-memory wavefronts caused by conflicts, over the whole kernel (0: none)."
echo
echo "Raw ncu output (CSV):"
echo
cat "$csv"
