#!/usr/bin/env bash
# nsys_stats.sh: the notes' command, `nsys profile --stats=true`, checked.
#
#   05_nsys_profiling/nsys_stats.sh <report> <kernel> <program> [arguments...]
#
# Runs `nsys profile -t cuda,nvtx --stats=true` on the program (-t cuda,nvtx: CUDA API calls,
# GPU work and the program's NVTX ranges; NSYS_TRACE=cuda for the notes' `-t cuda`) and prints
# what nsys prints: the NVTX ranges, the CUDA API calls, the kernels, and the memory operations
# by time and by size, then a SUMMARY line of its counts (nsys_timeline.py summary). The report
# stays as <report>.nsys-rep and <report>.sqlite in the current folder, for the GUI or `nsys stats`.
# It passes only if nsys's kernel summary lists <kernel> (text in the kernel's name, e.g.
# "add("): a run in which nsys saw no kernel fails, whatever the program said.
# Exit: the program's status; 77 (skipped) without nsys, without a GPU, or when nsys is too old
# to read the program's CUDA calls (see below); 1 when nsys saw no <kernel> for another reason.
# Set NSYS=/path/to/nsys if nsys is off PATH (CMake passes its TUTORIAL_NSYS); without NSYS, or
# with a bare `nsys` that is not on PATH, the one scripts/fetch-nsys.sh unpacks into .nsys/.
set -u
if [ $# -lt 3 ]; then
  echo "usage: nsys_stats.sh <report> <kernel> <program> [arguments...]" >&2
  exit 2
fi
report=$1 kernel=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
nsys=${NSYS:-nsys}
if [ "$nsys" = nsys ] && ! command -v nsys >/dev/null 2>&1 && [ -x "$here/../.nsys/bin/nsys" ]; then
  nsys=$here/../.nsys/bin/nsys
fi
if ! command -v "$nsys" >/dev/null 2>&1; then
  echo "nsys_stats: nsys is not installed (looked for '$nsys'), so there is nothing to report."
  echo "  scripts/fetch-nsys.sh unpacks it into .nsys/, where CMake finds it; or set NSYS=/path/to/nsys."
  exit 77
fi

echo "nsys_stats: $("$nsys" --version 2>&1 | head -n 1), tracing: $*"
# nsys draws progress bars with carriage returns: keep only the lines a reader wants.
output=$("$nsys" profile -t "${NSYS_TRACE:-cuda,nvtx}" --stats=true --force-overwrite=true -o "$report" "$@" 2>&1 |
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
# An nsys older than the program's CUDA runtime stops reading the trace at the first runtime
# call it has no name for: the NVTX summary is whole, the CUDA tables are empty. Seen on the
# course's GPU machine (CUDA 13): nsys 2022.4 at index 440 (cudaGetDeviceProperties_v2, CUDA
# 12.0), 2023.4 at 486 (cudaEventElapsedTime's CUDA 12.8 form). Not the program's fault: skip.
unknown=$(printf '%s\n' "$output" | grep -o -m 1 'Unknown runtime API function index: [0-9]*')
if [ -n "$unknown" ] && ! printf '%s\n' "$kernels" | grep -q -F -- "$kernel"; then
  echo "nsys_stats: $("$nsys" --version 2>&1 | head -n 1) cannot read this program's CUDA calls"
  echo "  ($unknown): it is older than the program's CUDA runtime, so its CUDA tables are empty."
  echo "  Only the NVTX summary above is whole. Skipped: no CUDA numbers to report."
  exit 77
fi
if ! printf '%s\n' "$kernels" | grep -q -F -- "$kernel"; then
  echo "nsys_stats: FAILED, nsys's kernel summary lists no kernel named '$kernel' (exit status $status)."
  exit 1
fi
echo "nsys_stats: nsys traced '$kernel' (the program exited with status $status)."
if [ -f "$report.sqlite" ]; then
  python3 "$here/nsys_timeline.py" summary "$report.sqlite" || exit 1
fi
exit "$status"
