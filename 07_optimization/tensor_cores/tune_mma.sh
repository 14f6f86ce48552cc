#!/usr/bin/env bash
# One round of work on steps 2 and 3 on a GPU machine, in one call: build, check, time, profile.
#
# Usage: bash 07_optimization/tensor_cores/tune_mma.sh [build folder] [output folder]
#   (defaults: build-tune, and the current folder). Run from the repository root.
#
# 1. builds 07_tensor_cores for the GPU's architecture (the compiler's resource report kept);
# 2. the exact and random checks of every step at odd sizes and at the K bound (16384);
# 3. compute-sanitizer memcheck, racecheck and synccheck on steps 2 and 3, at an odd size;
# 4. the three benchmark shapes, every step, --runs 10;
# 5. ncu on steps 2 and 3 at 4096^3: tensor pipe, issue, stalls, shared-memory bank conflicts;
# 6. the SASS instruction mix of their main loops.
# Prints a short summary last; the output folder gets summary.txt, ncu.csv, sass.txt (steps 2
# and 3) and logs.tgz (everything else).
set -u
build=${1:-build-tune}
out=${2:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
logs=$out/logs
mkdir -p "$logs"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
arch=${cc/./}
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
     -DCMAKE_CUDA_FLAGS="-Xptxas -v" >"$logs/configure.log" 2>&1 ||
   ! cmake --build "$build" -j "$(nproc)" --target 07_tensor_cores >"$logs/build.log" 2>&1; then
  tail -n 40 "$logs/configure.log" "$logs/build.log"
  echo "tune: the build failed"
  exit 1
fi
program=$build/bin/07_tensor_cores
note "-- registers and spills (ptxas)"
grep -A2 -E "Compiling entry function '_ZN2tc(16tc_cp_async_wmma|15tc_mma_ldmatrix)" "$logs/build.log" |
  grep -E "entry|spill|Used" | sed 's/ptxas info    : //' | tee -a "$summary"

note "-- checks (exact: Max error 0; random: within the bound)"
checks_ok=1
for size in "1 1 1" "33 33 33" "65 129 17" "127 129 33" "1000 777 520" "300 200 4100" "4097 4097 4097" \
            "130 264 16384" "256 256 128"; do
  set -- $size
  if "$program" --m "$1" --n "$2" --k "$3" --check-only >"$logs/check_$1x$2x$3.log" 2>&1; then
    note "pass  $1 x $2 x $3"
  else
    note "FAIL  $1 x $2 x $3"; checks_ok=0; tail -n 20 "$logs/check_$1x$2x$3.log"
  fi
done

note "-- compute-sanitizer (steps 2 and 3)"
for tool in memcheck racecheck synccheck; do
  for step in 2 3; do
    for size in "130 264 200"; do  # whole tiles (the fast copies) and edges in k and m
      set -- $size
      log=$logs/sanitize_${tool}_$step.log
      compute-sanitizer --tool "$tool" --error-exitcode 1 "$program" --m "$1" --n "$2" --k "$3" \
        --check-only --step "$step" >>"$log" 2>&1
      note "$([ $? -eq 0 ] && echo clean || echo ERRORS) $tool step $step $1 x $2 x $3: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)"
    done
  done
done

note "-- timings (--runs 10, every step)"
"$program" --runs 10 >"$logs/bench.log" 2>&1
echo "exit status $?" >>"$logs/bench.log"
grep -E '^### |^\| [0-9]|^\| cuBLAS BF16|^\| mma.sync|Goal|goal' "$logs/bench.log" | tee -a "$summary"

note "-- ncu, 4096^3, steps 2 and 3"
metrics=gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
metrics+=,sm__inst_executed_pipe_tensor_op_hmma.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum
for reason in barrier short_scoreboard long_scoreboard math_pipe_throttle mio_throttle wait not_selected \
              selected dispatch_stall lg_throttle no_instruction branch_resolving; do
  metrics+=,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio
done
ncu --clock-control none --csv --metrics "$metrics" -k 'regex:tc_cp_async_wmma|tc_mma_ldmatrix' -c 2 \
  "$program" --m 4096 --n 4096 --k 4096 --check-only >"$out/ncu.csv" 2>&1
python3 - "$out/ncu.csv" <<'EOF' | tee -a "$summary"
import csv, sys
rows = {}
for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if r[0] == "ID":
        head = r
        continue
    d = dict(zip(head, r))
    rows.setdefault(d["Kernel Name"].split("(")[0].split("::")[-1], {})[d["Metric Name"]] = d["Metric Value"]
for name, m in rows.items():
    print(name)
    for k, v in m.items():
        print(f"  {k.replace('smsp__average_warps_issue_stalled_', 'stall ').replace('_per_issue_active.ratio', '')}: {v}")
EOF

note "-- SASS instruction mix (whole kernel, static count)"
cuobjdump -sass "$program" 2>/dev/null | awk '/Function : /{keep = /tc_cp_async_wmma|tc_mma_ldmatrix/} keep' >"$out/sass.txt"
python3 - "$out/sass.txt" <<'EOF' | tee -a "$summary"
import re, sys, collections
current, mix = None, collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m:
        current = m.group(1) if ("tc_cp_async_wmma" in m.group(1) or "tc_mma_ldmatrix" in m.group(1)) else None
        continue
    m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
    if current and m:
        mix[current][m.group(1)] += 1
for k, c in mix.items():
    print(k, sum(c.values()), "instructions:", ", ".join(f"{op} {n}" for op, n in c.most_common(14)))
EOF
tar -czf "$out/logs.tgz" -C "$out" logs && rm -rf "$logs"
[ "$checks_ok" = 1 ] || { note "tune: some checks FAILED"; exit 1; }
