#!/usr/bin/env bash
# Runs the tests of a build made on another machine on this GPU machine, and writes the record.
# It exists for CI's second build, CUDA 11.8 (sm_70, sm_80, sm_90 + PTX): the GPU machine has
# CUDA 13 and no package manager, but its driver runs CUDA 11.8 programs (the course links
# the CUDA runtime statically), so the pre-13 code paths run here.
#
#   On the build machine:  scripts/gpu-check-prebuilt.sh --pack <build-dir>
#     writes <build-dir>/gpu-carry.tar.gz (what the GPU machine needs, well under 64 MiB):
#     the programs and test binaries, every CTestTestfile.cmake, a note of the build, and the
#     CUDA 11.8 libraries they load that a CUDA 13 machine lacks (libcupti.so.11.8, 7 MB).
#     cuBLAS 11 (libcublas + libcublasLt, 670 MB) does not fit: the programs that load it
#     (07_sgemm, 07_tensor_cores) are listed as not run, with that reason.
#   On the GPU machine:    scripts/gpu-check-prebuilt.sh <build-dir> <results-file>
#     unpacks <build-dir>/gpu-carry.tar.gz if present, runs `ctest -L verify` (none may be
#     skipped), then the other GPU, command-line and host tests that need nothing of the
#     build machine, and writes <results-file> (e.g. docs/results/cuda-11.8.md).
#
# The CTest files name absolute paths of the build machine (/work/main/...); when that path
# does not exist here, it is made a link to this tree (root may create it).
# Environment: TUTORIAL_COMMIT=<commit> for a copy of the tree without git history.
# Exit status: 0 every test run passed, 1 otherwise, 2 bad usage, 77 no GPU.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage() {
  sed -n '7,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Reads `ctest --show-only=json-v1` and prints "<test>\t<path>" for the absolute paths in each
# test's command: "tools" those outside the source tree <argv[2]> as written, "files" all of
# them resolved (symbolic links followed).
paths_py='
import json, os, re, sys
mode, tree = sys.argv[1], (sys.argv[2], os.path.realpath(sys.argv[2]))
for test in json.load(sys.stdin)["tests"]:
    for word in test.get("command", []):
        for path in re.findall(r"/[^\s;=:\x27\"]+", word):
            if mode == "files":
                print(test["name"] + "\t" + os.path.realpath(path))
            elif not path.startswith(tree):
                print(test["name"] + "\t" + path)
'

# --- On the build machine: the carry ---------------------------------------------------------
pack() {
  local build=$1
  [ -f "$build/CTestTestfile.cmake" ] || { echo "no CTestTestfile.cmake in $build: build it first" >&2; exit 2; }
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' EXIT
  # Every executable the tests run: ELF files outside CMake's scratch folders.
  (cd "$build" && find . -path ./CMakeFiles -prune -o -path '*/CMakeFiles' -prune -o -type f \
     -perm -u+x -print | while read -r f; do
       head -c 4 "$f" | grep -q 'ELF' && echo "$f"
     done) >"$staging/programs"
  (cd "$build" && find . -name CTestTestfile.cmake) >"$staging/ctest-files"
  # The tools of this machine the tests call (its nvcc, cuobjdump, python): absolute paths
  # outside the tree. Where the GPU machine lacks one, the test cannot run there.
  # The tests as this machine sees them: where a program is missing, CTest's own listing on the
  # GPU machine leaves out the test's command, so that machine reads this one.
  ctest --test-dir "$build" --show-only=json-v1 >"$staging/build-machine-tests.json"
  python3 -c "$paths_py" tools "$root" <"$staging/build-machine-tests.json" | cut -f2 |
    sort -u | while read -r path; do [ -e "$path" ] && echo "$path"; done >"$staging/build-machine-paths"
  # CUDA libraries the programs load that are small enough to carry; the rest are noted.
  mkdir -p "$staging/carry-lib"
  : >"$staging/not-carried"
  local lib path size
  while read -r lib path; do
    size=$(stat -L -c %s "$path")
    if [ "$size" -lt $((16 << 20)) ]; then
      cp -L "$path" "$staging/carry-lib/$lib"
    else
      echo "$lib $((size >> 20))" >>"$staging/not-carried"
    fi
  done < <(cd "$build" && xargs -a "$staging/programs" ldd 2>/dev/null |
           awk '$1 ~ /^lib(cupti|cublas|cublasLt|cudart|nvToolsExt|nvrtc|cufft|curand|cusparse|cusolver)\.so/ && $3 ~ /^\// {print $1, $3}' | sort -u)
  {
    echo "nvcc: $(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)" \
         "($(grep -h -m1 'set(CMAKE_CUDA_COMPILER_VERSION ' "$build/CMakeFiles"/*/CMakeCUDACompiler.cmake |
             sed 's/.*"\(.*\)".*/\1/'))"
    echo "host compiler: $(grep -m1 '^CMAKE_CUDA_HOST_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)"
    echo "architectures: $(grep -m1 '^CMAKE_CUDA_ARCHITECTURES:' "$build/CMakeCache.txt" | cut -d= -f2)"
    local commit
    commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
    [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && commit="$commit (with uncommitted changes)"
    echo "built at commit: $commit"
    echo "built on: $(date -u -r "$(ls -t "$build"/bin/* | head -n 1)" '+%Y-%m-%d %H:%M UTC')"
  } >"$staging/build-info.txt"
  cp "$staging/not-carried" "$staging/build-info.txt" "$build/" 2>/dev/null
  tar -czf "$build/gpu-carry.tar.gz" -C "$build" -T "$staging/programs" -T "$staging/ctest-files" \
      build-info.txt not-carried -C "$staging" carry-lib build-machine-paths \
      build-machine-tests.json
  echo "wrote $build/gpu-carry.tar.gz ($(du -h "$build/gpu-carry.tar.gz" | cut -f1)):" \
       "$(wc -l <"$staging/programs") programs, $(ls "$staging/carry-lib" | wc -l) libraries"
  [ -s "$staging/not-carried" ] && sed 's/^/  not carried: /; s/$/ MiB/' "$staging/not-carried"
  exit 0
}

if [ "${1:-}" = "--pack" ]; then
  [ $# -eq 2 ] || usage
  pack "$(cd "$2" && pwd)"
fi
[ $# -eq 2 ] || usage
build=$(cd "$1" 2>/dev/null && pwd) || { echo "no build folder $1" >&2; usage; }
results=$2
mkdir -p "$(dirname "$results")"

# --- On the GPU machine ------------------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check-prebuilt: no NVIDIA GPU here (nvidia-smi missing or sees no device)."
  exit 77
fi
if [ -f "$build/gpu-carry.tar.gz" ]; then
  tar -xzf "$build/gpu-carry.tar.gz" -C "$build" || exit 1
fi
[ -f "$build/CTestTestfile.cmake" ] || { echo "no CTestTestfile.cmake in $build" >&2; exit 2; }

# The build machine's absolute paths, made to resolve here.
recorded_source=$(sed -n 's/^# Source directory: //p' "$build/CTestTestfile.cmake")
recorded_build=$(sed -n 's/^# Build directory: //p' "$build/CTestTestfile.cmake")
if [ "$recorded_source" != "$root" ] && [ ! -e "$recorded_source" ]; then
  mkdir -p "$(dirname "$recorded_source")" && ln -sfn "$root" "$recorded_source" || exit 1
  echo "linked $recorded_source -> $root (the build's CTest files name it)"
fi
if [ "$(cd "$recorded_build" 2>/dev/null && pwd -P)" != "$(cd "$build" && pwd -P)" ]; then
  echo "the CTest files of $build name $recorded_build, which is another folder here" >&2
  exit 1
fi
export LD_LIBRARY_PATH="$build/carry-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
compute_cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
driver_cuda=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
commit=${TUTORIAL_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "gpu-check-prebuilt: $gpu_name (compute capability $compute_cap), driver $driver; build $build"

# Tests that do not run here, and why: the test calls a tool the build machine has and this one
# lacks (its nvcc, cuobjdump), a program loads a library missing here, or it checks README text.
tests_json=$(cat "$build/build-machine-tests.json" 2>/dev/null || ctest --test-dir "$build" --show-only=json-v1)
excluded=$({
  python3 -c "$paths_py" tools "$recorded_source" <<<"$tests_json" |
    while IFS=$'\t' read -r test path; do
      if grep -qxF "$path" "$build/build-machine-paths" && [ ! -e "$path" ]; then
        printf '%s\tneeds %s, which the build machine has and this one does not\n' "$test" "$path"
      fi
    done
  python3 -c "$paths_py" files "$recorded_source" <<<"$tests_json" | sort -u |
    while IFS=$'\t' read -r test path; do
      [ -f "$path" ] && [ -x "$path" ] && head -c 4 "$path" | grep -q ELF || continue
      missing=$(ldd "$path" 2>/dev/null | awk '/not found/ {print $1}' | paste -sd, -)
      [ -n "$missing" ] &&
        printf '%s\t%s loads %s, which this machine lacks\n' "$test" "$(basename "$path")" "$missing"
    done
  # A test whose program itself (an interpreter, say) is a path of the build machine only.
  python3 -c 'import json, os, sys
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or [""]
    if cmd[0].startswith("/") and not os.path.exists(cmd[0]):
        print(t["name"] + "\tneeds " + cmd[0] + ", which the build machine has and this one does not")' \
    <<<"$tests_json"
  # Checks of README text: no toolkit changes them, and the main build runs them.
  python3 -c 'import json, sys; print("\n".join(t["name"] for t in json.load(sys.stdin)["tests"]))' \
    <<<"$tests_json" | grep -E '^(readme|readme_build|results)\.|\.figure_from_record$' |
    sed 's/$/\tchecks README text or a figure, which no toolkit changes (the main build runs it)/'
} | sort -u -t$'\t' -k1,1)
exclude_regex=$(cut -f1 <<<"$excluded" | grep -v '^$' | sed 's/[.[\*^$()+?{|]/\\&/g' | paste -sd'|' -)
exclude_args=()
[ -n "$exclude_regex" ] && exclude_args=(-E "^($exclude_regex)\$")

logs=$(mktemp -d)
run_ctest() {  # <log> <ctest args...>
  local log=$1
  shift
  ctest --test-dir "$build" --output-on-failure --timeout 300 -j 4 "${exclude_args[@]}" "$@" >"$log" 2>&1
  local status=$?
  grep -qE 'tests passed|tests failed' "$log" || status=1
  return $status
}
failures=()
echo "== ctest -L verify =="
run_ctest "$logs/verify.log" -L verify || failures+=("verification tests")
grep -q '(Skipped)\|Not Run' "$logs/verify.log" && failures+=("verification tests skipped on a GPU machine")
grep -E 'tests passed|tests failed' "$logs/verify.log" | tail -n 1
echo "== the other GPU, command-line and host tests =="
run_ctest "$logs/other.log" -L 'gpu|cli|host' -LE verify || failures+=("other tests")
grep -E 'tests passed|tests failed' "$logs/other.log" | tail -n 1

# What the driver runs from this build: chapter 04's program says it, and times the loading.
for program in 04_fatbin 04_ptx_only; do
  "$build/bin/$program" >"$logs/$program.log" 2>&1 || failures+=("$program")
done

status=pass
[ ${#failures[@]} -gt 0 ] && status="FAILED: $(printf '%s; ' "${failures[@]}" | sed 's/; $//')"
{
  echo "# The CUDA 11.8 build on the GPU machine"
  echo
  echo "CI's second build of the course, with CUDA 11.8, carried to the GPU machine and tested"
  echo "there by \`scripts/gpu-check-prebuilt.sh\`. This GPU runs the build's sm_90 machine code"
  echo "(and its compute_90 PTX); no V100 is lent, so its sm_70 code ran nowhere: CI's"
  echo "\`architectures.sm70_machine_code\` test shows with cuobjdump that it is there."
  echo
  echo "| | |"
  echo "| --- | --- |"
  echo "| GPU | $gpu_name (compute capability $compute_cap) |"
  echo "| driver | $driver (runs CUDA up to $driver_cuda) |"
  sed 's/^\([^:]*\): \(.*\)$/| \1 | \2 |/' "$build/build-info.txt" 2>/dev/null
  echo "| tested | $started, commit $commit |"
  echo "| result | $status |"
  echo
  echo "## Verification tests: \`ctest -L verify\`"
  echo
  echo '```text'
  sed -n '/tests passed\|tests failed/,$p' "$logs/verify.log"
  echo '```'
  echo
  echo "## Other GPU, command-line and host tests: \`ctest -L 'gpu|cli|host' -LE verify\`"
  echo
  echo '```text'
  sed -n '/tests passed\|tests failed/,$p' "$logs/other.log"
  echo '```'
  echo
  echo "## Not run here, and why"
  echo
  if [ -n "$excluded" ]; then
    awk -F'\t' '{print "- `" $1 "`: " $2}' <<<"$excluded"
  else
    echo "Every test ran."
  fi
  for program in 04_fatbin 04_ptx_only; do
    echo
    echo "## \`$program\`: what the driver runs"
    echo
    echo '```text'
    cat "$logs/$program.log"
    echo '```'
  done
  echo
  echo "## Full logs"
  for part in verify other; do
    echo
    echo "<details><summary>ctest ($part)</summary>"
    echo
    echo '```text'
    cat "$logs/$part.log"
    echo '```'
    echo
    echo "</details>"
  done
} >"$results"
rm -rf "$logs"
echo "gpu-check-prebuilt: $status; record: $results"
[ "$status" = pass ]
