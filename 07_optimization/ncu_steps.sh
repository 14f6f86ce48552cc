#!/usr/bin/env bash
# Nsight Compute's "GPU Speed Of Light" section for the key steps of chapter 07: how busy each
# kernel keeps the memory system and the SMs, as a percentage of the hardware's peak.
#
# Usage: 07_optimization/ncu_steps.sh <folder with 07_sgemm, 07_reduction, 07_elementwise>
#        (e.g. build/bin). Prints a Markdown table, then ncu's own output.
#
# ncu replays each profiled kernel several times to collect its counters, so only a few launches
# are profiled: -k picks kernels by name, -c stops after that many. The programs run with
# --check-only, in which each step's first launch is its exact check at full size.
# --clock-control none: keep the GPU's normal boost clocks (ncu's default locks them to base
# clocks, which makes every kernel look slower than in the benchmark tables).
set -u
bin=${1:-}
if [ -z "$bin" ] || [ ! -x "$bin/07_sgemm" ] || [ ! -x "$bin/07_reduction" ] || [ ! -x "$bin/07_elementwise" ]; then
  echo "usage: $0 <folder with the 07_sgemm, 07_reduction and 07_elementwise programs>" >&2
  exit 2
fi
if ! command -v ncu >/dev/null; then
  echo "ncu (Nsight Compute) is not installed or not on PATH: no profile taken."
  echo "It ships with the CUDA toolkit (nsight-compute); add its folder to PATH and run again."
  exit 0
fi

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

# profile <kernel regex> <launch count> <program and arguments...>
profile() {
  local kernels=$1 count=$2
  shift 2
  ncu --clock-control none --section SpeedOfLight -k "regex:$kernels" -c "$count" "$@" >>"$raw" 2>&1
  local status=$?
  if [ "$status" -ne 0 ]; then
    cat "$raw"
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
echo "| Kernel | Grid x block | Duration | Memory throughput | DRAM throughput | Compute (SM) throughput |"
echo "| --- | --- | --- | --- | --- | --- |"
# A kernel's section starts with a line "  name(args) (grid)x(block), Context 1, Stream 7, ...".
awk '
  function emit() {
    if (name != "") printf "| %s | %s | %s | %s %% | %s %% | %s %% |\n", name, shape, duration, memory, dram, compute
  }
  /, Context [0-9]+, Stream [0-9]+/ {
    emit()
    sig = $0
    sub(/^ +/, "", sig)
    sub(/, Context.*/, "", sig)          # "name(params) (grid)x(block)"
    match(sig, /\([0-9, ]+\)x\([0-9, ]+\)$/)
    shape = substr(sig, RSTART)
    name = substr(sig, 1, RSTART - 2)
    sub(/\([^()]*\)$/, "", name)         # drop the parameter list
    sub(/^void /, "", name)
    if (length(name) > 70) name = substr(name, 1, 67) "..."
    duration = memory = dram = compute = "?"
  }
  /^ +Duration /                { duration = $NF " " $(NF - 1) }
  /^ +Memory Throughput /       { memory = $NF }
  /^ +DRAM Throughput /         { dram = $NF }
  /^ +Compute \(SM\) Throughput / { compute = $NF }
  END { emit() }
' "$raw"
echo
echo "Raw ncu output:"
echo
cat "$raw"
