#!/usr/bin/env bash
# Nsight Compute on each tensor-core step and on cuBLAS BF16, at M = N = K = 4096 (and steps 6, 7 and
# cuBLAS at every benchmark shape, with the bytes they move per FLOP): how busy each
# kernel keeps the tensor pipe, how much of DRAM's and L2's bandwidth it uses, and where its warps
# wait (the stall reason with the most cycles per issued instruction).
#
# Usage: 07_optimization/tensor_cores/ncu_steps.sh <path to the 07_tensor_cores program> [MxNxK...]
#        Prints three Markdown tables, then the raw CSV. The shapes (default: the race's four)
#        are those of the third table, steps 6 and 7 and cuBLAS at each.
#
# The program runs with --check-only: the mma.sync ceiling kernel runs first, then the exact
# check at full size launches cuBLAS (the reference above 2^30 multiply-adds) and each step once,
# in step order. ncu replays each profiled kernel many times to collect its counters, so only
# those first launches are profiled (-k picks kernels by name, -c stops after that many).
# --clock-control none: keep the GPU's normal boost clocks (ncu's default locks them to base
# clocks, which makes every kernel look slower than in the benchmark tables).
# ncu writes a report file; `ncu --import ... --page raw --csv` turns it into one CSV row per
# kernel launch, which scripts/ncu_csv.py reads (no parsing of ncu's text layout).
set -u
program=${1:-}
shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(4096x4096x4096 6144x6144x6144 8192x8192x8192 8192x14336x8192)
for shape in "${shapes[@]}"; do
  if ! [[ $shape =~ ^[0-9]+x[0-9]+x[0-9]+$ ]]; then
    echo "usage: $0 <path to the 07_tensor_cores program> [MxNxK...]: '$shape' is not MxNxK" >&2
    exit 2
  fi
done
if [ -z "$program" ] || [ ! -x "$program" ]; then
  echo "usage: $0 <path to the 07_tensor_cores program>" >&2
  exit 2
fi
if ! command -v ncu >/dev/null; then
  echo "ncu (Nsight Compute) is not installed or not on PATH: no profile taken."
  echo "It ships with the CUDA toolkit (nsight-compute); add its folder to PATH and run again."
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
scripts=$(cd "$here/../../scripts" && pwd)
source "$here/../../cmake/run_or_skip.sh"

# The tensor pipe metric counts every tensor-core instruction: HMMA (mma.sync, and WMMA, built
# on it) and HGMMA (wgmma, Hopper's warpgroup MMA).
metrics=gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
# Where warps wait: cycles stalled per issued instruction, by reason (README: "Reading the ncu
# table" says what each one means). "selected" (issuing) and "not selected" are not waits.
stalls="barrier branch_resolving dispatch_stall drain lg_throttle long_scoreboard math_pipe_throttle membar"
stalls+=" mio_throttle misc no_instruction short_scoreboard sleeping tex_throttle wait"
for reason in $stalls; do
  metrics+=,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The ceiling kernel, cuBLAS's best (the reference), cublasGemmEx's default, then steps 1-7: 10
# launches (fewer without the Hopper steps). Rows are labelled by kernel name, not by position.
kernels='regex:^tc_|nvjet|gemm|xmma|cutlass'
run_or_skip --quiet ncu_steps ncu --clock-control none --metrics "$metrics" -k "$kernels" -c 10 \
  -o "$work/report" "$program" --m 4096 --n 4096 --k 4096 --check-only
if [ "$status" -ne 0 ]; then
  printf '%s\n' "$output"
  echo "ncu failed on: $program --m 4096 --n 4096 --k 4096 --check-only"
  echo "(ERR_NVGPUCTRPERM means this user may not read GPU performance counters: see"
  echo " https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
  exit 1
fi
# --print-units base: every value in its base unit (durations in nanoseconds), whatever its size.
ncu --import "$work/report.ncu-rep" --page raw --csv --print-units base >"$work/raw.csv" || exit 1

echo "### ncu, tensor-core steps and cuBLAS BF16 at M = N = K = 4096 (--clock-control none)"
echo
python3 - "$work/raw.csv" "$scripts" "$stalls" <<'EOF'
import re
import sys

sys.path.insert(0, sys.argv[2])
import ncu_csv

rows = ncu_csv.read(open(sys.argv[1]).read())
stalls = sys.argv[3].split()
# Each row's label from its kernel's name; the library's kernels in launch order: its best, then
# cublasGemmEx's default.
kernel_steps = {"tc_mma_sync_peak": "mma.sync ceiling", "tc_wmma_naive": "step 1", "tc_cp_async_wmma": "step 2",
                "tc_mma_ldmatrix": "step 3", "tc_tma_wgmma": "step 4", "tc_warp_specialized": "step 5",
                "tc_persistent": "step 6", "tc_clusters": "step 7"}
library = iter(["cuBLAS BF16 best", "cuBLAS BF16 default"])
labels = []
for row in rows:
    own = next((label for kernel, label in kernel_steps.items() if kernel in row["Kernel Name"]), None)
    labels.append(own or next(library, "cuBLAS BF16"))


def short(name):
    """The kernel's own name: no namespaces (tc::<unnamed>::), template arguments or parameters."""
    name = name.replace("void ", "").split("(")[0]
    while re.search(r"<[^<>]*>", name):
        name = re.sub(r"<[^<>]*>", "", name)
    name = name.split("::")[-1]
    return name if len(name) <= 40 else name[:37] + "..."


def cell(row, metric, unit="", digits=1):
    try:
        return f"{ncu_csv.value(row, metric):,.{digits}f}{unit}"
    except (KeyError, ValueError):
        return "n/a"


def stall_ranking(row):
    ranked = []
    for reason in stalls:
        try:
            ranked.append((ncu_csv.value(row, f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"),
                           reason.replace("_", " ")))
        except (KeyError, ValueError):
            pass
    return sorted(ranked, reverse=True)


print("| Step | Kernel | Duration | Tensor pipe busy | DRAM throughput | L2 throughput | Issue slots busy "
      "| Top stall (cycles per issued instruction) | Next |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for label, row in zip(labels, rows):
    ranked = stall_ranking(row)
    top = [f"{reason} {value:.2f}" for value, reason in ranked[:2]] + ["n/a", "n/a"]
    duration = cell(row, "gpu__time_duration.sum", digits=0)
    print(f"| {label} | `{short(row['Kernel Name'])}` | {duration} ns "
          f"| {cell(row, 'sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active', ' %')} "
          f"| {cell(row, 'dram__throughput.avg.pct_of_peak_sustained_elapsed', ' %')} "
          f"| {cell(row, 'lts__throughput.avg.pct_of_peak_sustained_elapsed', ' %')} "
          f"| {cell(row, 'smsp__issue_active.avg.pct_of_peak_sustained_active', ' %')} "
          f"| {top[0]} | {top[1]} |")

print()
print("### Every stall reason, in cycles per issued instruction (and registers, shared-load bank conflicts)")
print()
shown = [r for r in stalls if any(ncu_csv.value(row, f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio") >= 0.05
                                    for row in rows
                                    if f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" in row)]
print("| Step | Blocks | Registers | Bank conflicts | " + " | ".join(r.replace("_", " ") for r in shown) + " |")
print("| --- | --- | --- | --- |" + " --- |" * len(shown))
for label, row in zip(labels, rows):
    cells = [cell(row, f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio") for r in shown]
    print(f"| {label} | {cell(row, 'launch__grid_size', digits=0)} | {cell(row, 'launch__registers_per_thread', digits=0)} "
          f"| {cell(row, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum', digits=0)} | " + " | ".join(cells) + " |")
EOF

# Steps 6 and 7 and cuBLAS at every benchmark shape: where the cycles go as the shape grows, and
# the bytes each moves per FLOP. One ncu run per shape, profiling the exact check's first launches:
# cuBLAS's best (the reference above 2^30 multiply-adds), cublasGemmEx's default, step 6, step 7 (-c 4); the other
# steps run unprofiled. lts__t_bytes: all traffic through L2 (the SMs' reads, C's writes, DRAM
# fills); lts__t_sectors_srcunit_tex_op_read: the sectors (32 bytes) the SMs read from L2.
shape_metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg
shape_metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
shape_metrics+=,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum
for reason in $stalls; do
  shape_metrics+=,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio
done
: >"$work/shapes.csv"
for shape in "${shapes[@]}"; do
  IFS=x read -r m n k <<<"$shape"
  run_or_skip --quiet ncu_shapes ncu --clock-control none --metrics "$shape_metrics" \
    -k 'regex:^tc_(persistent|clusters)|nvjet|gemm|xmma|cutlass' -c 4 \
    -o "$work/shape_$m-$n-$k" "$program" --m "$m" --n "$n" --k "$k" --check-only
  if [ "$status" -ne 0 ]; then
    printf '%s\n' "$output"
    echo "ncu failed on: $program --m $m --n $n --k $k --check-only"
    exit 1
  fi
  # The shape goes in a column of its own, before ncu's (the header's first cell becomes "Shape").
  ncu --import "$work/shape_$m-$n-$k.ncu-rep" --page raw --csv --print-units base >"$work/one.csv" || exit 1
  sed -e 's/^"ID"/"Shape","ID"/' -e t -e "s/^\"/\"${m}x${n}x${k}\",\"/" "$work/one.csv" >>"$work/shapes.csv"
done

echo
echo "### Steps 6 and 7 and cuBLAS BF16 at every shape (--clock-control none)"
echo
echo "Bytes per FLOP: bytes over 2 * M * N * K. Stalls: cycles per issued instruction, the top three."
echo
python3 - "$work/shapes.csv" "$scripts" "$stalls" <<'EOF'
import csv
import sys

sys.path.insert(0, sys.argv[2])
import ncu_csv

stalls = sys.argv[3].split()
rows, header, units_next = [], None, False
library = {}  # per shape: the library's labels in launch order (its best, then the default)
for row in csv.reader(line for line in open(sys.argv[1]) if line.startswith('"')):
    if row[:2] == ["Shape", "ID"]:
        header, units_next = row, True
    elif units_next:
        units_next = False
    elif header:
        rows.append(dict(zip(header, row)))
print("| Shape | Kernel | Duration | SM cycles | Tensor pipe busy | L2 bytes / FLOP | SM reads from L2 / FLOP "
      "| DRAM reads / FLOP | Top stalls |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for row in rows:
    m, n, k = (int(x) for x in row["Shape"].split("x"))
    flops = 2.0 * m * n * k
    name = row["Kernel Name"]
    labels = library.setdefault(row["Shape"], iter(["cuBLAS BF16 best", "cuBLAS BF16 default"]))
    label = "step 6" if "tc_persistent" in name else "step 7" if "tc_clusters" in name else next(labels, "cuBLAS BF16")
    v = lambda metric: ncu_csv.value(row, metric)
    ranked = sorted(((v(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"), r.replace("_", " "))
                     for r in stalls), reverse=True)[:3]
    print(f"| {m} x {n} x {k} | {label} | {v('gpu__time_duration.sum') / 1e3:,.0f} us "
          f"| {v('sm__cycles_elapsed.avg'):,.0f} "
          f"| {v('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active'):.1f} % "
          f"| {v('lts__t_bytes.sum') / flops:.4f} | {32 * v('lts__t_sectors_srcunit_tex_op_read.sum') / flops:.4f} "
          f"| {v('dram__bytes_read.sum') / flops:.4f} | " + ", ".join(f"{r} {x:.2f}" for x, r in ranked) + " |")
EOF
echo
echo "Raw ncu output (CSV):"
echo
cat "$work/raw.csv"
cat "$work/shapes.csv"
