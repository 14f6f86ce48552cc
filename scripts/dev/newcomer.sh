#!/usr/bin/env bash
# Development runs for issue 46 (newcomer), on the GPU in CUDA_VISIBLE_DEVICES, after
# `cmake --preset default && cmake --build build -j`. Full logs to $1; a short summary last.
#   1. the transpose variants against the copy, interleaved (scripts/dev/newcomer_transpose.cu);
#   2. 03_launch_params at its benchmark size (five transposes);
#   3. 06's GELU and square on x[k:] against PyTorch, interleaved (float2 path for x[2:], 32-bit
#      indices for x[1:] and x[3:]), and one view past 2^30 floats (64-bit indices);
#   4. the ctest tests of both programs, and compute-sanitizer (memcheck) on 06's kernels;
#   5. last, with what is left of the time: 03_launch_params at 65536 x 65536 (refused before).
set -uo pipefail
out=${1:?usage: scripts/dev/newcomer.sh OUTPUT_FOLDER}
mkdir -p "$out"
summary=()
budget=225  # seconds for all the steps: the script stays under 4 minutes
step() {  # step <name> <seconds> <command...>: run (at most what is left of the budget), log, keep the exit status
  local name=$1 seconds=$2
  shift 2
  local started=$SECONDS
  [ $((budget - SECONDS)) -lt "$seconds" ] && seconds=$((budget - SECONDS))
  if [ "$seconds" -le 5 ]; then summary+=("$name: not run (out of time)"); return 1; fi
  timeout "$seconds" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  summary+=("$name: exit $rc, $((SECONDS - started)) s")
  return $rc
}

step transpose_build 60 nvcc -O3 -std=c++17 -arch=sm_90 -I common/include scripts/dev/newcomer_transpose.cu \
  -o "${TMPDIR:-/tmp}/newcomer_transpose"
step transpose_variants 60 "${TMPDIR:-/tmp}/newcomer_transpose"
step launch_params_8192 30 build/bin/03_launch_params --rows 8192 --cols 8192
step gelu_views 60 env PYTHONPATH=build/06_torch_extension/pkg python3 scripts/dev/newcomer_gelu_views.py
step ctest 60 ctest --test-dir build -R '^(03_launch_params|06_torch_extension\.verify)' --output-on-failure
step sanitize_06 70 env PYTHONPATH=build/06_torch_extension/pkg compute-sanitizer --tool memcheck --error-exitcode 99 \
  python3 06_torch_extension/demos/sanitizer_check.py
step launch_params_65536 100 build/bin/03_launch_params --rows 65536 --cols 65536 --runs 3 --stream-n 1

echo "== newcomer: summary (logs in $out) =="
printf '%s\n' "${summary[@]}"
{
  grep -h -A8 '% of copy, median' "$out/transpose_variants.log"
  grep -h 'Goal' "$out"/launch_params_*.log
  tail -n 9 "$out/gelu_views.log"
  grep -h 'tests passed\|tests failed out of' "$out/ctest.log"
  grep -h 'ERROR SUMMARY' "$out/sanitize_06.log" | tail -n 1
} 2>/dev/null
