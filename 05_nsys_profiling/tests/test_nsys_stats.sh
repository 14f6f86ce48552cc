#!/usr/bin/env bash
# nsys_stats.sh's verdicts, without a GPU or nsys: a stand-in nsys prints what nsys printed.
#   pass: the kernel summary lists the kernel          -> the program's status (0)
#   skip: "Unknown runtime API function index" and no kernel (an nsys older than CUDA) -> 77
#   fail: no kernel, and no reason given               -> 1
#   skip: no nsys at all                               -> 77
set -u
script=$(cd "$(dirname "$0")/.." && pwd)/nsys_stats.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/nsys" <<'STAND_IN'
#!/usr/bin/env bash
if [ "$1" = --version ]; then echo "NVIDIA Nsight Systems version 2022.4.2.1-stand-in"; exit 0; fi
cat "$STAND_IN_OUTPUT"
STAND_IN
chmod +x "$work/nsys"

kernel_table='[5/7] Executing '"'"'gpukernsum'"'"' stats report

 Time (%)  Total Time (ns)  Instances  Name
    100.0         54117909          1  add(int, const float *, float *)

[6/7] Executing '"'"'gpumemtimesum'"'"' stats report'
unknown_index='[QuadDCommon::tag_message*] = Unknown runtime API function index: 440
[5/7] Executing '"'"'gpukernsum'"'"' stats report
[6/7] Executing '"'"'gpumemtimesum'"'"' stats report'
empty='[5/7] Executing '"'"'gpukernsum'"'"' stats report
[6/7] Executing '"'"'gpumemtimesum'"'"' stats report
 100.0  5  add(int, const float *, float *)'  # add( after the kernel table: not in it

failed=0
expect() {  # expect <name> <status> <output regex> <nsys> <nsys output>
  printf '%s\n' "$5" >"$work/output"
  output=$(cd "$work" && STAND_IN_OUTPUT="$work/output" NSYS=$4 bash "$script" r 'add(' true 2>&1)
  status=$?
  if [ "$status" -ne "$2" ] || ! printf '%s\n' "$output" | grep -q -E -- "$3"; then
    echo "FAIL: $1: exit status $status (expected $2), output:"
    printf '%s\n' "$output" | tail -n 4
    failed=1
  else
    echo "ok: $1 (exit status $status)"
  fi
}
expect "kernel in the summary" 0 "nsys traced 'add\(" "$work/nsys" "$kernel_table"
expect "nsys older than the runtime" 77 "cannot read this program's CUDA calls" "$work/nsys" "$unknown_index"
expect "no kernel, no reason" 1 "FAILED, nsys's kernel summary lists no kernel" "$work/nsys" "$empty"
expect "no nsys" 77 "nsys is not installed" "$work/no-such-nsys" ""
exit "$failed"
