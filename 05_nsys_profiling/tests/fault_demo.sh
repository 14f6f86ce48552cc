#!/usr/bin/env bash
# fault_demo.sh <05_timing>: part 3 of timing.cu. A kernel writes through a null pointer;
# which call reports it? Runs `05_timing --fault-demo` twice, each a process of its own (the
# fault ruins its CUDA context): without CUDA_LAUNCH_BLOCKING the next cudaMemcpy must report
# it, with CUDA_LAUNCH_BLOCKING=1 the launch itself. Exit 0 when both did, 77 without a GPU.
set -u
if [ $# -ne 1 ]; then
  echo "usage: fault_demo.sh <path to 05_timing>" >&2
  exit 2
fi
failed=0
for blocking in 0 1; do
  CUDA_LAUNCH_BLOCKING=$blocking "$1" --fault-demo
  status=$?
  [ "$status" -eq 77 ] && exit 77
  [ "$status" -ne 0 ] && failed=1
  echo
done
exit $failed
