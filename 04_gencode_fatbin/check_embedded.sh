#!/usr/bin/env bash
# Checks that a binary embeds exactly the GPU code the lesson says it does:
#
#   check_embedded.sh <cuobjdump> <binary> <machine code> <PTX>
#
# <machine code> and <PTX> are comma-separated architectures ("80,90", or "" for
# none). `cuobjdump --list-elf` lists the binary's cubins (machine code) and
# `--list-ptx` its PTX; both name each file after its architecture, e.g.
# "gencode_fatbin.1.sm_90.cubin" and "gencode_fatbin.1.sm_90.ptx" (PTX for
# compute_90 is named sm_90 too). Each .cu file of the program has its own entry,
# so an architecture may be listed more than once: the test compares the sets.
#
# Exit status: 0 when both sets match, 1 when they do not, 77 (CTest: skipped)
# when no cuobjdump was found at configure time.
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 <cuobjdump> <binary> <machine code archs> <PTX archs>" >&2
  exit 2
fi
cuobjdump=$1
binary=$2
want_machine_code=$3
want_ptx=$4

if [ -z "$cuobjdump" ] || [ ! -x "$cuobjdump" ]; then
  echo "check_embedded: skipped: no cuobjdump found when CMake configured the build."
  echo "It ships with every CUDA toolkit (bin/cuobjdump) and on PyPI:"
  echo "  python3 -m pip install nvidia-cuda-cuobjdump   (then re-run cmake)"
  exit 77
fi

# The architectures in a listing, sorted and comma-separated: "80,90".
architectures() {
  grep -oE 'sm_[0-9]+[a-z]?\.(cubin|ptx)$' | sed -E 's/^sm_([0-9]+[a-z]?)\..*/\1/' | sort -u -V | paste -sd, -
}
normalize() { tr ',' '\n' <<<"$1" | grep -v '^$' | sort -u -V | paste -sd, -; }

elf_listing=$("$cuobjdump" --list-elf "$binary" 2>&1) || { echo "$elf_listing"; exit 1; }
ptx_listing=$("$cuobjdump" --list-ptx "$binary" 2>&1) || { echo "$ptx_listing"; exit 1; }
echo "\$ cuobjdump --list-elf $(basename "$binary")"
echo "$elf_listing"
echo "\$ cuobjdump --list-ptx $(basename "$binary")"
echo "$ptx_listing"

found_machine_code=$(architectures <<<"$elf_listing")
found_ptx=$(architectures <<<"$ptx_listing")
want_machine_code=$(normalize "$want_machine_code")
want_ptx=$(normalize "$want_ptx")

status=0
if [ "$found_machine_code" != "$want_machine_code" ]; then
  echo "check_embedded: FAILED: machine code for [${found_machine_code}], the lesson says [${want_machine_code}]"
  status=1
fi
if [ "$found_ptx" != "$want_ptx" ]; then
  echo "check_embedded: FAILED: PTX for [${found_ptx}], the lesson says [${want_ptx}]"
  status=1
fi
if [ $status -eq 0 ]; then
  echo "check_embedded: passed: machine code for [${found_machine_code}], PTX for [${found_ptx}]"
fi
exit $status
