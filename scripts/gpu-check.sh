#!/usr/bin/env bash
# The course's GPU check, run on a machine with an NVIDIA GPU. A thin driver over
# CTest labels; each step can run on its own (a lent GPU machine limits one call):
#   build      configure for this GPU with the GPU check's tests (-DTUTORIAL_GPU_CHECK=ON), build
#   test       every test but the sanitizer and benchmark runs (and the README-vs-record checks);
#              on a GPU machine nothing may be skipped
#   sanitize   `ctest -L sanitize`: every chapter program under memcheck, racecheck, initcheck, synccheck
#   benchmark  `ctest -L benchmark`: the timed runs, each kept as <results>/<name>.md
#   record     scripts/write-record.py: <results>/README.md and headlines.md from CTest's JUnit files
#
# Usage: scripts/gpu-check.sh [--steps build,test,sanitize,benchmark,record] [results-dir]
# Steps run in separate calls keep their logs in the build folder; the record also reads the
# benchmark outputs in results-dir, so where the source tree is copied afresh before each call
# (a lent GPU machine), run benchmark and record in one call or give a results-dir outside it.
# Environment: BUILD_DIR (default build-gpu), CTEST_REGEX=<regex> (run only matching tests),
#              TUTORIAL_COMMIT=<commit> (for a copy of the tree without git history).
# Exit status: 0 when every step run passed, 1 otherwise, 77 when there is no GPU.
set -uo pipefail

steps=build,test,sanitize,benchmark,record
if [ "${1:-}" = --steps ]; then
  steps=$2
  shift 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
results=$(mkdir -p "${1:-$root/docs/results}" && cd "${1:-$root/docs/results}" && pwd)
build=${BUILD_DIR:-$root/build-gpu}
logs=$build/gpu-check-logs
failed=0
wants() { [[ ",$steps," == *",$1,"* ]]; }
step() { printf '\n== %s ==\n' "$*"; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU here (nvidia-smi missing or sees no device); nothing to check."
  exit 77
fi
compute_cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)

# --- Where and when: written once by the build step, read by every later step. ---
mkdir -p "$logs"
if wants build || [ ! -f "$logs/about.env" ]; then
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
  driver_cuda=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
  nvcc_version=$(nvcc --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 (\2)/p')
  commit=${TUTORIAL_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
  if [ -z "${TUTORIAL_COMMIT:-}" ] && [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
  fi
  {
    printf 'GPU_NAME=%q\nCOMPUTE_CAP=%q\nDRIVER=%q\nDRIVER_CUDA=%q\n' \
      "$gpu_name" "$compute_cap" "$driver" "$driver_cuda"
    printf 'NVCC_VERSION=%q\nCMAKE_VERSION=%q\nSTARTED=%q\nCOMMIT=%q\n' "$nvcc_version" \
      "$(cmake --version | head -n 1)" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$commit"
  } >"$logs/about.env"
fi
# shellcheck source=/dev/null
source "$logs/about.env"
export TUTORIAL_RUN_ABOUT="$GPU_NAME, driver $DRIVER, CUDA $NVCC_VERSION; $STARTED; commit $COMMIT."
echo "gpu-check: $GPU_NAME (compute capability $COMPUTE_CAP), driver $DRIVER, nvcc $NVCC_VERSION"

# run_ctest <step> <ctest arguments...>: CTest's JUnit file is what the record reads. CTest keeps
# only the first 1 KiB of a passing test's output unless told otherwise, and a sanitizer's summary
# comes last: keep up to 1 MiB.
run_ctest() {
  local name=$1
  shift
  local filter=()
  [ -n "${CTEST_REGEX:-}" ] && filter=(-R "$CTEST_REGEX")
  ctest --test-dir "$build" --output-on-failure --output-junit "$logs/$name.xml" \
    --test-output-size-passed 1048576 --test-output-size-failed 1048576 \
    "${filter[@]}" "$@" >"$logs/$name.log" 2>&1
  local status=$?
  grep -E 'tests passed|tests failed' "$logs/$name.log" | tail -n 1
  sed -n '/The following tests \(FAILED\|did not run\)/,$p' "$logs/$name.log"
  return $status
}

if wants build; then
  step "configure and build for sm_${COMPUTE_CAP/./}"
  if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUTORIAL_GPU_CHECK=ON \
       -DTUTORIAL_RESULTS_DIR="$results" -DCMAKE_CUDA_ARCHITECTURES="${COMPUTE_CAP/./}" \
       >"$logs/configure.log" 2>&1 ||
     ! cmake --build "$build" -j "$(nproc)" >"$logs/build.log" 2>&1; then
    cat "$logs/configure.log" "$logs/build.log" | tail -n 60
    echo "gpu-check: the build failed"
    exit 1
  fi
fi
if wants test; then
  step "ctest: every test but the sanitizer and benchmark runs"
  # Label "record": tests that compare the READMEs with docs/results, which this run is about
  # to replace; they run in CI once scripts/sync-results.py has copied the new record in.
  # --no-tests=error: a filter that matches nothing is a mistake, not a pass.
  run_ctest tests -LE 'sanitize|benchmark|record' -j 4 --timeout 300 --no-tests=error || failed=1
fi
if wants sanitize; then
  step "ctest -L sanitize"
  run_ctest sanitize -L sanitize -j 4 --no-tests=error || failed=1
fi
if wants benchmark; then
  step "ctest -L benchmark"
  run_ctest benchmark -L benchmark --no-tests=error || failed=1
fi
if wants record; then
  step "record"
  python3 "$root/scripts/write-record.py" --logs "$logs" --results "$results" || failed=1
fi
exit $failed
