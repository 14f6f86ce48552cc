#!/usr/bin/env bash
# A rank that stops or dies in the middle of a timed run must not hang the job: it ends, non-zero,
# naming that rank, within the deadline plus 10 s of the fault.
#
#   fault_test.sh <STOP|KILL> <deadline s> <regex> <mpirun.sh> <processes> <program> [args...]
#
# Starts the job, waits until rank 0 prints that the timed run began, sends the signal to rank 1's
# process, then waits. Passes if the job exits non-zero (77 is a skip) within <deadline s> + 10 s of
# the signal, and its output matches <regex>. A stopped process left behind is killed at the end.
set -u
if [ $# -lt 6 ]; then
  echo "usage: $0 <STOP|KILL> <deadline s> <regex> <mpirun.sh> <processes> <program> [args...]" >&2
  exit 2
fi
signal=$1 deadline=$2 pattern=$3
shift 3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# MPIRUN_QUIET=0: mpirun's own line about a rank that died is part of what names it.
MPIRUN_QUIET=0 setsid bash "$@" >"$log" 2>&1 &
job=$!
for _ in $(seq 300); do  # up to 30 s for the start-up and the checks (then on: a program that never says)
  grep -q '^### All-reduce' "$log" && break
  kill -0 $job 2>/dev/null || break
  sleep 0.1
done
if ! kill -0 $job 2>/dev/null; then
  wait $job
  status=$?
  cat "$log"
  [ "$status" -eq 77 ] && { echo "fault_test: skipped (exit 77: the reason is above)"; exit 77; }
  echo "fault_test: FAILED, the job ended (status $status) before its timed run began"
  exit 1
fi
sleep 2  # well inside the timed run
# Rank 1's process: the one whose environment says so (Open MPI sets OMPI_COMM_WORLD_RANK).
victim=""
for pid in $(pgrep -f "$(basename "$3")"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
    victim=$pid
    break
  fi
done
if [ -z "$victim" ]; then
  cat "$log"
  echo "fault_test: FAILED, found no process of rank 1"
  kill -KILL -- -$job 2>/dev/null
  exit 1
fi
echo "fault_test: kill -$signal rank 1 (pid $victim)"
sent=$(date +%s%N)
kill -"$signal" "$victim"
limit_ms=$(((deadline + 10) * 1000))
while kill -0 $job 2>/dev/null && [ $((($(date +%s%N) - sent) / 1000000)) -lt $((limit_ms + 5000)) ]; do
  sleep 0.1
done
elapsed_ms=$((($(date +%s%N) - sent) / 1000000))
if kill -0 $job 2>/dev/null; then
  kill -KILL -- -$job 2>/dev/null
  status=124
else
  wait $job
  status=$?
fi
kill -KILL "$victim" 2>/dev/null  # a stopped rank that nobody ended
cat "$log"
echo "fault_test: exit status $status, $elapsed_ms ms after the signal (limit $((limit_ms / 1000)) s)"
if [ "$status" -eq 0 ] || [ "$status" -eq 124 ]; then
  echo "fault_test: FAILED, the job $([ "$status" -eq 0 ] && echo 'exited 0' || echo 'was still running, ended from outside')"
  exit 1
fi
if [ "$elapsed_ms" -gt "$limit_ms" ]; then
  echo "fault_test: FAILED, the job took longer than the deadline + 10 s to end"
  exit 1
fi
if ! grep -q -E -- "$pattern" "$log"; then
  echo "fault_test: FAILED, output does not match: $pattern"
  exit 1
fi
echo "fault_test: passed"
