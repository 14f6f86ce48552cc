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
# memory throughput as a percentage of the GPU's peak, and last a SUMMARY line:
# the program's checks plus one (ncu measured the kernel), and ncu's figures.
# Exit 0 when all passed, 1 when a check failed or ncu measured nothing, 77 (skipped)
# when ncu is missing or may not read the GPU's performance counters.
# Set NCU=/path/to/ncu if ncu is off PATH.
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
  exit 77
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
  exit 77
fi
if [ "$status" -eq 77 ]; then
  echo "ncu_add: the program found no usable GPU."
  exit 77
fi
if [ "$status" -ne 0 ]; then
  echo "ncu_add: ncu exited with status $status, so there are no numbers to report."
  exit 1
fi

# SpeedOfLight lines read "<name>  <unit>  <value>", e.g. "Memory Throughput   %   92.27".
metric() {  # metric <name> <unit regex>  ->  "<value> <unit>"
  printf '%s\n' "$output" |
    awk -v re="^ *$1 +$2 +[0-9.,]+ *$" '$0 ~ re { print $NF " " $(NF - 1); exit }'
}
memory=$(metric "Memory Throughput" "%")
if [ -z "$memory" ]; then
  echo "ncu_add: ncu printed no Memory Throughput: was an add kernel profiled?"
  exit 1
fi
dram=$(metric "DRAM Throughput" "%")
duration=$(metric Duration "[mun]?s")
echo "ncu_add: add in 'add many blocks': Memory Throughput $memory of peak," \
     "DRAM Throughput $dram of peak, Duration $duration"

# The program's own verdict is its SUMMARY line; ours adds one check (ncu measured the
# kernel) and ncu's figures.
program_summary=$(printf '%s\n' "$output" | grep '^SUMMARY ' | tail -n 1)
field() { printf '%s\n' "$program_summary" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
checks=$(field checks) failed=$(field failed) exact=$(field exact)
if [ -z "$checks" ]; then
  echo "ncu_add: the program printed no SUMMARY line"
  checks=0 failed=1 exact=0
fi
number() { printf '%s\n' "$1" | awk '{ v = $1; gsub(",", "", v); print (v == "" ? "null" : v) }'; }
duration_us=$(printf '%s\n' "$duration" |
  awk '{ v = $1; gsub(",", "", v); print ($2 == "ms" ? v * 1000 : ($2 == "ns" ? v / 1000 : v)) }')
printf '\nSUMMARY {"program":"05_ncu","checks":%d,"failed":%d,"exact":%d,"goals":[],' \
  $((checks + 1)) "$failed" "$exact"
printf '"figures":{"memory_pct":%s,"dram_pct":%s,"duration_us":%s}}\n' \
  "$(number "$memory")" "$(number "$dram")" "${duration_us:-null}"
[ "$failed" -eq 0 ]
