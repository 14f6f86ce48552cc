#!/usr/bin/env bash
# The fair race of two prebuilt 07_tensor_cores programs in one call on the GPU machine: exact and
# random checks of both at small odd sizes, the full race (four shapes) of the first (unless FULL=0),
# then both on the shapes named in SHAPES, alternating. Logs go to $OUT (or /tmp/race), few files
# (the GPU machine returns only a handful); the race tables last.
#
# Usage, from the repository root:
#   07_optimization/tensor_cores/tune_race.sh <base program> <candidate program>
#   SHAPES="8192x14336x8192 8192x8192x8192": the shapes the candidate races on beside the base
#   CHECKED="program...": the programs checked at the small sizes (default: both)
set -u
base=$1 candidate=$2
out=${OUT:-/tmp/race}
mkdir -p "$out"
chmod +x "$base" "$candidate" 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv,noheader | tee "$out/gpu.txt"
date -u '+%Y-%m-%d %H:%M UTC' | tee -a "$out/gpu.txt"

for program in ${CHECKED:-$base $candidate}; do
  for shape in 1x1x1 33x33x33 65x129x17 256x256x128 1000x777x520; do
    IFS=x read -r m n k <<<"$shape"
    timeout 60 "$program" --m "$m" --n "$n" --k "$k" --check-only >>"$out/checks.txt" 2>&1
    echo "check $(basename "$program") $shape: exit $?" | tee -a "$out/checks.txt"
  done
done

if [ "${FULL:-1}" != 0 ]; then
  start=$SECONDS
  timeout 300 "$base" >"$out/race-full-$(basename "$base").txt" 2>&1
  echo "full race $(basename "$base"): exit $?, $((SECONDS - start)) s"
fi
for shape in ${SHAPES:-8192x14336x8192}; do
  IFS=x read -r m n k <<<"$shape"
  for program in "$candidate" "$base" "$candidate" "$base"; do
    start=$SECONDS
    timeout 60 "$program" --m "$m" --n "$n" --k "$k" >>"$out/race-$(basename "$program").txt" 2>&1
    echo "race $(basename "$program") $shape: exit $?, $((SECONDS - start)) s"
  done
done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader

for f in "$out"/race-*.txt; do
  echo "== $(basename "$f")"
  grep -E "^NVML|^\| *(cuBLAS BF16|[0-9] |mma.sync)|^### |Goal: (step [67]|every)" "$f"
done
