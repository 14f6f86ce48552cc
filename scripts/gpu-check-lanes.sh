#!/usr/bin/env bash
# The full GPU check on a machine of two or more GPUs, in parts short enough for a lent machine's
# ten-minute calls. The one-GPU work runs in lanes side by side, each on a GPU of its own, so no
# benchmark shares its GPU; chapter 08 (every GPU) then runs alone, and again on two of them.
#   part 1: build
#   part 2: four GPUs or more: GPU 0 chapter 07's benchmarks (the longest); GPU 1 every test but
#           chapter 08's, then the other one-GPU benchmarks; GPU 2 every sanitizer run but chapter
#           08's; GPUs 2 and 3 the fault tests on the old commit, then GPU 3 chapter 06's benchmarks.
#           Two GPUs: GPU 1 the tests, sanitizer runs and chapter 06's benchmarks; GPU 0 chapter 07's
#           benchmarks, the other one-GPU benchmarks and the old commit's fault tests on both GPUs.
#   part 3: chapter 08's tests and sanitizer runs on every GPU (the _2gpus tests on two of them)
#   part 4: chapter 08's benchmarks; then the record (scripts/results.py), from every part
# Usage: scripts/gpu-check-lanes.sh 1|2|3|4 <results-dir> [archive]
# <results-dir> must lie outside a source tree that is copied afresh between the parts; it starts
# as a copy of docs/results/. With [archive], the part ends by packing <results-dir> and the
# check's logs into that .tar.gz (what a lent machine sends back).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
part=${1:-} results=${2:-} archive=${3:-}
if [[ ! $part =~ ^[1234]$ ]] || [ -z "$results" ]; then
  sed -n '2,17p' "$0" >&2
  exit 2
fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
check=$root/scripts/gpu-check.sh
logs=${BUILD_DIR:-$root/build-gpu}/gpu-check-logs
multi='^08_'      # chapter 08: needs every GPU
old='^08_old_commit'  # the fault tests on an old commit: two GPUs of their own
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$gpus" -lt 2 ]; then
  echo "gpu-check-lanes: needs two GPUs; use scripts/gpu-check.sh on a machine of one"
  exit 77
fi
[ -d "$results" ] || cp -r "$root/docs/results" "$results"

failed=0
if [ "$part" = 1 ]; then
  "$check" --steps build "$results" || failed=1
elif [ "$part" = 2 ] && [ "$gpus" -ge 4 ]; then
  lane() {  # lane <gpu> <name> <commands...>: in the background, its output to lane-<name>.txt
    local gpu=$1 name=$2
    shift 2
    (GPU_CHECK_DEVICE=$gpu "$@") >"$logs/lane-$name.txt" 2>&1 &
  }
  lane 0 ch07 env GPU_CHECK_PART=ch07 CTEST_REGEX='^07_' "$check" --steps benchmark "$results"
  lane 1 tests bash -c 'CTEST_EXCLUDE="$3" "$1" --steps test "$2"; a=$?
    GPU_CHECK_PART=short CTEST_EXCLUDE="$3|^0[67]_" "$1" --steps benchmark "$2"; b=$?
    [ $a$b = 00 ]' lane "$check" "$results" "$multi"
  lane 2 sanitize env CTEST_EXCLUDE=$multi "$check" --steps sanitize "$results"
  # The old commit's fault tests time hangs, not speed: they may share GPU 2 with the sanitizers.
  lane 2,3 old-then-ch06 bash -c 'GPU_CHECK_PART=old CTEST_REGEX="$3" "$1" --steps benchmark "$2"; a=$?
    GPU_CHECK_DEVICE=3 GPU_CHECK_PART=ch06 CTEST_REGEX="^06_" "$1" --steps benchmark "$2"; b=$?
    [ $a$b = 00 ]' lane "$check" "$results" "$old"
  for job in $(jobs -p); do wait "$job" || failed=1; done
  cat "$logs"/lane-*.txt
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
  GPU_CHECK_PART=old CTEST_REGEX=$old "$check" --steps benchmark "$results" || failed=1
  cat "$logs/lane-gpu1.txt"
elif [ "$part" = 3 ]; then
  GPU_CHECK_PART=multi CTEST_REGEX=$multi "$check" --steps test,sanitize "$results" || failed=1
else
  GPU_CHECK_PART=multi CTEST_REGEX=$multi CTEST_EXCLUDE=$old "$check" --steps benchmark "$results" || failed=1
  "$check" --steps record "$results" || failed=1
fi
if [ -n "$archive" ]; then
  tar -czf "$archive" -C "$(dirname "$results")" "$(basename "$results")" \
    -C "$(dirname "$logs")" "$(basename "$logs")"
fi
exit $failed
