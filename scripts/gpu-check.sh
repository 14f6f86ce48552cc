#!/usr/bin/env bash
# The course's GPU check, run on a machine with an NVIDIA GPU:
#   1. build every chapter for this GPU,
#   2. run the full ctest; on a GPU machine nothing may be skipped,
#   3. run every chapter program under compute-sanitizer (memcheck, racecheck, initcheck, synccheck),
#   4. run the benchmarks the chapters register,
#   5. write the record of the run to docs/results/ (or the folder given).
#
# Usage: scripts/gpu-check.sh [results-dir]
# Environment: BUILD_DIR (default build-gpu), SKIP_SANITIZER=1, SKIP_BENCHMARKS=1, CTEST_REGEX=<regex>,
#              TUTORIAL_COMMIT=<commit> (for a copy of the tree without git history).
# Exit status: 0 when every step passed, 1 otherwise, 77 when there is no GPU.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
results=$(mkdir -p "${1:-$root/docs/results}" && cd "${1:-$root/docs/results}" && pwd)
build=${BUILD_DIR:-$root/build-gpu}
jobs=$(nproc)
logs=$build/gpu-check-logs
failures=()

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU here (nvidia-smi missing or sees no device); nothing to check."
  exit 77
fi

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
compute_cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
driver_cuda=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
nvcc_version=$(nvcc --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 (\2)/p')
started=$(date -u '+%Y-%m-%d %H:%M UTC')
# A copy of the tree without its git history (a lent GPU machine) can name its commit in TUTORIAL_COMMIT.
if [ -n "${TUTORIAL_COMMIT:-}" ]; then
  commit=$TUTORIAL_COMMIT
else
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then commit="$commit (with uncommitted changes)"; fi
fi
echo "gpu-check: $gpu_name (compute capability $compute_cap), driver $driver, nvcc $nvcc_version"

step() { printf '\n== %s ==\n' "$*"; }

# --- 1. Build for this GPU ------------------------------------------------
step "configure and build for sm_${compute_cap/./}"
rm -rf "$logs" && mkdir -p "$logs"
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CUDA_ARCHITECTURES="${compute_cap/./}" >"$logs/configure.log" 2>&1 ||
   ! cmake --build "$build" -j "$jobs" >"$logs/build.log" 2>&1; then
  cat "$logs/configure.log" "$logs/build.log" | tail -n 60
  echo "gpu-check: the build failed"
  failures+=("build")
fi

# --- 2. Every test; nothing may be skipped on a GPU machine ---------------
step "ctest"
ctest_args=(--test-dir "$build" --output-on-failure --timeout 300)
[ -n "${CTEST_REGEX:-}" ] && ctest_args+=(-R "$CTEST_REGEX")
ctest "${ctest_args[@]}" >"$logs/ctest.log" 2>&1
ctest_status=$?
ctest_summary=$(grep -E 'tests passed|tests failed' "$logs/ctest.log" | tail -n 1)
ctest_problems=$(sed -n '/The following tests \(FAILED\|did not run\)/,$p' "$logs/ctest.log" |
                 grep -E '^\s+[0-9]+ - ' || true)
echo "${ctest_summary:-ctest printed no summary}"
[ -n "$ctest_problems" ] && echo "$ctest_problems"
[ "$ctest_status" -ne 0 ] && failures+=("ctest")
grep -q '(Skipped)' <<<"$ctest_problems" && failures+=("ctest: tests were skipped on a GPU machine")

# --- 3. compute-sanitizer over every chapter program ----------------------
# Four programs at a time: each run is small and mostly waits on the sanitizer's own work.
sanitize_one() {  # <tool> <name> <command...>
  local tool=$1 name=$2
  shift 2
  timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 "$@" \
    >"$logs/sanitize-$name-$tool.log" 2>&1
  echo $? >"$logs/sanitize-$name-$tool.status"
}
export -f sanitize_one
export logs
sanitizer_rows=()
if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
  step "compute-sanitizer"
  jobs_file="$logs/sanitize-jobs.txt"
  : >"$jobs_file"
  while IFS=$'\t' read -r kind name command; do
    [ "$kind" = sanitize ] || continue
    for tool in memcheck racecheck initcheck synccheck; do
      echo "$tool $name $command" >>"$jobs_file"
    done
  done <"$build/gpu_commands.tsv"
  # shellcheck disable=SC2016  # $0 and $@ belong to the inner shell
  xargs -P 4 -L 1 bash -c 'sanitize_one "$0" "$@"' <"$jobs_file"
  while read -r tool name _; do
    log="$logs/sanitize-$name-$tool.log"
    status=$(cat "$logs/sanitize-$name-$tool.status" 2>/dev/null || echo missing)
    summary=$(grep -E '=+ (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | tail -n 1 | sed 's/^=* *//')
    verdict=clean
    if [ "$status" != 0 ]; then
      verdict="FAILED (exit $status)"
      failures+=("sanitizer: $name $tool")
      tail -n 30 "$log"
    fi
    sanitizer_rows+=("| $name | $tool | ${summary:-no summary} | $verdict |")
    echo "$name $tool: $verdict"
  done <"$jobs_file"
fi

# --- 4. Benchmarks ---------------------------------------------------------
benchmark_rows=()
if [ "${SKIP_BENCHMARKS:-0}" != 1 ]; then
  step "benchmarks"
  while IFS=$'\t' read -r kind name command; do
    [ "$kind" = benchmark ] || continue
    out="$results/$name.md"
    begin=$(date +%s)
    # shellcheck disable=SC2086
    (cd "$build" && timeout 600 $command) >"$logs/bench-$name.log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - begin ))
    {
      echo "# $name"
      echo
      echo "$gpu_name, driver $driver, CUDA $nvcc_version; $started; commit $commit."
      echo "Command: \`${command//$root\//}\` (exit status $status, ${seconds} s)"
      echo
      echo '```text'
      cat "$logs/bench-$name.log"
      echo '```'
    } >"$out"
    verdict=ok
    if [ "$status" -ne 0 ]; then
      verdict="FAILED (exit $status)"
      failures+=("benchmark: $name")
      tail -n 30 "$logs/bench-$name.log"
    fi
    benchmark_rows+=("| [$name]($name.md) | ${seconds} s | $verdict |")
    echo "$name: $verdict (${seconds} s)"
  done <"$build/gpu_commands.tsv"
fi

# The headline of each benchmark: its exact checks and its goal lines, for the root README.
if [ ${#benchmark_rows[@]} -gt 0 ]; then
  {
    echo "# headlines"
    echo
    echo "$gpu_name, driver $driver, CUDA $nvcc_version; $started; commit $commit."
    echo "Command: \`scripts/gpu-check.sh\` (the exact checks and goal lines of every benchmark output)"
    echo
    echo '```text'
    while IFS=$'\t' read -r kind name _; do
      [ "$kind" = benchmark ] || continue
      log="$logs/bench-$name.log"
      total=$(grep -c 'Max error:' "$log")
      exact=$(grep -cE 'Max error: 0([[:space:]]|$)' "$log")
      if [ "$total" -gt 0 ]; then
        echo "$name: $exact of $total exact checks read Max error: 0"
      else
        echo "$name:"
      fi
      grep -iE 'goal' "$log" | grep -E '(met|NOT met)\)?\.?$' | sed 's/^[-[:space:]]*/  /'
    done <"$build/gpu_commands.tsv"
    echo '```'
  } >"$results/headlines.md"
fi

# --- 5. The record ----------------------------------------------------------
cp "$logs/ctest.log" "$results/ctest.log"
{
  echo "# Latest GPU check"
  echo
  echo "Written by \`scripts/gpu-check.sh\`; do not edit by hand."
  echo
  echo "| | |"
  echo "| --- | --- |"
  echo "| device | $gpu_name (compute capability $compute_cap) |"
  echo "| driver | $driver (CUDA $driver_cuda) |"
  echo "| toolkit | nvcc $nvcc_version, $(cmake --version | head -n 1) |"
  echo "| date | $started |"
  echo "| commit | $commit |"
  echo "| ctest | ${ctest_summary:-no summary} ([log](ctest.log)) |"
  echo
  if [ -n "$ctest_problems" ]; then
    echo "Tests that failed or did not run:"
    echo
    echo '```text'
    echo "$ctest_problems"
    echo '```'
    echo
  fi
  if [ ${#sanitizer_rows[@]} -gt 0 ]; then
    echo "## compute-sanitizer"
    echo
    echo "| program | tool | summary | verdict |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${sanitizer_rows[@]}"
    echo
  fi
  if [ ${#benchmark_rows[@]} -gt 0 ]; then
    echo "## Benchmarks"
    echo
    echo "| output | time | verdict |"
    echo "| --- | --- | --- |"
    printf '%s\n' "${benchmark_rows[@]}"
    echo
  fi
  echo "## Verdict"
  echo
  if [ ${#failures[@]} -eq 0 ]; then
    echo "Every step passed."
  else
    echo "Problems:"
    printf -- '- %s\n' "${failures[@]}"
  fi
} >"$results/README.md"

step "summary"
echo "results written to $results"
if [ ${#failures[@]} -eq 0 ]; then
  echo "gpu-check: every step passed"
  exit 0
fi
printf 'gpu-check: FAILED: %s\n' "${failures[@]}"
exit 1
