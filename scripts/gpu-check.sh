#!/usr/bin/env bash
# The course's GPU check, run on a machine with an NVIDIA GPU. A thin driver over CTest labels;
# each step can run on its own (a lent GPU machine limits one call):
#   build      configure for this GPU with the GPU check's tests (-DTUTORIAL_GPU_CHECK=ON), build
#   test       every test but the sanitizer and benchmark runs (and the README-vs-record checks);
#              on a GPU machine nothing may be skipped
#   sanitize   `ctest -L sanitize`: every chapter program under memcheck, racecheck, initcheck, synccheck
#   benchmark  `ctest -L benchmark`: the timed runs, each kept as data in <results>/data/
#   record     scripts/results.py: the verdicts as data (<results>/data/record.json), and every
#              page of <results> rendered from the data (README.md, headlines.md, <name>.md)
#
# Usage: scripts/gpu-check.sh [--steps build,test,sanitize,benchmark,record] [results-dir]
#        scripts/gpu-check.sh --prebuilt <build-dir> --record <name> [results-dir]
#        scripts/gpu-check.sh --pack <build-dir>
# A build made elsewhere (CI's CUDA 11.8 build: sm_70, sm_80, sm_90 + PTX; the course links the
# CUDA runtime statically, so this machine's driver runs it):
#   --pack <build-dir>, on the build machine, writes <build-dir>/gpu-carry.tar.gz (programs, test
#     binaries, CTest files, the small CUDA 11.8 libraries they load; see scripts/prebuilt.py);
#   --prebuilt <build-dir> --record <name>, here, unpacks it, runs the tests labelled gpu, cli
#     and host that this machine can run (`ctest -L 'gpu|cli|host' -LE 'docs|record|no-gpu'` less those
#     that need a tool or library only the build machine has, listed with the reason) and chapter
#     04's programs, and records them as <results>/data/<name>.json -> <results>/<name>.md; where
#     an nsys is found (NSYS, PATH, or .nsys/ from scripts/fetch-nsys.sh), also chapter 05's nsys
#     runs of the build (05_nsys_add, 05_nsys_stats, 05_nsys_timeline, 05_nsys_easy, 05_three_tools).
# Steps run in separate calls keep their logs in the build folder; the record also reads the
# benchmark data in results-dir, so where the source tree is copied afresh before each call
# (a lent GPU machine), run benchmark and record in one call or give a results-dir outside it.
# Environment: BUILD_DIR (default build-gpu), CTEST_REGEX=<regex> (run only matching tests),
#              CTEST_EXCLUDE=<regex> (leave matching tests out),
#              GPU_CHECK_DEVICE=<n> (run this step's tests on GPU n alone: CUDA_VISIBLE_DEVICES),
#              GPU_CHECK_PART=<name> (this run is one part of a step: its logs are <step>-<name>.xml,
#              and the record joins every part of each step),
#              TUTORIAL_COMMIT=<commit> (for a copy of the tree without git history).
# scripts/gpu-check-lanes.sh uses these on a machine of two GPUs: the one-GPU work in two lanes at
# once, each on a GPU of its own, then chapter 08 (every GPU) alone.
# Exit status: 0 when every step run passed, 1 otherwise, 2 bad usage, 77 when there is no GPU.
set -uo pipefail
# NVLink multicast (NVLS) stays off for everything this check starts: on a shared host it can
# take the GPUs out of service. (Chapter 08's programs also force it off themselves.)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

root=$(cd "$(dirname "$0")/.." && pwd)
steps=build,test,sanitize,benchmark,record
prebuilt="" record=record
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --pack) exec python3 "$root/scripts/prebuilt.py" pack "$2" ;;
    --prebuilt) prebuilt=$(cd "$2" && pwd) || exit 2; steps=test,record; shift 2 ;;
    --record) record=$2; shift 2 ;;
    -*) sed -n '2,32p' "$0" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ -n "$prebuilt" ] && [ "$record" = record ]; then
  echo "gpu-check: --prebuilt needs --record <name> (e.g. cuda-11.8), the record it writes" >&2
  exit 2
fi
results=$(mkdir -p "${1:-$root/docs/results}" && cd "${1:-$root/docs/results}" && pwd)
build=${prebuilt:-${BUILD_DIR:-$root/build-gpu}}
logs=$build/gpu-check-logs
failed=0
wants() { [[ ",$steps," == *",$1,"* ]]; }
step() { printf '\n== %s ==\n' "$*"; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU here (nvidia-smi missing or sees no device); nothing to check."
  exit 77
fi
compute_cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
[ -n "${GPU_CHECK_DEVICE:-}" ] && export CUDA_VISIBLE_DEVICES=$GPU_CHECK_DEVICE

if [ -n "$prebuilt" ]; then  # unpack; list what cannot run here (data for ctest and the record)
  python3 "$root/scripts/prebuilt.py" prepare "$build" "$logs" "$record" || exit 1
  export LD_LIBRARY_PATH="$build/carry-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# --- Where and when: written once, by the first step, as data every later step reads. ---
mkdir -p "$logs"
if wants build || [ -n "$prebuilt" ] || [ ! -f "$logs/run.json" ]; then
  python3 "$root/scripts/results.py" about ${TUTORIAL_COMMIT:+--commit "$TUTORIAL_COMMIT"} \
    ${prebuilt:+--nvcc "$(cat "$logs/build-nvcc")"} >"$logs/run.json" || exit 1
fi
export TUTORIAL_RUN_INFO=$logs/run.json
python3 -c 'import json, sys
run = json.load(open(sys.argv[1]))
print("gpu-check: %(gpu)s (compute capability %(compute_cap)s), driver %(driver)s, nvcc %(nvcc)s" % run)' \
  "$logs/run.json"

# run_ctest <step> <ctest arguments...>: CTest's JUnit file is what the record reads. CTest keeps
# only the first 1 KiB of a passing test's output unless told otherwise, and a sanitizer's summary
# comes last: keep up to 1 MiB.
run_ctest() {
  local name=$1${GPU_CHECK_PART:+-$GPU_CHECK_PART}
  shift
  local filter=()
  [ -n "${CTEST_REGEX:-}" ] && filter+=(-R "$CTEST_REGEX")
  [ -n "${CTEST_EXCLUDE:-}" ] && filter+=(-E "$CTEST_EXCLUDE")
  ctest --test-dir "$build" --output-on-failure --output-junit "$logs/$name.xml" \
    --test-output-size-passed 1048576 --test-output-size-failed 1048576 \
    "${filter[@]}" "$@" >"$logs/$name.log" 2>&1
  local status=$?
  grep -E 'tests passed|tests failed' "$logs/$name.log" | tail -n 1
  sed -n '/The following tests \(FAILED\|did not run\)/,$p' "$logs/$name.log"
  return $status
}

# nsys on a carried build's chapter 01 and 05 programs, recorded as chapter 05's nsys runs: nsys
# 2022.4 (scripts/fetch-nsys.sh's, in .nsys/) reads CUDA 11.8 programs, not CUDA 12's or 13's.
# The notes' commands: `nsys profile -t cuda --stats=true` on chapter 01's add, the same with
# -t cuda,nvtx on chapter 05's program (its SQLite export -> the timeline's data), nsys_easy,
# and the three clocks (tests/three_tools.py). Without nsys it says so and runs nothing.
nsys_runs() {
  local nsys=${NSYS:-$(command -v nsys)} ch05=$root/05_nsys_profiling work=$build/nsys-runs status=0
  [ -z "$nsys" ] && [ -x "$root/.nsys/bin/nsys" ] && nsys=$root/.nsys/bin/nsys
  if [ -z "$nsys" ]; then
    echo "gpu-check: no nsys (scripts/fetch-nsys.sh unpacks one into .nsys/): chapter 05's nsys runs not made"
    return 0
  fi
  step "nsys on this build: $("$nsys" --version | head -n 1)"
  mkdir -p "$work"
  nsys_record() {  # nsys_record <name> <command...>: run in $work, kept as data like a benchmark
    (cd "$work" && NSYS=$nsys python3 "$root/scripts/results.py" record "$1" --results "$results" -- "${@:2}") \
      >"$logs/$1.log" 2>&1
    local code=$?
    echo "$1: exit status $code"
    [ "$code" -eq 0 ] || status=1
  }
  nsys_record 05_nsys_add env NSYS_TRACE=cuda bash "$ch05/nsys_stats.sh" 05_nsys_add "add(" "$build/bin/01_hello_add"
  nsys_record 05_nsys_stats bash "$ch05/nsys_stats.sh" 05_nsys_stats "add(" "$build/bin/05_nsys_profiling"
  nsys_record 05_nsys_timeline python3 "$ch05/nsys_timeline.py" dump "$work/05_nsys_stats.sqlite"
  nsys_record 05_nsys_easy bash "$ch05/nsys_easy.sh" "$build/bin/05_nsys_profiling"
  nsys_record 05_three_tools python3 "$ch05/tests/three_tools.py" --nsys "$nsys" \
    --program "$build/05_nsys_profiling/05_tracer_check" --workdir "$work/three_tools"
  python3 -c 'import json, sys  # the record lists them under Outputs
extra = json.load(open(sys.argv[1])); extra["outputs"] += sys.argv[2:]
json.dump(extra, open(sys.argv[1], "w"), indent=1)' "$logs/extra.json" \
    05_nsys_add 05_nsys_stats 05_nsys_timeline 05_nsys_easy 05_three_tools
  return $status
}

if wants build; then
  step "configure and build for sm_${compute_cap/./}"
  if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUTORIAL_GPU_CHECK=ON \
       -DTUTORIAL_RESULTS_DIR="$results" -DCMAKE_CUDA_ARCHITECTURES="${compute_cap/./}" \
       >"$logs/configure.log" 2>&1 ||
     ! cmake --build "$build" -j "$(nproc)" >"$logs/build.log" 2>&1; then
    cat "$logs/configure.log" "$logs/build.log" | tail -n 60
    echo "gpu-check: the build failed"
    exit 1
  fi
fi
if wants test; then
  # Label "record": tests that compare the READMEs with docs/results, which this run is about
  # to replace; they run in CI once scripts/sync-results.py has copied the new record in.
  # Label "no-gpu": checks of what a machine without a GPU sees (its no-GPU message, its
  # compiler's SASS), which have nothing to compare here.
  # --no-tests=error: a filter that matches nothing is a mistake, not a pass.
  if [ -n "$prebuilt" ]; then
    # Label "docs": checks of README text and the site, which no toolkit changes.
    step "ctest -L 'gpu|cli|host' -LE 'docs|record|no-gpu' (tests this machine cannot run: see the record)"
    run_ctest tests -L 'gpu|cli|host' -LE 'docs|record|no-gpu' --exclude-from-file "$logs/not-run.txt" \
      -j 4 --timeout 300 --no-tests=error || failed=1
    # What the driver runs from this build (the record's outputs). Told what the binary embeds
    # (--embeds, as this machine's cuobjdump lists it), each program names the code it ran.
    cuobjdump=$(command -v cuobjdump || true)
    for program in 04_fatbin 04_ptx_only; do
      embeds=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import run_variants
print(" ".join(run_variants.embeds(sys.argv[2], sys.argv[3])))' \
        "$root/04_gencode_fatbin" "$cuobjdump" "$build/bin/$program")
      # shellcheck disable=SC2086  # $embeds is "--embeds sm_70,...", or empty without cuobjdump
      python3 "$root/scripts/results.py" record "$record"_$program --results "$results" -- \
        "$build/bin/$program" $embeds >/dev/null || failed=1
    done
    nsys_runs || failed=1
  else
    step "ctest: every test but the sanitizer and benchmark runs"
    run_ctest tests -LE 'sanitize|benchmark|record|no-gpu' -j 8 --timeout 300 --no-tests=error || failed=1
  fi
fi
if wants sanitize; then
  step "ctest -L sanitize"
  run_ctest sanitize -L sanitize -j 8 --no-tests=error || failed=1
fi
if wants benchmark; then
  step "ctest -L benchmark"
  run_ctest benchmark -L benchmark --no-tests=error || failed=1
fi
if wants record; then
  step "record"
  python3 "$root/scripts/results.py" write --logs "$logs" --results "$results" --record "$record" ||
    failed=1
fi
exit $failed
