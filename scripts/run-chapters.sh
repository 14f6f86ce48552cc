#!/usr/bin/env bash
# Builds the course (if needed) and runs every chapter program with its default
# settings, showing each one's output (chapter 08's MPI program as two processes under mpirun,
# as its README starts it). A chapter that finds no GPU says so and
# counts as skipped; any other failure makes the script exit 1. Chapter 06 is a
# PyTorch extension, not a program: its verification is the CTest test
# 06_torch_extension.verify, run here directly so that only its output shows.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Configure, and show what it decided (the GPU architectures built, and what was left out and
# why), without CMake's routine lines (compiler checks, "Looking for ...").
if ! configure_log=$(cmake --preset default 2>&1); then
  printf '%s\n' "$configure_log"
  echo "run-chapters: configure failed"
  exit 1
fi
printf '%s\n' "$configure_log" | grep -vE '^-- (The |Check|Detecting|Looking for|Performing|Found |Configuring done|Generating done|Build files)'
# The first build compiles every chapter for every architecture: minutes (see the README's times).
[ -f build/.ninja_log ] || echo "run-chapters: first build of every chapter (several minutes on 2 cores; later runs rebuild only what changed)"
cmake --build --preset default || { echo "run-chapters: build failed"; exit 1; }

passed=() skipped=() failed=()
count() {  # count <name> <exit status>
  case $2 in
    0) passed+=("$1") ;;
    77) skipped+=("$1") ;;
    *) failed+=("$1") ;;
  esac
}

for program in build/bin/[0-9][0-9]_*; do
  [ -x "$program" ] || continue
  name=$(basename "$program")
  printf '\n===== %s =====\n' "$name"
  case $name in
    *_mpi_*) bash 08_multi_gpu/mpirun.sh 2 "$program" ;;  # one process per GPU: mpirun starts it
    *) "$program" ;;
  esac
  count "$name" $?
done

# A CTest test's command, with the environment CTest gives it, as one shell line.
test_command() {
  ctest --test-dir build --show-only=json-v1 -R "^$1\$" | python3 -c '
import json, shlex, sys
tests = json.load(sys.stdin)["tests"]
if tests:
    env = [p["value"] for p in tests[0].get("properties", []) if p["name"] == "ENVIRONMENT"]
    print(shlex.join(["env", *(env[0] if env else []), *tests[0]["command"]]))'
}

printf '\n===== 06_torch_extension =====\n'
command=$(test_command '06_torch_extension\.verify')
if [ -n "$command" ]; then
  eval "$command"
  count 06_torch_extension $?
else
  echo "Not built: configure found no PyTorch for this nvcc (see the configure output and 06's README)."
  skipped+=(06_torch_extension)
fi

printf '\n%d passed, %d failed, %d skipped (%d s, build included)\n' "${#passed[@]}" "${#failed[@]}" \
  "${#skipped[@]}" "$SECONDS"
if [ ${#failed[@]} -gt 0 ]; then
  echo "Next: read the output of ${failed[*]} above; each says what went wrong."
elif [ ${#skipped[@]} -gt 0 ]; then
  echo "Next: every chapter is built, but ${#skipped[@]} could not run here (no usable GPU; each said why)."
  echo "      On this machine, run the tests that need no GPU: cmake --workflow --preset default"
  echo "      On a machine with an NVIDIA GPU, run this script again, then read 01_hello_add/README.md."
else
  echo "Next: read 01_hello_add/README.md; each chapter's README explains the output above."
fi
[ ${#failed[@]} -eq 0 ]
