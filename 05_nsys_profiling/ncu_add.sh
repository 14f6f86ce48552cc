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

source "$(dirname "$0")/../cmake/run_or_skip.sh"
report_dir=$(mktemp -d)
trap 'rm -rf "$report_dir"' EXIT
report=$report_dir/add

# --clock-control none: measure at the clocks the GPU really runs at (by default
# ncu locks them to base clock, which makes a kernel look slower than it is).
# -o: the measurements go to a report file; its sections are shown from it below, and its
# numbers read from it as CSV.
# [excerpt:ncu]
run_or_skip ncu_add "$ncu" --clock-control none --nvtx --nvtx-include "add many blocks/" \
  --kernel-name regex:add --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis -o "$report" \
  "$program" "${args[@]}"
# [/excerpt:ncu]
program_output=$output
echo
if printf '%s\n' "$output" | grep -q ERR_NVGPUCTRPERM; then
  echo "ncu_add: this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM):"
  echo "  run as root, or see developer.nvidia.com/ERR_NVGPUCTRPERM. No numbers to report."
  exit 77
fi
if [ "$status" -ne 0 ] || [ ! -f "$report.ncu-rep" ]; then
  echo "ncu_add: ncu exited with status $status, so there are no numbers to report."
  exit 1
fi
"$ncu" --import "$report.ncu-rep"  # the sections, as ncu shows them
csv=$("$ncu" --import "$report.ncu-rep" --page raw --csv --print-units base) || exit 1

# ncu's figures from its CSV; the verdict: the program's own SUMMARY line, plus one check
# (ncu measured an add kernel), and ncu's figures.
PYTHONPATH="$(dirname "$0")/../scripts" python3 - "$csv" "$program_output" <<'EOF'
import json, sys
import ncu_csv

launches = ncu_csv.read(sys.argv[1])
summaries = [json.loads(line[len("SUMMARY "):]) for line in sys.argv[2].splitlines()
             if line.startswith("SUMMARY {")]
program = summaries[-1] if summaries else {"checks": 0, "failed": 1, "exact": 0}
if not summaries:
    print("ncu_add: the program printed no SUMMARY line")
figures = {"memory_pct": None, "dram_pct": None, "duration_us": None}
if launches:
    add = launches[0]
    figures = {"memory_pct": round(ncu_csv.value(add, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"), 2),
               "dram_pct": round(ncu_csv.value(add, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"), 2),
               "duration_us": round(ncu_csv.value(add, "gpu__time_duration.sum") / 1000, 2)}
    print(f"ncu_add: add in 'add many blocks': Memory Throughput {figures['memory_pct']:.2f} % "
          f"of peak, DRAM Throughput {figures['dram_pct']:.2f} % of peak, Duration {figures['duration_us']:.2f} us")
else:
    print("ncu_add: ncu measured no add kernel")
failed = program["failed"] + (0 if launches else 1)
print("\nSUMMARY " + json.dumps({"program": "05_ncu", "checks": program["checks"] + 1, "failed": failed,
                                 "exact": program["exact"], "goals": [], "figures": figures},
                                separators=(",", ":")))
sys.exit(1 if failed else 0)
EOF
