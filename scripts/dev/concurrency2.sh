#!/usr/bin/env bash
# Issue 44, round 2 (chapter 05's lessons), on the GPU machine: the histogram race with its fourth
# kernel (a copy per lane), the message, the lessons' tests, and the four compute-sanitizer tools
# on every run the GPU check registers (SANITIZE_ARGS, copied from the lessons' CMakeLists.txt).
#   usage (repo root, after `cmake --preset default && cmake --build build -j`):
#     scripts/dev/concurrency2.sh <output folder>          (<= 4 min on one H200)
set -uo pipefail
out=${1:?usage: $0 <output folder>}
mkdir -p "$out"
bin=build/bin
summary=()
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# run <name> <seconds> <command...>: the full log in $out/<name>.log; the exit status, the goal
# lines, any failed check and the sanitizer's summary into the summary. Whatever would start
# after 215 s is left out (and said so), to stay within 4 minutes.
run() {
  local name=$1 limit=$2
  shift 2
  if [ "$SECONDS" -gt 215 ]; then
    summary+=("$(printf '%-34s not run: out of time' "$name")")
    return
  fi
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  summary+=("$(printf '%-34s exit %-3s %s' "$name" "$?" \
    "$(grep -ohE '(ERROR|RACECHECK) SUMMARY: .*' "$out/$name.log" | tail -1)")")
  local line
  while IFS= read -r line; do summary+=("    $line"); done < <(
    grep -hE '^(Goal:|Max error: [^0]|Check FAILED|\| 4 shared|\| 2 shared|\| CUB)' "$out/$name.log" | head -8)
}

run histogram 60 "$bin/05_histogram"
run memory_order 20 "$bin/05_memory_order"
run ctest 60 ctest --test-dir build -R '^05_(streams|graphs|histogram|memory_order|debugging)' -E cuda_gdb \
  --output-on-failure
summary+=("    $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)")

# The registered sanitizer runs: <target> <its SANITIZE_ARGS>, each under the four tools.
sanitized=(
  "05_graphs --length 10 --check-only --skip-refused"
  "05_memory_order --rounds 2 --check-only --correct-only"
  "05_histogram --n 100003 --check-only"
  "05_debugging --rows 100"
  "05_streams --n 65536 --chunks 4 --check-only --skip-part3"
  "05_streams_per_thread --n 65536 --chunks 4 --check-only --skip-part3"
)
for entry in "${sanitized[@]}"; do
  read -r -a words <<< "$entry"
  for tool in memcheck racecheck initcheck synccheck; do
    run "${words[0]}.$tool" 40 "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 \
      "$bin/${words[0]}" "${words[@]:1}"
  done
done

echo "=== concurrency2 (issue 44) on GPU ${CUDA_VISIBLE_DEVICES:-all}: logs in $out"
printf '%s\n' "${summary[@]}" | head -40
