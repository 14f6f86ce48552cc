#!/usr/bin/env python3
"""Checks, in the machine code, what the LL one-shot relies on: each {value, epoch} pair is written
by one store instruction and read by one load.

allreduce.cuh packs a value and its epoch into one 64-bit word and stores two words with one
st.volatile.global.v2.u64. The PTX memory model makes each aligned 64-bit element single-copy
atomic; this script shows what the GPU is given: in every LL kernel (2 to 8 GPUs) the line stores
and the polling loads are 128-bit STG/LDG .STRONG.SYS (volatile at system scope), and no
volatile access of 64 bits or less carries a pair. The narrower volatile accesses left are named:
one 64-bit load of the call counter (begin_call), two 32-bit loads of the dead flag (before the
push and in the block's vote) and one 32-bit store of the timeout record's `happened` flag.

    sass_ll_line.py BINARY [--cuobjdump PATH]   # CTest: 08_allreduce.sass_ll_line

BINARY is the built 08_allreduce. Exit status: 0 the fact holds; 1 it does not; 77 (skipped)
no cuobjdump, or no sm_90 machine code in the binary.
"""
import argparse
import re
import shutil
import subprocess
import sys

LL = 2  # allreduce::Algorithm::kOneShotLL
FUNCTION = re.compile(r"Function : (_ZN9allreduce10all_reduceILi(\d)ELNS_9AlgorithmE(\d)EEEvNS_5PeersENS_4CallE)")
ACCESS = re.compile(r"\b(STG|LDG)\.E(\.(?:64|128))?\.STRONG\.SYS\b")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--cuobjdump", default="cuobjdump")
    args = parser.parse_args()
    cuobjdump = shutil.which(args.cuobjdump)
    if not cuobjdump:
        print(f"sass_ll_line: skipped: no cuobjdump ({args.cuobjdump})")
        return 77
    done = subprocess.run([cuobjdump, "-sass", "-arch", "sm_90", args.binary], capture_output=True, text=True)
    kernels, current = {}, None
    for line in done.stdout.splitlines():
        match = FUNCTION.search(line)
        if match:
            current = int(match.group(2)) if int(match.group(3)) == LL else None
            if current is not None:
                kernels[current] = {}
            continue
        if "Function : " in line:
            current = None
        if current is not None:
            for access in ACCESS.finditer(line):
                key = access.group(1) + (access.group(2) or ".32")
                kernels[current][key] = kernels[current].get(key, 0) + 1
    if not kernels:
        print("sass_ll_line: skipped: no sm_90 machine code of the LL kernels in " + args.binary)
        return 77
    print("| GPUs | volatile (STRONG.SYS) accesses in the LL kernel |\n|---|---|")
    ok = True
    for gpus in sorted(kernels):
        counts = kernels[gpus]
        print("| %d | %s |" % (gpus, ", ".join("%s: %d" % kv for kv in sorted(counts.items()))))
        pairs_whole = (counts.get("STG.128", 0) >= 1 and counts.get("LDG.128", 0) >= 1
                       and counts.get("STG.64", 0) == 0 and counts.get("STG.32", 0) <= 1
                       and counts.get("LDG.64", 0) <= 1 and counts.get("LDG.32", 0) <= 2)
        ok = ok and pairs_whole
    print("sass_ll_line: " + ("every line store and poll is one 128-bit access: each {value, epoch} pair travels "
                              "whole" if ok else "FAILED, a line is split into narrower accesses"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
