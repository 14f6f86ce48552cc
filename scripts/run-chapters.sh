#!/usr/bin/env bash
# Builds the course (if needed) and runs every chapter program with its default
# settings, showing each one's output. A chapter that finds no GPU says so and
# counts as skipped; any other failure makes the script exit 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

cmake --preset default >/dev/null || { echo "run-chapters: configure failed"; exit 1; }
cmake --build --preset default || { echo "run-chapters: build failed"; exit 1; }

passed=() skipped=() failed=()
for program in build/bin/[0-9][0-9]_*; do
  [ -x "$program" ] || continue
  name=$(basename "$program")
  printf '\n===== %s =====\n' "$name"
  "$program"
  case $? in
    0) passed+=("$name") ;;
    77) skipped+=("$name") ;;
    *) failed+=("$name") ;;
  esac
done

printf '\n%d passed, %d failed, %d skipped\n' \
  "${#passed[@]}" "${#failed[@]}" "${#skipped[@]}"
[ ${#failed[@]} -eq 0 ]
