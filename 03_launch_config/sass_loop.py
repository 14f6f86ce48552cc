#!/usr/bin/env python3
"""Checks what chapter 03's README says about the grid-stride loop's machine code.

The README's Little's-law argument ("Bandwidth at 2^28 elements") rests on one fact of the
compiler: in add_grid_stride's loop, each element is two loads (LDG), one add (FADD) and one
store (STG), and the next element's loads come after this element's store (z might overlap x or
y), so a thread has at most its two 4-byte loads in flight. An unrolled loop keeps the fact if
its loads never run ahead of its stores. This script reads the loop from the build's sm_90
machine code with `cuobjdump -sass` and prints it; --check fails if the fact no longer holds.

    sass_loop.py BINARY [--cuobjdump PATH] [--check]   # CTest: 03_launch_config.sass_loop
    sass_loop.py BINARY --kernel MANGLED --check        # another kernel's loop: it can fail
                                                        # (CTest: 03_launch_config.sass_loop_can_fail)
    sass_loop.py BINARY --loads-first --kernel MANGLED --check
        # launch_params.cu's transpose_tiled<8> comment: every global load (LDG) is issued before the
        # first store to shared memory (STS), so all rows are in flight at once
        # (CTest: 03_launch_config.transpose_loads_first, and _can_fail on 07_sgemm's 1-D tiling)

BINARY is the built 03_add_progression (03_launch_params for --loads-first). Exit status: 0 the fact holds (or, without --check,
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


def loads_first(args, instructions):
    """--loads-first: every LDG before the first STS, at least two LDG."""
    opcodes = [opcode.split(".")[0] for _, opcode, _ in instructions]
    first_store = opcodes.index("STS") if "STS" in opcodes else len(opcodes)
    loads, before = opcodes.count("LDG"), opcodes[:first_store].count("LDG")
    print(f"{args.kernel}, {ARCH}: {loads} LDG, {before} of them before the first STS; in order: "
          + " ".join(op for op in opcodes if op in ("LDG", "STS", "BAR")))
    holds = loads >= 2 and before == loads and first_store < len(opcodes)
    print("sass_loop: the kernel's fact " + ("holds" if holds else "does NOT hold") +
          ": every global load issued before the first store to shared memory")
    return 1 if args.check and not holds else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--cuobjdump", default="")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--kernel", default=KERNEL, help="mangled name (default: add_grid_stride's)")
    parser.add_argument("--loads-first", action="store_true",
                        help="check that every LDG comes before the first STS instead")
    args = parser.parse_args()
    cuobjdump = args.cuobjdump if args.cuobjdump and not args.cuobjdump.endswith("-NOTFOUND") \
        else shutil.which("cuobjdump")
    if not cuobjdump:
        skip("no cuobjdump (pip install nvidia-cuda-cuobjdump, or the CUDA toolkit's)")
    if args.loads_first:
        return loads_first(args, kernel_sass(args.binary, cuobjdump, args.kernel))
    loop = main_loop(kernel_sass(args.binary, cuobjdump, args.kernel))
    opcodes = [opcode.split(".")[0] for _, opcode, _ in loop]
    counts = {op: opcodes.count(op) for op in ("LDG", "FADD", "STG")}
    # Loads never ahead of stores: before the k-th store (k = 0, 1, ...) at most 2 (k + 1) loads.
    stores_seen, loads_seen, ahead = 0, 0, False
    for op in opcodes:
        loads_seen += op == "LDG"
        stores_seen += op == "STG"
        ahead |= loads_seen > 2 * (stores_seen + 1)
    print(f"{args.kernel}, {ARCH}: a loop of {len(loop)} instructions, "
          f"{counts['LDG']} LDG, {counts['FADD']} FADD, {counts['STG']} STG a trip")
    for address, opcode, operands in loop:
        print(f"  /*{address:04x}*/ {opcode} {operands}")
    holds = (counts["STG"] >= 1 and counts["LDG"] == 2 * counts["STG"] and counts["FADD"] == counts["STG"]
             and not ahead)
    print("sass_loop: the README's fact " + ("holds" if holds else "does NOT hold") +
          ": two 4-byte loads, an add and a store an element, the next element's loads after the store")
    return 1 if args.check and not holds else 0


if __name__ == "__main__":
    sys.exit(main())
