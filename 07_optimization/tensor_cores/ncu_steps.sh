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

# The tensor pipe metric counts every tensor-core instruction: HMMA (mma.sync, and WMMA, built
# on it) and HGMMA (wgmma, Hopper's warpgroup MMA); the wgmma instruction count tells them apart.
metrics=gpu__time_duration.sum,launch__registers_per_thread
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed_pipe_tensor_op_gmma.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
# How busy the warp schedulers are, and what share of their instructions are tensor-core ones.
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_hmma.sum
# Where warps wait: cycles stalled per issued instruction, by reason.
stalls="barrier short_scoreboard long_scoreboard math_pipe_throttle mio_throttle wait"
for reason in $stalls; do
  metrics+=,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio
done

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
# The mma.sync ceiling kernel (launched first), then steps 1-4 in order: each one's first launch.
profile 'tc_mma_sync_peak|tc_wmma_naive|tc_cp_async_wmma|tc_mma_ldmatrix|tc_tma_wgmma' 5 "${size[@]}"

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

def short(name):
    name = name.split("(")[0].replace("void ", "").split("::")[-1]  # no namespaces
    return name if len(name) <= 60 else name[:57] + "..."

def number(m, name):
    v = m.get(name)
    try:
        return float(v[0].replace(",", ""))
    except (TypeError, ValueError):
        return None

print("| Kernel | Duration | Registers | Tensor pipe busy | wgmma instructions | Shared-memory pipe busy "
      "| DRAM throughput | Shared-load wavefronts | Bank conflicts in them |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for key in order:
    m = rows[key]
    duration = m.get("gpu__time_duration.sum", ("?", ""))
    print(f"| {short(key[0])} | {duration[0]} {duration[1]} | {value(m, 'launch__registers_per_thread')} "
          f"| {value(m, 'sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active', ' %')} "
          f"| {value(m, 'sm__inst_executed_pipe_tensor_op_gmma.sum')} "
          f"| {value(m, 'l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed', ' %')} "
          f"| {value(m, 'dram__throughput.avg.pct_of_peak_sustained_elapsed', ' %')} "
          f"| {value(m, 'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum')} "
          f"| {value(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum')} |")

reasons = ["barrier", "short_scoreboard", "long_scoreboard", "math_pipe_throttle", "mio_throttle", "wait"]
print()
print("### Issue: how busy the schedulers are, and where the warps wait (cycles per issued instruction)")
print()
print("| Kernel | Issue slots busy | Tensor-pipe share of instructions | "
      + " | ".join(r.replace("_", " ") for r in reasons) + " |")
print("| --- | --- | --- |" + " --- |" * len(reasons))
for key in order:
    m = rows[key]
    tensor, total = number(m, "sm__inst_executed_pipe_tensor_op_hmma.sum"), number(m, "smsp__inst_executed.sum")
    share = f"{100 * tensor / total:.1f} %" if tensor is not None and total else "n/a"
    cells = [value(m, f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio") for r in reasons]
    print(f"| {short(key[0])} | {value(m, 'smsp__issue_active.avg.pct_of_peak_sustained_active', ' %')} "
          f"| {share} | " + " | ".join(cells) + " |")
EOF
echo
echo "Tensor pipe busy: share of the SMs' active cycles with the tensor pipe working. Shared-memory"
echo "pipe: share of its peak wavefront rate. Bank conflicts: extra wavefronts caused by conflicts"
echo "(0: none). Issue slots: share of cycles in which a warp scheduler issued an instruction."
echo "Stalls, in cycles per issued instruction: barrier = waiting at a barrier; short scoreboard ="
echo "waiting for shared memory (ldmatrix, LDS); long scoreboard = waiting for global memory; math"
echo "pipe throttle = the tensor pipe is full; mio throttle = the shared-memory queue is full;"
echo "wait = fixed latencies between dependent instructions."
echo
echo "Raw ncu output (CSV):"
echo
cat "$csv"
