#!/usr/bin/env bash
# The full GPU check on a machine of two or more GPUs, in three parts short enough for a lent
# machine's ten-minute calls. The one-GPU work runs in two lanes at once, each on a GPU of its
# own, so no benchmark shares its GPU; chapter 08 (every GPU) then runs alone.
#   part 1: build
#   part 2: GPU 1: every test and sanitizer run but chapter 08's, then chapter 06's benchmarks;
#           GPU 0: chapter 07's benchmarks (the longest), then the other one-GPU benchmarks
#   part 3: chapter 08's tests, sanitizer runs and benchmarks on every GPU; then the record
#           (scripts/results.py), from every part
# Usage: scripts/gpu-check-lanes.sh 1|2|3 <results-dir> [archive]
# <results-dir> must lie outside a source tree that is copied afresh between the parts; it starts
# as a copy of docs/results/. With [archive], the part ends by packing <results-dir> and the
# check's logs into that .tar.gz (what a lent machine sends back).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
part=${1:-} results=${2:-} archive=${3:-}
if [[ ! $part =~ ^[123]$ ]] || [ -z "$results" ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
check=$root/scripts/gpu-check.sh
logs=${BUILD_DIR:-$root/build-gpu}/gpu-check-logs
multi='^08_'      # chapter 08: needs every GPU
if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')" -lt 2 ]; then
  echo "gpu-check-lanes: needs two GPUs; use scripts/gpu-check.sh on a machine of one"
  exit 77
fi
[ -d "$results" ] || cp -r "$root/docs/results" "$results"

failed=0
if [ "$part" = 1 ]; then
  "$check" --steps build "$results" || failed=1
elif [ "$part" = 2 ]; then
  # Two lanes of about the same length, each on a GPU of its own.
  (lane=0
   GPU_CHECK_DEVICE=1 CTEST_EXCLUDE=$multi "$check" --steps test,sanitize "$results" || lane=1
   GPU_CHECK_DEVICE=1 GPU_CHECK_PART=ch06 CTEST_REGEX='^06_' "$check" --steps benchmark "$results" || lane=1
   exit $lane) >"$logs/lane-gpu1.txt" 2>&1 &
  lane1=$!
  GPU_CHECK_DEVICE=0 GPU_CHECK_PART=ch07 CTEST_REGEX='^07_' "$check" --steps benchmark "$results" ||
    failed=1
  GPU_CHECK_DEVICE=0 GPU_CHECK_PART=short CTEST_EXCLUDE="$multi|^0[67]_" \
    "$check" --steps benchmark "$results" || failed=1
  wait $lane1 || failed=1
  cat "$logs/lane-gpu1.txt"
else
  GPU_CHECK_PART=multi CTEST_REGEX=$multi "$check" --steps test,sanitize,benchmark "$results" ||
    failed=1
  "$check" --steps record "$results" || failed=1
fi
if [ -n "$archive" ]; then
  tar -czf "$archive" -C "$(dirname "$results")" "$(basename "$results")" \
    -C "$(dirname "$logs")" "$(basename "$logs")"
fi
exit $failed
