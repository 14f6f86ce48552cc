#!/usr/bin/env bash
# A cuda-gdb session on the planted bug, in batch mode (a command file, no terminal needed):
# a breakpoint in the kernel, a switch to another thread, its variables printed. The transcript
# is the lesson's record; the run passes only if cuda-gdb showed the bug (a row sum short of
# its last column).
#   usage: cuda_gdb_session.sh <05_debugging_g>      (exit 77: no GPU or no cuda-gdb)
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 <05_debugging_g>" >&2
  exit 2
fi
program=$1
source_file=$(dirname "$0")/debugging.cu
CUDA_GDB=${CUDA_GDB:-cuda-gdb}
if ! command -v "$CUDA_GDB" > /dev/null; then
  echo "cuda-gdb is not installed (it comes with the CUDA toolkit): skipped."
  exit 77
fi
"$program" --rows 1 --cols 1 > /dev/null 2>&1
if [ $? -eq 77 ]; then
  echo "No usable CUDA GPU: skipped."
  exit 77
fi
line=$(grep -n 'cuda-gdb stops here' "$source_file" | cut -d: -f1)
commands=$(mktemp)
trap 'rm -f "$commands"' EXIT
# The breakpoint stops the warp that holds row 69 (block 1, thread 5), at the line after the
# loop; thread 6 is in the same warp, so it stands at the same line. With 16 columns of r,
# row r should sum to 16 r: 1104 and 1120.
cat > "$commands" <<GDB
set pagination off
set confirm off
set breakpoint pending on
break debugging.cu:$line if row == 69
run
info cuda kernels
print row
print sum
cuda block (1,0,0) thread (6,0,0)
print row
print sum
print cols
delete
continue
GDB
echo "\$ cat commands.gdb"
sed "s/^/  /" "$commands"
echo "\$ cuda-gdb -batch -x commands.gdb --args $(basename "$program") --planted-bug"
transcript=$(timeout 300 "$CUDA_GDB" -batch -x "$commands" --args "$program" --planted-bug 2>&1)
status=$?
# The debugged program's own SUMMARY line reports its planted bug as a failed check: indented, so
# that the record counts this session's verdict (its SUMMARY line, last), not the planted bug.
printf '%s\n' "$transcript" | sed 's/^SUMMARY /  SUMMARY /'
echo
printed() { printf '%s\n' "$transcript" | grep -qE "^\\\$[0-9]+ = $1\$"; }
summary() { echo "SUMMARY {\"program\":\"05_debugging_cuda_gdb\",\"checks\":1,\"failed\":$1,\"exact\":0,\"goals\":[],\"figures\":{}}"; }
if printed 69 && printed 1035 && printed 70 && printed 1050; then
  echo "cuda-gdb showed the bug: rows 69 and 70 summed 1035 and 1050, one column short of 1104 and 1120."
  summary 0
  exit 0
fi
echo "FAILED: the transcript does not show rows 69 and 70 summing to 1035 and 1050 (cuda-gdb exit status $status)."
summary 1
exit 1
