#!/usr/bin/env bash
# Checks that every binary given holds machine code for one GPU architecture:
#
#   check_machine_code.sh <cuobjdump> <arch> <binary>...      e.g. ... cuobjdump 70 bin/01_hello_add
#
# `cuobjdump --list-elf` names each cubin after its architecture ("add.1.sm_70.cubin"),
# so a binary holds sm_<arch> machine code when one of its cubins says so.
# Exit status: 0 when all do, 1 when one does not, 77 (CTest: skipped) without cuobjdump.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 <cuobjdump> <arch> <binary>..." >&2
  exit 2
fi
cuobjdump=$1
arch=$2
shift 2
if [ -z "$cuobjdump" ] || [ ! -x "$cuobjdump" ]; then
  echo "check_machine_code: skipped: no cuobjdump found when CMake configured the build."
  exit 77
fi

missing=0
for binary in "$@"; do
  cubins=$("$cuobjdump" --list-elf "$binary" 2>&1 | grep -oE 'sm_[0-9]+[a-z]?\.cubin$' |
           sed 's/\.cubin$//' | sort -u -V | paste -sd' ' -)
  if grep -qw "sm_$arch" <<<"$cubins"; then
    printf '  ok       %-28s %s\n' "$(basename "$binary")" "$cubins"
  else
    printf '  MISSING  %-28s %s\n' "$(basename "$binary")" "${cubins:-no machine code}"
    missing=$((missing + 1))
  fi
done
if [ $missing -gt 0 ]; then
  echo "check_machine_code: FAILED: $missing of $# binaries hold no sm_$arch machine code"
  exit 1
fi
echo "check_machine_code: passed: all $# binaries hold sm_$arch machine code"
