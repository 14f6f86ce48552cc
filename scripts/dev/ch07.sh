#!/usr/bin/env bash
# Issue 45 (chapter 07 past cuBLAS), on the GPU machine: the race against cuBLAS's best (cublasLt's
# top 8, each timed), short; the new kernels' checks at odd shapes and compute-sanitizer on them;
# an ncu one-shot that names cuBLAS's own SGEMM kernels and profiles step 7 and its last-wave split.
#   usage (repo root, after `cmake --preset default && cmake --build build -j`):
#     scripts/dev/ch07.sh <output folder>          (<= 4 min on one H200)
set -uo pipefail
out=${1:?usage: $0 <output folder>}
mkdir -p "$out"
bin=build/bin
summary=()
note() { summary+=("$1"); }

run() {  # run <name> <seconds> <command...>: full log to $out/<name>.log, exit status to the summary
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  note "$(printf '%-30s exit %s' "$name" "$?")"
  grep -hE "^(Goal|Step 8, fastest)|FAILED" "$out/$name.log" | head -6 | sed 's/^/    /' > "$out/$name.goals"
  while IFS= read -r line; do summary+=("$line"); done < "$out/$name.goals"
}
shares() {  # shares <name> <row regex>: each shape's row of the race (time, TFLOP/s, share, rounds)
  grep -E "^(### M|\| ($2))" "$out/$1.log" | cut -c1-150 | sed 's/^/    /' > "$out/$1.shares"
  while IFS= read -r line; do summary+=("$line"); done < "$out/$1.shares"
}

# Checks at odd shapes: the split (3 shapes with a partial last wave), 8f (4 shapes), 07_sgemm (cuBLAS's
# best is now its reference above 2^30 multiply-adds) and 07_tensor_cores' usual ones.
run ctest 75 ctest --test-dir build -R '^07_(tensor_cores\.(split|size_65|verify)|sgemm\.(verify|prefetch|size_4097))' \
  --output-on-failure
note "    $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"

sanitize() {  # sanitize <tool> <name> <command...>
  local tool=$1 name=$2
  shift 2
  run "sanitize_${tool}_$name" 40 compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 "$@"
  note "    $(grep -E 'ERROR SUMMARY' "$out/sanitize_${tool}_$name.log" | tail -1)"
}
# A small shape with a partial last wave on 66 cluster slots: 69 cluster tiles, 3 left over, whose 12
# k-tiles go to 12 clusters (the other shares are empty).
sanitize memcheck tc_split "$bin/07_tensor_cores" --m 5800 --n 700 --k 200 --step 7 --last-wave-split --check-only
sanitize racecheck tc_split "$bin/07_tensor_cores" --m 5800 --n 700 --k 200 --step 7 --last-wave-split --check-only
sanitize memcheck sgemm_8f "$bin/07_sgemm" --m 65 --n 33 --k 17 --step 8 --register-prefetch --check-only
sanitize racecheck sgemm_8f "$bin/07_sgemm" --m 128 --n 128 --k 32 --step 8 --register-prefetch --check-only

# The short race: 2 rounds, step 7 and its split beside cuBLAS's best, at the four shapes.
run tc_race 90 "$bin/07_tensor_cores" --step 7 --rounds 2 --last-wave-split
shares tc_race '7 |x7'
run sgemm_4096 30 "$bin/07_sgemm" --m 4096 --n 4096 --k 4096 --step 8 --rounds 2 --register-prefetch
shares sgemm_4096 '8d|8f'
grep -h "cuBLAS's best at" "$out/tc_race.log" "$out/sgemm_4096.log" > "$out/cublas_best.txt"  # which candidates won

# ncu (clocks as the GPU sets them): cuBLAS's SGEMM kernels by name (8d's and 8f's times beside them, in
# the log), and step 7 vs its split.
if (( SECONDS > 170 )); then
  note "ncu skipped: ${SECONDS} s used of the 4 minutes"
elif command -v ncu > /dev/null; then
  run ncu_sgemm 25 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread \
    -c 14 "$bin/07_sgemm" --m 4096 --n 4096 --k 4096 --step 8 --register-prefetch --check-only
  # cuBLAS's kernels (the course's are sgemm_<step>): their names carry tile sizes and stages.
  grep -E 'gemm.*(Context|CC [0-9])' "$out/ncu_sgemm.log" | grep -vE '^ *(void )?sgemm_' | cut -c1-110 | sort |
    uniq -c | head -3 | sed 's/^/    /' > "$out/ncu_sgemm.names"
  while IFS= read -r line; do summary+=("$line"); done < "$out/ncu_sgemm.names"
  run ncu_tc 40 ncu --clock-control none --section SpeedOfLight -k regex:tc_clusters -c 2 \
    "$bin/07_tensor_cores" --m 8192 --n 14336 --k 8192 --step 7 --last-wave-split --check-only
  grep -E 'tc_clusters|Duration|Compute \(SM\) Throughput' "$out/ncu_tc.log" | head -6 | sed 's/^ */    /' > "$out/ncu_tc.top"
  while IFS= read -r line; do summary+=("$line"); done < "$out/ncu_tc.top"
fi

echo "=== ch07 (issue 45) on GPU ${CUDA_VISIBLE_DEVICES:-all}, ${SECONDS} s: logs in $out"
printf '%s\n' "${summary[@]}" | head -40
