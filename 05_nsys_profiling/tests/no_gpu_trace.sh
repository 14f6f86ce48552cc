#!/usr/bin/env bash
# --trace FILE where there is no GPU: the program must exit 77 with the usual no-GPU message,
# print nothing about CUPTI, and leave no FILE behind (an empty file would pass for a trace).
#   no_gpu_trace.sh <path to 05_nsys_profiling> <trace file>
# CUDA_VISIBLE_DEVICES= hides every GPU, so this runs the same with a GPU and without one.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 <path to 05_nsys_profiling> <trace file>" >&2
  exit 2
fi
program=$1 trace=$2
rm -f "$trace"
output=$(CUDA_VISIBLE_DEVICES= "$program" --trace "$trace" --n 4096 --runs 1 2>&1)
status=$?
printf '%s\n' "$output"
failed=0
fail() { echo "no_gpu_trace: FAILED, $1"; failed=1; }
[ "$status" -eq 77 ] || fail "exit status $status, expected 77"
printf '%s\n' "$output" | grep -q '^No usable CUDA GPU: ' || fail "no 'No usable CUDA GPU: ...' line"
if printf '%s\n' "$output" | grep -q -i cupti; then fail "CUPTI is mentioned"; fi
[ ! -e "$trace" ] || fail "$trace was left behind ($(wc -c <"$trace") bytes)"
[ "$failed" -eq 0 ] && echo "no_gpu_trace: passed (exit 77, one reason, no file left)"
exit "$failed"
