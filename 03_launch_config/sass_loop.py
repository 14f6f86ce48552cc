#!/usr/bin/env python3
"""Checks what chapter 03's README says about the grid-stride loop's machine code.

The README's Little's-law argument ("Bandwidth at 2^28 elements") rests on one fact of the
compiler: in add_grid_stride's loop, each trip is two loads (LDG), one add (FADD) and one store
(STG), and the next trip's loads come after this trip's store, so a thread has at most its two
4-byte loads in flight. This script reads the loop from the build's sm_90 machine code with
`cuobjdump -sass` and prints it; --check fails if the fact no longer holds.

    sass_loop.py BINARY [--cuobjdump PATH] [--check]   # CTest: 03_launch_config.sass_loop
    sass_loop.py BINARY --kernel MANGLED --check        # another kernel's loop: it can fail
                                                        # (CTest: 03_launch_config.sass_loop_can_fail)

BINARY is the built 03_add_progression. Exit status: 0 the fact holds (or, without --check,
the loop was printed); 1 it does not; 77 (skipped) the build cannot be read: no cuobjdump
(CMake's X-NOTFOUND counts as none), or no sm_90 machine code in it.
"""
import argparse
import re
import shutil
import subprocess
import sys

SKIPPED = 77
KERNEL = "_Z15add_grid_stridemPKfS0_Pf"  # add_grid_stride(size_t, const float*, const float*, float*)
ARCH = "sm_90"
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def skip(why):
    print(f"sass_loop: skipped: {why}")
    sys.exit(SKIPPED)


def kernel_sass(binary, cuobjdump, kernel):
    """The kernel's instructions in the sm_90 code: [(address, opcode, operands)]."""
    done = subprocess.run([cuobjdump, "-sass", "-arch", ARCH, "-fun", kernel, binary],
                          capture_output=True, text=True)
    if done.returncode != 0 or "Function : " + kernel not in done.stdout:
        skip(f"no {ARCH} code for {kernel} in {binary} ({(done.stderr or done.stdout).strip()[:200]})")
    return [(int(m.group(1), 16), m.group(3), m.group(4).strip())
            for m in INSTRUCTION.finditer(done.stdout)]


def main_loop(instructions):
    """The instructions of the loop: from a backward branch's target to the branch."""
    for address, opcode, operands in instructions:
        target = re.match(r"0x([0-9a-f]+)", operands)
        if opcode == "BRA" and target and int(target.group(1), 16) < address:
            start = int(target.group(1), 16)
            return [i for i in instructions if start <= i[0] <= address]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--cuobjdump", default="")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--kernel", default=KERNEL, help="mangled name (default: add_grid_stride's)")
    args = parser.parse_args()
    cuobjdump = args.cuobjdump if args.cuobjdump and not args.cuobjdump.endswith("-NOTFOUND") \
        else shutil.which("cuobjdump")
    if not cuobjdump:
        skip("no cuobjdump (pip install nvidia-cuda-cuobjdump, or the CUDA toolkit's)")
    loop = main_loop(kernel_sass(args.binary, cuobjdump, args.kernel))
    opcodes = [opcode.split(".")[0] for _, opcode, _ in loop]
    counts = {op: opcodes.count(op) for op in ("LDG", "FADD", "STG")}
    store = opcodes.index("STG") if "STG" in opcodes else -1
    loads_after_store = [i for i, op in enumerate(opcodes) if op == "LDG" and i > store]
    print(f"{args.kernel}, {ARCH}: a loop of {len(loop)} instructions, "
          f"{counts['LDG']} LDG, {counts['FADD']} FADD, {counts['STG']} STG per trip")
    for address, opcode, operands in loop:
        print(f"  /*{address:04x}*/ {opcode} {operands}")
    holds = counts == {"LDG": 2, "FADD": 1, "STG": 1} and store >= 0 and not loads_after_store
    print("sass_loop: the README's fact " + ("holds" if holds else "does NOT hold") +
          ": two 4-byte loads, an add and a store per trip, the next trip's loads after the store")
    return 1 if args.check and not holds else 0


if __name__ == "__main__":
    sys.exit(main())
