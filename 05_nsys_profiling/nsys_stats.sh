#!/usr/bin/env bash
# nsys_stats.sh: the notes' command, `nsys profile --stats=true`, checked.
#
#   05_nsys_profiling/nsys_stats.sh [--needs PATH] <report> <kernel> <program> [arguments...]
#
# Runs `nsys profile -t cuda,nvtx --stats=true` on the program (-t cuda,nvtx: CUDA API calls,
# GPU work and the program's NVTX ranges) and prints what nsys prints: the NVTX ranges, the CUDA
# API calls, the kernels, and the memory operations by time and by size. The report stays as
# <report>.nsys-rep and <report>.sqlite in the current folder, for the GUI or `nsys stats`.
# It passes only if nsys's kernel summary lists <kernel> (text in the kernel's name, e.g.
# "add("): a run in which nsys saw no kernel fails, whatever the program said.
# Exit: the program's status; 77 (skipped) without nsys, without a GPU, or without PATH
# (--needs: what the program needs, e.g. chapter 06's built package); 1 when nsys saw no <kernel>.
# Set NSYS=/path/to/nsys if nsys is off PATH (CMake passes its TUTORIAL_NSYS).
set -u
needs=
if [ "${1:-}" = --needs ] && [ $# -ge 2 ]; then
  needs=$2
  shift 2
fi
if [ $# -lt 3 ]; then
  echo "usage: nsys_stats.sh [--needs PATH] <report> <kernel> <program> [arguments...]" >&2
  exit 2
fi
report=$1 kernel=$2
shift 2
nsys=${NSYS:-nsys}
if ! command -v "$nsys" >/dev/null 2>&1; then
  echo "nsys_stats: nsys is not installed (looked for '$nsys'), so there is nothing to report."
  echo "  scripts/fetch-nsys.sh unpacks it into .nsys/, where CMake finds it; or set NSYS=/path/to/nsys."
  exit 77
fi
if [ -n "$needs" ] && [ ! -e "$needs" ]; then
  echo "nsys_stats: $needs is missing (not built?), so there is nothing to profile."
  exit 77
fi

# nsys draws progress bars with carriage returns: keep only the lines a reader wants.
output=$("$nsys" profile -t cuda,nvtx --stats=true --force-overwrite=true -o "$report" "$@" 2>&1 |
         tr '\r' '\n' | grep -v -E '^\[[0-9]/[0-9]\] \[.*%')
status=${PIPESTATUS[0]}
printf '%s\n' "$output"
echo
if [ "$status" -eq 77 ]; then
  echo "nsys_stats: the program found no usable GPU."
  exit 77
fi
# The kernel summary: from its "Executing '<name>' stats report" line to the next report
# (gpukernsum in nsys 2022.4, cuda_gpu_kern_sum from 2023.1).
kernels=$(printf '%s\n' "$output" |
  awk '/Executing .*stats report/ { inside = ($0 ~ /gpukernsum|cuda_gpu_kern_sum/); next } inside')
if ! printf '%s\n' "$kernels" | grep -q -F -- "$kernel"; then
  echo "nsys_stats: FAILED, nsys's kernel summary lists no kernel named '$kernel' (exit status $status)."
  exit 1
fi
echo "nsys_stats: nsys traced '$kernel' (the program exited with status $status)."
exit "$status"
