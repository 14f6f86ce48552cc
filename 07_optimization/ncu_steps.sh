#!/usr/bin/env bash
# Nsight Compute on chapter 07's steps: the figures its lessons quote beside each "limited by".
#
# Usage: 07_optimization/ncu_steps.sh <folder with 07_sgemm, 07_reduction, 07_elementwise, 07_fusion>
#        (e.g. build/bin). Prints three Markdown tables, then ncu's own output (CSV and the
#        programs'), and last a SUMMARY line whose figures the READMEs quote
#        (<!--fig:07_ncu:KEY-->, filled by scripts/sync-results.py):
#   1. Speed Of Light for key steps (SGEMM naive, warp tiling, double buffering 8a-8e; the
#      single-pass reduction and CUB; the float4 add): how busy each keeps the memory system and
#      the SMs, as a percentage of the hardware's peak. Keys sol_<kernel>_{memory,dram,sm}_pct.
#   2. The memory-bound steps (elementwise 1-3, fusion 2-3, reduction 1-7): DRAM throughput,
#      achieved occupancy, issue slots busy, and the two waits that explain them. Keys
#      <step>_{dram_pct,occupancy_pct,issue_pct,long_scoreboard,barrier}, <step> one of
#      add1..add3, gelu2, gelu3, sum1..sum7.
#   3. Shared memory in the reduction's steps 1-7: instructions, wavefronts (one pass through the
#      32 banks each) and bank conflicts. Keys sum<N>_{shared_requests,shared_wavefronts,
#      bank_conflicts,ld_wavefronts_per_request,st_wavefronts_per_request}.
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
for program in 07_sgemm 07_reduction 07_elementwise 07_fusion; do
  if [ -z "$bin" ] || [ ! -x "$bin/$program" ]; then
    echo "usage: $0 <folder with the 07_sgemm, 07_reduction, 07_elementwise and 07_fusion programs>" >&2
    exit 2
  fi
done
if ! command -v ncu >/dev/null; then
  echo "ncu (Nsight Compute) is not installed or not on PATH: no profile taken."
  echo "It ships with the CUDA toolkit (nsight-compute); add its folder to PATH and run again."
  exit 77
fi
source "$here/../cmake/run_or_skip.sh"

# Table 1, the Speed Of Light section's figures, as metrics: read from ncu's CSV, not its text.
sol=gpu__time_duration.sum,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
sol+=,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
# Tables 2 and 3. Achieved occupancy: warps resident on an SM, as a share of the most it holds.
# Issue slots busy: the share of cycles in which a scheduler issued an instruction. The waits,
# in cycles per issued instruction: long scoreboard (for a load from global memory), barrier
# (at __syncthreads). A wavefront is one pass of a shared-memory access through the 32 banks:
# one per instruction when no two threads of a warp hit different words of one bank; each bank
# conflict adds one.
lesson=gpu__time_duration.sum,launch__grid_size
lesson+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
lesson+=,sm__warps_active.avg.pct_of_peak_sustained_active
lesson+=,smsp__issue_active.avg.pct_of_peak_sustained_active
lesson+=,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
lesson+=,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
# [excerpt:bank-conflict-metrics]
lesson+=,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
lesson+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
lesson+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
# [/excerpt:bank-conflict-metrics]
raw=""
# profile <table> <metrics> <kernel regex> <launch count> <program and arguments...>
profile() {
  local table=$1 metrics=$2 kernels=$3 count=$4
  shift 4
  run_or_skip --quiet ncu_steps ncu --clock-control none --csv --page raw --print-units base \
    --metrics "$metrics" -k "regex:$kernels" -c "$count" "$@"
  raw+="ncu_steps: table $table: ncu -k regex:$kernels -c $count ${*##*/}"$'\n'$output$'\n'
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
profile 1 "$sol" 'sgemm_naive|sgemm_warptiling|sgemm_double_buffered' 7 "$bin/07_sgemm" --check-only
# Reduction over 2^28 floats: the single-pass step and CUB's main kernel.
profile 1 "$sol" 'sum_single_pass|DeviceReduceKernel' 2 "$bin/07_reduction" --check-only --step 7
# z = x + y over 2^28 floats, float4.
profile 1 "$sol" 'add_float4' 1 "$bin/07_elementwise" --check-only
# Elementwise steps 1-3, in step order (the first three launches of the exact check).
profile 2 "$lesson" 'add_one_per_thread|add_grid_stride|add_float4' 3 "$bin/07_elementwise" --check-only
# Fusion steps 2 and 3 (step 1's eight kernels are the elementwise kind).
profile 2 "$lesson" 'gelu_fused' 2 "$bin/07_fusion" --check-only
# Reduction steps 1-7 over 2^28 floats: every launch of the exact check (steps 1-5 take 4 passes
# each, 6 two, 7 one: 23). The tables keep each kernel's first launch, the 2^28-element pass.
profile 2 "$lesson" 'sum_(interleaved|sequential|first_add|warp_shuffle|grid_stride|single_pass)' 23 "$bin/07_reduction" --check-only

csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
printf '%s\n' "$raw" >"$csv"
summary=$(PYTHONPATH="$here/../scripts" python3 - "$csv" <<'EOF'
import json
import re
import sys
import ncu_csv

# The lesson's steps, by kernel name (ncu's, without namespace and parameters).
STEPS = {"add_one_per_thread": "add1", "add_grid_stride": "add2", "add_float4": "add3",
         "gelu_fused": "gelu2", "gelu_fused_float4": "gelu3",
         "sum_interleaved_divergent": "sum1", "sum_interleaved_strided": "sum2", "sum_sequential": "sum3",
         "sum_first_add_during_load": "sum4", "sum_warp_shuffle": "sum5", "sum_grid_stride": "sum6",
         "sum_single_pass": "sum7"}
TITLES = {"add": "elementwise", "gelu": "fusion", "sum": "reduction"}


def duration(ns):  # as ncu shows it: 275.83 ms, 353.34 us
    for unit, scale in (("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.2f} ns"


def kernel(name):  # without "void " and the parameter list, at most 70 characters
    name = name.removeprefix("void ")
    name = name[:name.rfind("(")] if name.endswith(")") else name
    return name if len(name) <= 70 else name[:67] + "..."


def sol_key(name):  # sgemm_double_buffered<Tiles8a, 0> -> sgemm_8a; cub::DeviceReduceKernel<...> -> cub
    tiles = re.search(r"Tiles(8[a-e])", name)
    if tiles:
        return "sgemm_" + tiles.group(1)
    if name.startswith("cub::"):
        return "cub"
    return re.sub(r"<.*", "", name).split("::")[-1]


def step_of(launch):
    return STEPS.get(kernel(launch["Kernel Name"]).split("::")[-1])


# ncu_steps.sh writes "ncu_steps: table N: ..." before each ncu run's output.
runs, table = {1: "", 2: ""}, 1
for line in open(sys.argv[1]).read().splitlines():
    found = re.match(r"ncu_steps: table (\d):", line)
    if found:
        table = int(found.group(1))
    runs[table] += line + "\n"
sol, lesson = ncu_csv.read(runs[1]), ncu_csv.read(runs[2])
if not sol or not lesson:
    sys.exit("ncu_steps: ncu profiled no kernel")
figures = {}
print("### ncu Speed Of Light, chapter 07 key steps (--clock-control none)")
print()
print("| Kernel | Grid x block | Duration | Memory throughput | DRAM throughput | Compute (SM) throughput |")
print("| --- | --- | --- | --- | --- | --- |")
for launch in sol:
    pct = [ncu_csv.value(launch, f"{unit}.avg.pct_of_peak_sustained_elapsed")
           for unit in ("gpu__compute_memory_throughput", "gpu__dram_throughput", "sm__throughput")]
    for what, value in zip(("memory", "dram", "sm"), pct):
        figures[f"sol_{sol_key(kernel(launch['Kernel Name']))}_{what}_pct"] = round(value, 1)
    print(f"| {kernel(launch['Kernel Name'])} | {launch['Grid Size']}x{launch['Block Size']} "
          f"| {duration(ncu_csv.value(launch, 'gpu__time_duration.sum'))} | "
          + " | ".join(f"{p:.2f} %" for p in pct) + " |")

first = {}  # each step's first launch: its full-size pass
for launch in lesson:
    step = step_of(launch)
    if step and step not in first:
        first[step] = launch
missing = [s for s in STEPS.values() if s not in first]
if missing:
    sys.exit("ncu_steps: no profile of " + ", ".join(missing))
steps = sorted(first, key=lambda s: (list(TITLES).index(s.rstrip("0123456789")), s))


def label(step):  # add1 -> elementwise 1
    name, number = re.fullmatch(r"([a-z]+)(\d+)", step).groups()
    return f"{TITLES[name]} {number}"


print()
print("### Memory-bound steps: how busy DRAM is, and why not more (--clock-control none)")
print()
print("| Step | Kernel | Blocks | Duration | DRAM throughput | Achieved occupancy | Issue slots busy "
      "| Long scoreboard (cycles per instruction) | Barrier (cycles per instruction) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for step in steps:
    launch = first[step]
    v = {what: ncu_csv.value(launch, metric) for what, metric in (
        ("dram_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        ("occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active"),
        ("issue_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
        ("long_scoreboard", "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"),
        ("barrier", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"))}
    for what, value in v.items():
        figures[f"{step}_{what}"] = round(value, 1 if what.endswith("pct") else 2)
    print(f"| {label(step)} | {kernel(launch['Kernel Name']).split('::')[-1]} "
          f"| {ncu_csv.value(launch, 'launch__grid_size'):,.0f} "
          f"| {duration(ncu_csv.value(launch, 'gpu__time_duration.sum'))} | {v['dram_pct']:.1f} % "
          f"| {v['occupancy_pct']:.1f} % | {v['issue_pct']:.1f} % | {v['long_scoreboard']:.2f} | {v['barrier']:.2f} |")

print()
print("### Shared memory in the reduction's first pass: requests, wavefronts, bank conflicts")
print()
print("| Step | Shared loads (warp instructions) | Load wavefronts | Wavefronts per load | Shared stores "
      "| Store wavefronts | Wavefronts per store | Bank conflicts (loads + stores) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for step in [s for s in steps if s.startswith("sum")]:
    launch = first[step]
    n = {what: ncu_csv.value(launch, metric) for what, metric in (
        ("ld", "smsp__inst_executed_op_shared_ld.sum"), ("st", "smsp__inst_executed_op_shared_st.sum"),
        ("ld_wave", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
        ("st_wave", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
        ("ld_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
        ("st_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"))}
    per_ld = n["ld_wave"] / n["ld"] if n["ld"] else 0.0
    per_st = n["st_wave"] / n["st"] if n["st"] else 0.0
    figures[f"{step}_shared_requests"] = int(n["ld"] + n["st"])
    figures[f"{step}_shared_wavefronts"] = int(n["ld_wave"] + n["st_wave"])
    figures[f"{step}_bank_conflicts"] = int(n["ld_conflicts"] + n["st_conflicts"])
    figures[f"{step}_ld_wavefronts_per_request"] = round(per_ld, 2)
    figures[f"{step}_st_wavefronts_per_request"] = round(per_st, 2)
    print(f"| {label(step)} | {n['ld']:,.0f} | {n['ld_wave']:,.0f} | {per_ld:.2f} | {n['st']:,.0f} "
          f"| {n['st_wave']:,.0f} | {per_st:.2f} | {n['ld_conflicts'] + n['st_conflicts']:,.0f} |")
print("SUMMARY " + json.dumps({"program": "07_ncu", "checks": 0, "failed": 0, "exact": 0, "goals": [],
                               "figures": figures}))
EOF
) || { printf '%s\n' "$summary"; exit 1; }
# The tables, then the raw output, then the SUMMARY line: the record's last, so the READMEs'
# <!--fig:07_ncu:KEY--> read it (scripts/results.py: a run's last SUMMARY line is its own).
printf '%s\n' "$summary" | grep -v '^SUMMARY '
echo
echo "Raw ncu output (CSV, with the programs' own output):"
echo
printf '%s' "$raw"
printf '%s\n' "$summary" | grep '^SUMMARY '
