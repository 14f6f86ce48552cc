#!/usr/bin/env bash
# Development runs for issue 46 (newcomer), on the GPU in CUDA_VISIBLE_DEVICES, after
# `cmake --preset default && cmake --build build -j`. Full logs to $1; a short summary last.
#   1. the transpose variants and the course's own transpose_tiled<4>, <8> against the copy,
#      interleaved (scripts/dev/newcomer_transpose.cu);
#   2. the order of transpose_tiled<8>'s loads and shared-memory stores in the sm_90 SASS
#      (every load before the first store, as launch_params.cu's comment says);
#   3. 03_launch_params at its benchmark size twice (its race in rounds) and at 16384 x 16384;
#   4. the ctest tests of 03_launch_params (checks, compute-sanitizer, benchmark);
#   5. last, with what is left of the time: 03_launch_params at 65536 x 65536 (its checks now on
#      the GPU; did not finish in 100 s before).
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
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)

step transpose_build 60 nvcc -O3 -std=c++17 -arch=sm_90 -I common/include scripts/dev/newcomer_transpose.cu \
  -o "${TMPDIR:-/tmp}/newcomer_transpose"
step transpose_variants 60 "${TMPDIR:-/tmp}/newcomer_transpose"
step sass_order 20 bash -c "'$cuobjdump' -sass -arch sm_90 -fun _Z15transpose_tiledILi8EEviiiPKjPj build/bin/03_launch_params \
  | grep -oE '(LDG|STS|BAR)[A-Z.]*' | sed 's/\..*//' | tr '\n' ' '"
step launch_params_8192 30 build/bin/03_launch_params --rows 8192 --cols 8192
step launch_params_8192_again 30 build/bin/03_launch_params --rows 8192 --cols 8192
step launch_params_16384 40 build/bin/03_launch_params --rows 16384 --cols 16384 --stream-n 1
step ctest 60 ctest --test-dir build -R '^03_launch_params' --output-on-failure
step launch_params_65536 100 build/bin/03_launch_params --rows 65536 --cols 65536 --runs 3 --stream-n 1

echo "== newcomer: summary (logs in $out) =="
printf '%s\n' "${summary[@]}"
{
  grep -h -e '% of copy, median' -e 'T32 32x[48] (' -e '^  course' "$out/transpose_variants.log"
  echo "transpose_tiled<8> sm_90: $(cat "$out/sass_order.log")"
  for run in 8192 8192_again 16384 65536; do
    echo "-- 03_launch_params $run:"
    grep -h '^| transpose_tiled<\|Goal\|cudaMemcpy' "$out/launch_params_$run.log" |
      awk -F'|' 'NF > 1 { print $2 $5 $6 $7 $8; next } { print }' 
  done
  grep -h 'tests passed\|tests failed out of' "$out/ctest.log"
} 2>/dev/null
