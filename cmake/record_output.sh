#!/usr/bin/env bash
# Runs one benchmark of the GPU check and keeps its output as a Markdown record:
#   record_output.sh <record.md> <command> [args...]
# The record's first lines say where and when it ran (TUTORIAL_RUN_ABOUT, set by
# scripts/gpu-check.sh), then the command, its exit status and time, then the output.
# The exit status is the command's: CTest's verdict on the benchmark.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 <record.md> <command> [args...]" >&2
  exit 2
fi
record=$1
shift
name=$(basename "$record" .md)
root=$(cd "$(dirname "$0")/.." && pwd)

begin=$(date +%s)
output=$("$@" 2>&1)
status=$?
seconds=$(( $(date +%s) - begin ))
printf '%s\n' "$output"

command="$*"
mkdir -p "$(dirname "$record")"
{
  echo "# $name"
  echo
  echo "${TUTORIAL_RUN_ABOUT:-Run by hand on $(date -u '+%Y-%m-%d %H:%M UTC').}"
  echo "Command: \`${command//$root\//}\` (exit status $status, ${seconds} s)"
  echo
  echo '```text'
  printf '%s\n' "$output"
  echo '```'
} >"$record"
exit "$status"
