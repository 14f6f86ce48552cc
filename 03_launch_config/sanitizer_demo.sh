#!/usr/bin/env bash
# Runs 03_sanitizer_demo under compute-sanitizer four times and checks what each run reports:
#   memcheck  --bug out-of-bounds  must find the invalid __global__ accesses;
#   memcheck  --bug none           must report 0 errors;
#   racecheck --bug race           must find a shared-memory hazard;
#   racecheck --bug none           must report 0 hazards.
# A sanitizer that misses a planted bug fails this script as surely as one that flags the fix.
#   sanitizer_demo.sh <compute-sanitizer> <03_sanitizer_demo>
# Exit status: 0 every run reported what it should; 1 one did not; 77 no usable GPU.
# Ends with a SUMMARY line for the course's record (scripts/results.py).
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 <compute-sanitizer> <03_sanitizer_demo>" >&2
  exit 2
fi
sanitizer=$1
program=$2
checks=0
failed=0

# run <tool> <bug> <what it must print (extended regex)> <what that means>
run() {
  local tool=$1 bug=$2 expected=$3 meaning=$4 output status
  echo "\$ compute-sanitizer --tool $tool --show-backtrace no --print-limit 1 ./03_sanitizer_demo --bug $bug"
  output=$("$sanitizer" --tool "$tool" --show-backtrace no --print-limit 1 "$program" --bug "$bug" 2>&1)
  status=$?
  # The program's own SUMMARY line is the course's test plumbing, and a planted bug makes its
  # checks fail on purpose: the record counts this script's verdict (its SUMMARY, last) alone.
  printf '%s\n' "$output" | grep -v '^SUMMARY '
  if printf '%s\n' "$output" | grep -q "^No usable CUDA GPU"; then
    echo "sanitizer_demo: skipped (no usable GPU)"
    exit 77
  fi
  checks=$((checks + 1))
  # The fixed kernels must also pass the program's own checks (exit 0).
  if printf '%s\n' "$output" | grep -q -E -- "$expected" && { [ "$bug" != none ] || [ "$status" -eq 0 ]; }; then
    echo "Check ok: $meaning"
  else
    echo "Check FAILED: $meaning (expected a line matching: $expected; exit status $status)"
    failed=$((failed + 1))
  fi
  echo
}

run memcheck out-of-bounds "Invalid __global__ (read|write) of size 4" \
  "memcheck finds the accesses past the ends of x, y and z"
run memcheck none "ERROR SUMMARY: 0 errors" "memcheck finds nothing in the fixed add"
run racecheck race "RACECHECK SUMMARY: [1-9][0-9]* hazards? displayed" \
  "racecheck finds the race on shared memory"
run racecheck none "RACECHECK SUMMARY: 0 hazards displayed" \
  "racecheck finds nothing in the fixed reversal"

printf 'SUMMARY {"program":"03_sanitizer","checks":%d,"failed":%d,"exact":0,"goals":[],"figures":{}}\n' \
  "$checks" "$failed"
[ "$failed" -eq 0 ]
