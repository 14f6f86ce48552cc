#!/usr/bin/env bash
# Issue 44 (chapter 05's lessons streams, graphs, atomics, debugging), on the GPU machine:
# verification tests, the benchmarks with their goal lines, compute-sanitizer on every new
# program (memcheck; racecheck on the histogram and the message), and the cuda-gdb transcript.
#   usage (repo root, after `cmake --preset default && cmake --build build -j`):
#     scripts/dev/concurrency.sh <output folder>          (<= 4 min on one H200)
set -uo pipefail
out=${1:?usage: $0 <output folder>}
mkdir -p "$out"
bin=build/bin
summary=()
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# run <name> <seconds> <command...>: the full log in $out/<name>.log; the exit status, the goal
# lines and any failed check into the summary.
# Whatever would start after 210 s is left out (and said so), to stay within 4 minutes.
run() {
  local name=$1 limit=$2
  shift 2
  if [ "$SECONDS" -gt 210 ]; then
    summary+=("$(printf '%-32s not run: out of time' "$name")")
    : > "$out/$name.log"
    return
  fi
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  summary+=("$(printf '%-32s exit %s' "$name" "$?")")
  local line
  while IFS= read -r line; do summary+=("    $line"); done < <(
    grep -hE '^(Goal:|Max error: [^0]|Check FAILED|Relative error.*FAILED)' "$out/$name.log" | head -6)
}

run ctest 100 ctest --test-dir build -R '^05_(streams|graphs|histogram|memory_order|debugging)' -E cuda_gdb \
  --output-on-failure
summary+=("    $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)")
run streams 30 "$bin/05_streams"
run streams_per_thread 20 "$bin/05_streams_per_thread" --check-only
run graphs 20 "$bin/05_graphs"
run histogram 40 "$bin/05_histogram"
run memory_order 20 "$bin/05_memory_order"
run debugging 10 "$bin/05_debugging" --trace
run cuda_gdb 60 bash 05_nsys_profiling/debugging/cuda_gdb_session.sh "$bin/05_debugging_g"
summary+=("    $(tail -1 "$out/cuda_gdb.log")")

# sanitize <tool> <name> <command...>
sanitize() {
  local tool=$1 name=$2
  shift 2
  run "sanitize_${tool}_$name" 25 "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 "$@"
  summary+=("    $(grep -E 'ERROR SUMMARY' "$out/sanitize_${tool}_$name.log" | tail -1)")
}
sanitize memcheck streams "$bin/05_streams" --n 65536 --chunks 4 --check-only --skip-part3
sanitize memcheck graphs "$bin/05_graphs" --length 10 --check-only
sanitize memcheck histogram "$bin/05_histogram" --n 100003 --check-only
sanitize racecheck histogram "$bin/05_histogram" --n 100003 --check-only
sanitize memcheck memory_order "$bin/05_memory_order" --rounds 2 --check-only
sanitize racecheck memory_order "$bin/05_memory_order" --rounds 2 --check-only
sanitize memcheck debugging "$bin/05_debugging" --rows 100

echo "=== concurrency (issue 44) on GPU ${CUDA_VISIBLE_DEVICES:-all}: logs in $out"
printf '%s\n' "${summary[@]}" | head -40
