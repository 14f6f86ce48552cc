#!/usr/bin/env bash
# One round of work on the Hopper steps on the GPU machine, in one call: build, exact and random
# checks at odd sizes and at the K bound, timings of the three benchmark shapes, compute-sanitizer,
# and (optionally) the ncu table. Prints a short table last; full logs go to $OUT (or /tmp).
#
# Usage, from the repository root: 07_optimization/tensor_cores/tune_hopper.sh [parts...]
#   parts: build check time sanitize ncu (default: build check time sanitize)
#   PROGRAM=path: use that 07_tensor_cores (e.g. one built on another x86-64 machine) instead of
#   build-tune's
set -u
root=$(pwd)
out=${OUT:-/tmp/tune}
mkdir -p "$out"
parts=${*:-build check time sanitize}
build=$root/build-tune
program=${PROGRAM:-$build/bin/07_tensor_cores}
summary=$out/summary.txt
: >"$summary"
has() { [[ " $parts " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$summary"
date -u '+%Y-%m-%d %H:%M UTC' | tee -a "$summary"

if has build; then
  start=$SECONDS
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    >"$out/configure.log" 2>&1 && cmake --build "$build" -j16 --target 07_tensor_cores >"$out/build.log" 2>&1
  status=$?
  echo "build: exit $status, $((SECONDS - start)) s" | tee -a "$summary"
  if [ "$status" -ne 0 ]; then grep -E "error|Error" "$out/build.log" | head -30; exit 1; fi
fi

if has check; then
  for size in "1 1 1" "127 129 33" "1000 3000 1000" "300 200 16384" "16384 72 136" "8 16384 264"; do
    read -r m n k <<<"$size"
    log=$out/check.tmp
    timeout 60 "$program" --m "$m" --n "$n" --k "$k" --check-only >"$log" 2>&1
    status=$?
    zero=$(grep -c "^Max error: 0 " "$log")
    bad=$(grep -E "^Max error:" "$log" | grep -vc "^Max error: 0 ")
    failed=$(grep -c "FAILED" "$log")
    echo "check ${m}x${n}x${k}: exit $status; exact checks at 0: $zero, not 0: $bad; FAILED lines: $failed" |
      tee -a "$summary"
    grep -E "FAILED|^Max error: [^0]|CUDA error|gave up|cuBLAS error|[Ee]xception" "$log" | head -8 | tee -a "$summary"
    cat "$log" >>"$out/checks.log"
    rm -f "$log"
  done
fi

if has sanitize; then
  for tool in memcheck racecheck synccheck; do
    log=$out/sanitize.tmp
    timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$program" --m 130 --n 264 --k 200 --check-only \
      >"$log" 2>&1
    echo "compute-sanitizer $tool (130x264x200, every step): exit $?, $(grep -m1 'ERROR SUMMARY' "$log")" |
      tee -a "$summary"
    cat "$log" >>"$out/sanitize.log"
    rm -f "$log"
  done
fi

if has time; then
  timeout 240 "$program" --runs 10 >"$out/time.log" 2>&1
  echo "timing run: exit $?" | tee -a "$summary"
  grep -E "^Goal|NOT met" "$out/time.log" | tee -a "$summary"
  python3 - "$out/time.log" <<'EOF' | tee -a "$summary"
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("SUMMARY ")][-1]
figures = json.loads(line[len("SUMMARY "):])["figures"]
shapes = ["4096", "8192", "4096x14336x4096"]
print("| step | " + " | ".join(shapes) + " | lowest |")
print("| --- |" + " --- |" * (len(shapes) + 1))
print("| cuBLAS BF16 TFLOP/s | " + " | ".join(str(figures.get(f"cublas_bf16_tflops_{s}")) for s in shapes) + " | |")
for key in ["step1", "step2", "step3", "step4", "step5", "step6", "step7", "mma_sync_peak"]:
    values = [figures.get(f"{key}_pct_{s}") for s in shapes]
    if all(v is None for v in values):
        continue
    lowest = min(v for v in values if v is not None)
    print(f"| {key} % | " + " | ".join(str(v) for v in values) + f" | {lowest} |")
EOF
fi

if has ncu; then
  timeout 240 bash "$root/07_optimization/tensor_cores/ncu_steps.sh" "$program" >"$out/ncu.log" 2>&1
  echo "ncu: exit $?" | tee -a "$summary"
  sed -n '1,/^Raw/p' "$out/ncu.log" | head -40 | tee -a "$summary"
fi

echo
echo "=== summary ==="
cat "$summary"
