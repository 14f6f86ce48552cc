#!/usr/bin/env bash
# nsys_easy.sh: profile a program with Nsight Systems, print only the GPU summaries.
#
#   05_nsys_profiling/nsys_easy.sh ./build/bin/05_nsys_profiling [arguments...]
#
# `nsys profile --stats=true` prints every report it has (API calls, kernels,
# memory time, memory size, ...). Most of the time the GPU's kernels and memory
# operations, in one table, are what you want: the idea of Mark Harris's nsys_easy
# (github.com/harrism/nsys_easy). The full report stays in ./nsys_easy.nsys-rep
# for the Nsight Systems GUI.
# Set NSYS=/path/to/nsys if nsys is not on PATH (without it: the one scripts/fetch-nsys.sh
# unpacks into .nsys/, if there is one). Exits 77 if there is no nsys.
set -u
if [ $# -lt 1 ]; then
  echo "usage: nsys_easy.sh <program> [arguments...]" >&2
  exit 2
fi
nsys=${NSYS:-nsys}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$nsys" = nsys ] && ! command -v nsys >/dev/null 2>&1 && [ -x "$here/../.nsys/bin/nsys" ]; then
  nsys=$here/../.nsys/bin/nsys
fi
if ! command -v "$nsys" >/dev/null 2>&1; then
  cat >&2 <<MESSAGE
nsys_easy: nsys is not installed (looked for '$nsys').
  Nsight Systems comes with the CUDA toolkit or from developer.nvidia.com/nsight-systems;
  set NSYS=/path/to/nsys if it is installed off PATH. Without it,
  05_nsys_profiling --trace trace.json prints the same summaries from CUPTI.
MESSAGE
  exit 77
fi

report=nsys_easy
# -t cuda,nvtx: CUDA API calls, GPU work and the program's NVTX ranges.
"$nsys" profile -t cuda,nvtx --stats=false --force-overwrite=true -o "$report" "$@"
status=$?
if [ ! -f "$report.nsys-rep" ]; then
  echo "nsys_easy: nsys wrote no report ($report.nsys-rep)" >&2
  exit 1
fi
# Kernels and memory operations in one table, as nsys_easy prints them. The report was
# renamed in nsys 2023.1 (gpusum -> cuda_gpu_sum): ask nsys which one it has.
gpu_summary=gpusum
if "$nsys" stats --help-reports 2>&1 | grep -q '^ *cuda_gpu_sum'; then gpu_summary=cuda_gpu_sum; fi
summary=$("$nsys" stats --force-export=true --report "$gpu_summary" "$report.nsys-rep") || exit 1
printf '%s\n' "$summary"
if printf '%s\n' "$summary" | grep -q '^SKIPPED:'; then
  # An nsys older than the program's CUDA runtime stops reading the trace at the first runtime
  # call it does not know ("Unknown runtime API function index" among its messages above).
  echo "nsys_easy: nsys found no kernels or memory operations in its report: see its messages above." >&2
  exit 1
fi
exit "$status"  # the program's verdict, which nsys passes on
