#!/usr/bin/env bash
# ncu_add.sh: what Nsight Compute says about the add kernel.
#
#   05_nsys_profiling/ncu_add.sh ./build/bin/05_nsys_profiling [program arguments...]
#
# Profiles ONE launch of add inside the program's "add many blocks" NVTX range:
# ncu replays a kernel many times to read all the counters a section needs, so
# one launch is plenty. Default program arguments: --n 2^26 --runs 1: two 256 MiB
# arrays, ten times the L2 cache, so the kernel streams from DRAM, and long
# enough (a few hundred us) that its start and its last partial wave of blocks
# weigh little. At 2^24 (a 64 us kernel) the first GPU check read 59% of peak.
# The four one-thread launches dominate the run: about 1 s each at 2^24 in that
# check, so expect about 20 s at 2^26.
# Prints the SpeedOfLight and MemoryWorkloadAnalysis sections, then the kernel's
# memory throughput as a percentage of the GPU's peak.
# A report, not a test: if ncu is missing or may not read the GPU's performance
# counters, it says why and exits 0. Set NCU=/path/to/ncu if ncu is off PATH.
set -u
if [ $# -lt 1 ]; then
  echo "usage: ncu_add.sh <path to 05_nsys_profiling> [program arguments...]" >&2
  exit 2
fi
program=$1
shift
if [ $# -gt 0 ]; then args=("$@"); else args=(--n '2^26' --runs 1); fi
ncu=${NCU:-ncu}
if ! command -v "$ncu" >/dev/null 2>&1; then
  echo "ncu_add: ncu is not installed (looked for '$ncu'), so there is nothing to report."
  echo "  Nsight Compute comes with the CUDA toolkit or from developer.nvidia.com/nsight-compute."
  exit 0
fi

# --clock-control none: measure at the clocks the GPU really runs at (by default
# ncu locks them to base clock, which makes a kernel look slower than it is).
output=$("$ncu" --clock-control none --nvtx --nvtx-include "add many blocks/" \
                --kernel-name regex:add --launch-count 1 \
                --section SpeedOfLight --section MemoryWorkloadAnalysis \
                "$program" "${args[@]}" 2>&1)
status=$?
printf '%s\n' "$output"
echo
if printf '%s\n' "$output" | grep -q ERR_NVGPUCTRPERM; then
  echo "ncu_add: this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM):"
  echo "  run as root, or see developer.nvidia.com/ERR_NVGPUCTRPERM. No numbers to report."
  exit 0
fi
if [ "$status" -ne 0 ]; then
  echo "ncu_add: ncu exited with status $status, so there are no numbers to report."
  exit 0
fi

# SpeedOfLight lines read "<name>  <unit>  <value>", e.g. "Memory Throughput   %   92.27".
metric() {  # metric <name> <unit regex>  ->  "<value> <unit>"
  printf '%s\n' "$output" |
    awk -v re="^ *$1 +$2 +[0-9.,]+ *$" '$0 ~ re { print $NF " " $(NF - 1); exit }'
}
memory=$(metric "Memory Throughput" "%")
if [ -z "$memory" ]; then
  echo "ncu_add: ncu printed no Memory Throughput: was an add kernel profiled?"
  exit 0
fi
echo "ncu_add: add in 'add many blocks': Memory Throughput $memory of peak," \
     "DRAM Throughput $(metric "DRAM Throughput" "%") of peak, Duration $(metric Duration "[mun]?s")"
