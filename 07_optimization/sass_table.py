#!/usr/bin/env python3
"""Writes the SGEMM lesson's table of what the compiler made of each kernel, from the build.

    sass_table.py BINARY [--nvcc PATH] [--cuobjdump PATH] [--nvdisasm PATH] [--update | --check]

BINARY is the built 07_sgemm. For its sm_90 machine code, `cuobjdump --dump-resource-usage`
gives each kernel's registers and local memory (spilled registers), and `cuobjdump -sass`
its instructions: how many FFMA, LDS.128 and LDG.E.128 the kernel holds, and the size of its
main loop (the longest backward branch: the loop over K). These counts belong to one nvcc
release, so the table (in sgemm/README.md, "the README" below) names the release it was made with:

    <!-- SASS-TABLE: nvcc 13.0, sm_90 -->  ...the table...  <!-- /SASS-TABLE -->

and prose quotes one count with <!--sass:7:registers-->222<!--/sass--> (step 7's fast path;
keys: registers, registers_checked).

--update rewrites the README. --check (the default; CTest 07_optimization.sass_table) changes
nothing and exits 1 when the README disagrees with the build, 77 (skipped) when the build
cannot be compared, saying why: no cuobjdump (CMake's X-NOTFOUND counts as none), a cuobjdump too
old to read the build, no sm_90 code in it, or another nvcc release. Without
nvdisasm (which `cuobjdump -sass` needs) it checks registers and local memory only, and says so.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# The page that holds the table: the SGEMM lesson's (the chapter page held it before the lessons).
PAGES = [Path(__file__).resolve().parent / "sgemm" / "README.md", Path(__file__).resolve().parent / "README.md"]
ARCH = "sm_90"
SKIPPED = 77
TABLE_OPEN, TABLE_CLOSE = "<!-- SASS-TABLE: nvcc ", "<!-- /SASS-TABLE -->"
FIGURE_OPEN, FIGURE_CLOSE = "<!--sass:", "<!--/sass-->"

# Table row -> (mangled-name pattern of the fast path, of the checked path or None).
KERNELS = [
    ("1 naive", r"sgemm_naive", None),
    ("2 coalesced", r"sgemm_coalesced", None),
    ("3 shared-memory tiling", r"sgemm_shared_tiling", None),
    ("4 1-D register tiling", r"sgemm_1d_blocktiling", None),
    ("5 2-D register tiling", r"sgemm_2d_blocktiling", None),
    ("6 float4, transposed A", r"sgemm_vectorizedILb0", r"sgemm_vectorizedILb1"),
    ("7 warp tiling", r"sgemm_warptilingINS_14WarptileConfigELb0", r"sgemm_warptilingINS_14WarptileConfigELb1"),
] + [("8%s double buffering" % c, r"sgemm_double_bufferedINS_7Tiles8%sELb0" % c,
      r"sgemm_double_bufferedINS_7Tiles8%sELb1" % c) for c in "abcde"]


def tool(given, name, beside=None):
    """The tool's path: the one given (CMake passes "" or X-NOTFOUND when it found none), else the
    one beside \p beside, else the one on PATH; None when there is none."""
    if given:
        return given if Path(given).is_file() else None
    if beside and (Path(beside).parent / name).is_file():
        return str(Path(beside).parent / name)
    return shutil.which(name)


def table_marker(text):
    """(start, end, nvcc release) of the table between the README's SASS-TABLE markers, or None."""
    start = text.find(TABLE_OPEN)
    if start < 0 or text.find(TABLE_CLOSE, start) < 0:
        return None
    header_end = text.index("\n", start)
    release = text[start + len(TABLE_OPEN):header_end].split(",")[0]
    return header_end + 1, text.index(TABLE_CLOSE, header_end), release


def inline_figures(text):
    """Each <!--sass:STEP:WHAT-->value<!--/sass--> of the README as (start, end, (STEP, WHAT))."""
    found, pos = [], text.find(FIGURE_OPEN)
    while pos >= 0:
        tag_end = text.index("-->", pos)
        step, _, what = text[pos + len(FIGURE_OPEN):tag_end].partition(":")
        close = text.index(FIGURE_CLOSE, tag_end)
        found.append((tag_end + len("-->"), close, (step, what)))
        pos = text.find(FIGURE_OPEN, close)
    return found


def nvcc_release(nvcc):
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    return re.search(r"release (\d+\.\d+)", out).group(1)


def resources(cuobjdump, binary):
    """{mangled kernel name: (registers, local memory bytes)} of the sm_90 code."""
    out = subprocess.run([cuobjdump, "--dump-resource-usage", "-arch", ARCH, binary],
                         capture_output=True, text=True, check=True).stdout
    found = re.findall(r"Function (\S+):\n\s+REG:(\d+) .*?LOCAL:(\d+)", out)
    return {name: (int(reg), int(local)) for name, reg, local in found}


def sass(cuobjdump, nvdisasm, binary):
    """{mangled kernel name: [(address, opcode, branch target or None)]} of the sm_90 code."""
    env = dict(os.environ, NVDISASM_PATH=str(Path(nvdisasm).parent))
    out = subprocess.run([cuobjdump, "-sass", "-arch", ARCH, binary], capture_output=True,
                         text=True, check=True, env=env).stdout
    kernels, current = {}, None
    for line in out.splitlines():
        name = re.match(r"\s+Function : (\S+)", line)
        if name:
            current = kernels.setdefault(name.group(1), [])
            continue
        ins = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*)", line)
        if ins and current is not None:
            target = re.match(r"(0x[0-9a-f]+)", ins.group(3)) if ins.group(2) == "BRA" else None
            current.append((int(ins.group(1), 16), ins.group(2), int(target.group(1), 16) if target else None))
    return kernels


def counts(instructions):
    """FFMA, LDS.128, LDG.E.128 in the kernel; instructions and FFMA in its longest loop."""
    def count(seq, prefix):
        return sum(1 for _, op, _ in seq if op == prefix or op.startswith(prefix + "."))
    loops = [(addr - target, target, addr) for addr, op, target in instructions
             if target is not None and target < addr]
    body = []
    if loops:
        _, start, end = max(loops)
        body = [i for i in instructions if start <= i[0] <= end]
    return (count(instructions, "FFMA"), count(instructions, "LDS.128"), count(instructions, "LDG.E.128"),
            len(body), count(body, "FFMA"))


def find(table, pattern):
    names = [n for n in table if re.search(pattern, n)]
    if len(names) != 1:
        raise LookupError("expected one kernel matching %s in the binary, found %d" % (pattern, len(names)))
    return names[0]


def build_facts(cuobjdump, nvdisasm, binary, old_table):
    """The table's lines and the prose figures, from the binary. Without nvdisasm the SASS
    columns are copied from ``old_table`` (the README's), so that only the rest is compared."""
    res = resources(cuobjdump, binary)
    code = sass(cuobjdump, nvdisasm, binary) if nvdisasm else None
    old_rows = {line.split(" | ")[0]: line.split(" | ")[3:] for line in old_table.splitlines()}
    lines = ["| step (fast path / checked path) | registers | local memory | FFMA / LDS.128 / LDG.E.128 in the kernel | main loop: instructions (FFMA) |",
             "| --- | --- | --- | --- | --- |"]
    figures = {}
    for label, fast, checked in KERNELS:
        names = [find(res, fast)] + ([find(res, checked)] if checked else [])
        regs = " / ".join(str(res[n][0]) for n in names)
        local = " / ".join("%d B" % res[n][1] for n in names)
        if code:
            ffma, lds, ldg, loop, loop_ffma = counts(code[names[0]])
            lines.append("| %s | %s | %s | %d / %d / %d | %d (%d) |" % (label, regs, local, ffma, lds, ldg, loop, loop_ffma))
        else:
            lines.append(" | ".join(["| " + label, regs, local] + old_rows.get("| " + label, ["? | ? |"])))
        step = label.split()[0]
        figures[(step, "registers")] = str(res[names[0]][0])
        if checked:
            figures[(step, "registers_checked")] = str(res[names[1]][0])
    return "\n".join(lines) + "\n", figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    parser.add_argument("--cuobjdump", help="default: cuobjdump on PATH")
    parser.add_argument("--nvdisasm", help="default: nvdisasm beside cuobjdump, then on PATH")
    parser.add_argument("--readme", type=Path, help="the page with the table (default: the first of %s that has one)"
                        % ", ".join(str(p.relative_to(p.parents[1])) for p in PAGES))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--update", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args()

    cuobjdump = tool(args.cuobjdump, "cuobjdump")
    if not cuobjdump:
        given = " (%s is not a file)" % args.cuobjdump if args.cuobjdump else ""
        print("sass_table: skipped: no cuobjdump%s: the CUDA toolkit's bin folder, or "
              "python3 -m pip install nvidia-cuda-cuobjdump, then re-run cmake" % given)
        return SKIPPED
    nvdisasm = tool(args.nvdisasm, "nvdisasm", cuobjdump)
    if args.readme is None:
        args.readme = next((p for p in PAGES if p.is_file() and TABLE_OPEN in p.read_text(encoding="utf-8")), PAGES[0])
    text = args.readme.read_text(encoding="utf-8")
    marker = table_marker(text)
    if not marker:
        print("sass_table: %s has no <!-- SASS-TABLE: nvcc X.Y, sm_NN --> marker" % args.readme)
        return 1
    if not nvdisasm:
        if args.update:
            print("sass_table: cannot write the SASS counts without nvdisasm (pip install nvidia-cuda-nvdisasm)")
            return 1
        print("sass_table: no nvdisasm: checking registers and local memory only, not the SASS counts "
              "(python3 -m pip install nvidia-cuda-nvdisasm, then re-run cmake)")
    release = nvcc_release(args.nvcc)
    table_start, table_end, table_release = marker
    if not args.update and release != table_release:
        print("sass_table: skipped: the README's table is from nvcc %s, this build from nvcc %s "
              "(other releases allocate registers differently)" % (table_release, release))
        return SKIPPED
    listing = subprocess.run([cuobjdump, "--list-elf", args.binary], capture_output=True, text=True)
    if listing.returncode != 0:
        said = (listing.stderr or listing.stdout).strip().splitlines()
        print("sass_table: skipped: %s cannot read %s (an older cuobjdump than the nvcc %s that built it?): %s"
              % (cuobjdump, args.binary, release, said[-1] if said else "exit %d" % listing.returncode))
        return SKIPPED
    if "." + ARCH + "." not in listing.stdout:
        print("sass_table: skipped: %s holds no %s code (build with CMAKE_CUDA_ARCHITECTURES including 90)"
              % (args.binary, ARCH))
        return SKIPPED

    table, figures = build_facts(cuobjdump, nvdisasm, args.binary, text[table_start:table_end])
    inline = inline_figures(text)
    unknown = [":".join(key) for _, _, key in inline if key not in figures]
    if unknown:
        print("sass_table: the README names counts the table does not have: %s" % ", ".join(unknown))
        return 1
    # Replace from the end, so that earlier positions stay valid.
    header = text.rfind(TABLE_OPEN, 0, table_start)
    pieces = [(header, table_start, "%s%s, %s -->\n" % (TABLE_OPEN, release, ARCH)), (table_start, table_end, table)]
    pieces += [(start, end, figures[key]) for start, end, key in inline]
    new = text
    for start, end, value in sorted(pieces, reverse=True):
        new = new[:start] + value + new[end:]
    if args.update:
        if new != text:
            args.readme.write_text(new, encoding="utf-8")
        print("sass_table: %s %s" % ("updated" if new != text else "already up to date:", args.readme))
        return 0
    if new != text:
        print("sass_table: the README's table of compiled kernels disagrees with %s (nvcc %s, %s). "
              "Rewrite it with: python3 07_optimization/sass_table.py %s --update" % (args.binary, release, ARCH, args.binary))
        for old_line, new_line in zip(text.splitlines(), new.splitlines()):
            if old_line != new_line:
                print("  README: %s\n  build:  %s" % (old_line, new_line))
        return 1
    print("sass_table: the README agrees with %s (nvcc %s, %s, %d kernels)" % (args.binary, release, ARCH, len(KERNELS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
