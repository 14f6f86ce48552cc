#!/usr/bin/env python3
"""Draws the figures of tensor-core steps 2 and 3 as SVG, from the rules the kernels follow.

  mma_fragments.svg     which lane holds which element of A, B and C in mma.sync.m16n8k16
  ldmatrix_swizzle.svg  the 16-byte rows one ldmatrix matrix reads, plain and XOR-swizzled
  cp_async_pipeline.svg the 4-stage cp.async ring: when each stage is filled and when it is read

The layouts are computed here with the same formulas as 03_mma_ldmatrix.cuh (lane / 4, lane % 4,
chunk ^ (row % 8)) and the PTX manual's fragment tables, not drawn by hand.

Usage: python3 mma_ldmatrix_cp_async.py           writes the SVGs beside this script
       python3 mma_ldmatrix_cp_async.py --check   exit 1 if a committed SVG differs from what it draws
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "diagrams"))  # chapter 07's svg.py
from svg import Svg, redraw_or_check  # noqa: E402

# One colour per register (fragment element pair), readable on white and in grey print.
REG_COLOURS = ["#8ecae6", "#ffb703", "#90be6d", "#f4a3c0"]
THIN = {"stroke": "#444", "width": 0.6}  # cell edges, lighter than the 8 x 8 block lines


# --- mma.sync.m16n8k16 fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16", 16-bit types) ----
# group = lane / 4 (the row group), pair = lane % 4 (the column pair).
def a_owner(row, col):
    """(lane, register) of A[row][col], A 16 x 16 row-major: registers a0..a3 hold element pairs."""
    lane = (row % 8) * 4 + (col % 8) // 2
    register = (row // 8) + 2 * (col // 8)  # a0: rows 0-7, k 0-7; a1: rows 8-15; a2: k 8-15; a3: both
    return lane, register


def b_owner(k, n):
    """(lane, register) of B[k][n], B 16 x 8 (K x N), column-major: b0 holds k 0-7, b1 k 8-15."""
    return n * 4 + (k % 8) // 2, k // 8


def c_owner(row, col):
    """(lane, register pair) of C[row][col], C 16 x 8 fp32: c0,c1 row group, c2,c3 row group + 8."""
    return (row % 8) * 4 + col // 2, row // 8


def draw_grid(svg, x0, y0, rows, cols, owner, cell_w, cell_h, names, title, row_label, col_label):
    svg.text(x0 + cols * cell_w / 2, y0 - 24, title, size=12, weight="bold", anchor="middle")
    svg.text(x0 + cols * cell_w / 2, y0 - 8, col_label, size=9, fill="#555", anchor="middle")
    svg.text(x0 - 30, y0 + rows * cell_h / 2, row_label, size=9, fill="#555", anchor="middle")
    for r in range(rows):
        svg.text(x0 - 4, y0 + r * cell_h + cell_h * 0.68, str(r), size=7, anchor="end", fill="#777")
        for c in range(cols):
            lane, reg = owner(r, c)
            x, y = x0 + c * cell_w, y0 + r * cell_h
            svg.rect(x, y, cell_w, cell_h, REG_COLOURS[reg], **THIN)
            svg.text(x + cell_w / 2, y + cell_h * 0.68, f"T{lane}", size=7.5, anchor="middle")
    for c in range(cols):
        svg.text(x0 + c * cell_w + cell_w / 2, y0 + rows * cell_h + 10, str(c), size=7, fill="#777", anchor="middle")
    # A heavier line every 8 rows and columns: the 8 x 8 blocks ldmatrix delivers.
    for r in range(0, rows + 1, 8):
        svg.line(x0, y0 + r * cell_h, x0 + cols * cell_w, y0 + r * cell_h, width=1.6)
    for c in range(0, cols + 1, 8):
        svg.line(x0 + c * cell_w, y0, x0 + c * cell_w, y0 + rows * cell_h, width=1.6)
    ly = y0 + rows * cell_h + 26
    for i, name in enumerate(names):
        svg.rect(x0 + i * 62, ly, 12, 10, REG_COLOURS[i], **THIN)
        svg.text(x0 + i * 62 + 16, ly + 9, name, size=9, anchor="start")


def mma_fragments():
    cw, ch = 27, 17
    svg = Svg(1080, 450, "mma.sync.m16n8k16 fragments: which lane holds which element")
    svg.text(530, 20, "mma.sync.m16n8k16 (bf16 in, fp32 accumulators): which lane (T0..T31) holds which element",
             size=13, weight="bold", anchor="middle")
    draw_grid(svg, 60, 72, 16, 16, a_owner, cw, ch, ["a[0]", "a[1]", "a[2]", "a[3]"],
              "A: 16 x 16 (row-major), 4 registers of 2 bf16", "row m", "column k")
    draw_grid(svg, 570, 72, 16, 8, b_owner, cw, ch, ["b[0]", "b[1]"],
              "B: 16 x 8 (k x n), 2 registers of 2 bf16", "k", "column n")
    draw_grid(svg, 850, 72, 16, 8, c_owner, cw, ch, ["c[0..1]", "c[2..3]"],
              "C: 16 x 8, 4 fp32 per lane", "row m", "column n")
    notes = [
        "Each lane holds 2 neighbouring elements per register: A row lane/4 (+8), columns 2*(lane%4) and +1 (+8);",
        "B column lane/4, rows (k) 2*(lane%4) and +1 (+8); C row lane/4 (+8), columns 2*(lane%4) and +1.",
        "Each 8 x 8 block (heavy lines) is one matrix of ldmatrix: its lane i gives the address of row i.",
    ]
    for i, note in enumerate(notes):
        svg.text(60, 400 + 15 * i, note, size=10, anchor="start")
    return svg


# --- ldmatrix on 128-byte rows, plain and swizzled ------------------------------------------------
def ldmatrix_panel(svg, x0, y0, swizzle, title):
    cw, ch = 62, 24
    svg.text(x0 + 4 * cw, y0 - 40, title, size=12, weight="bold", anchor="middle")
    for p in range(8):  # physical 16-byte chunk p of a 128-byte row covers banks 4p..4p+3
        svg.text(x0 + p * cw + cw / 2, y0 - 20, f"chunk {p}", size=9, anchor="middle")
        svg.text(x0 + p * cw + cw / 2, y0 - 8, f"banks {4 * p}-{4 * p + 3}", size=8, fill="#555", anchor="middle")
    hits = [0] * 8
    for r in range(8):
        svg.text(x0 - 8, y0 + r * ch + ch * 0.65, f"row {r}", size=9, anchor="end")
        svg.text(x0 + 8 * cw + 8, y0 + r * ch + ch * 0.65, f"lane {r}", size=9, anchor="start", fill="#555")
        for c in range(8):  # logical chunk c of row r is stored at physical chunk c ^ (r % 8)
            p = c ^ (r % 8) if swizzle else c
            read = c == 0  # matrix 0 of an ldmatrix.x4 at k-step 0: chunk 0 of rows 0-7
            if read:
                hits[p] += 1
            svg.rect(x0 + p * cw, y0 + r * ch, cw, ch, "#ffb703" if read else "#f3f3f3", **THIN)
            svg.text(x0 + p * cw + cw / 2, y0 + r * ch + ch * 0.65, f"k {8 * c}-{8 * c + 7}", size=8.5, anchor="middle")
    worst = max(hits)
    verdict = (f"{worst}-way conflict: 8 rows in banks 0-3, {worst} passes" if worst > 1
               else "no conflict: 8 rows in 8 chunks = all 32 banks, 1 pass")
    svg.text(x0 + 4 * cw, y0 + 8 * ch + 18, verdict, size=10, weight="bold",
             fill="#b00020" if worst > 1 else "#1b7f3b", anchor="middle")


def ldmatrix_swizzle():
    svg = Svg(1240, 400, "ldmatrix: 8 rows of 16 bytes, plain and XOR-swizzled")
    svg.text(620, 20, "ldmatrix: lanes 0-7 give the addresses of 8 rows, 16 bytes each (one 8 x 8 matrix); "
             "highlighted: the chunk they read", size=12, weight="bold", anchor="middle")
    ldmatrix_panel(svg, 70, 90, False, "plain: chunk c of row r at chunk c")
    ldmatrix_panel(svg, 690, 90, True, "swizzled: chunk c of row r at chunk c XOR (r % 8)")
    notes = [
        "A tile row is 64 bf16 = 128 bytes = all 32 banks once. Shared memory serves 32 banks per pass: the 8 rows of one",
        "matrix collide unless their chunks sit in different banks. The XOR sends row r's chunk c to chunk c ^ r (r < 8),",
        "a different chunk for each row and for each c, so every column of logical chunks is spread the same way. Rows",
        "8-15 repeat rows 0-7 (r % 8). cp.async writes with the same formula, so no bytes are wasted on padding.",
    ]
    for i, note in enumerate(notes):
        svg.text(70, 330 + 15 * i, note, size=10, anchor="start")
    return svg


# --- the cp.async ring ----------------------------------------------------------------------------
def cp_async_pipeline(stages=4, tiles=9):
    x0, y0, step, lane_h = 120, 70, 96, 34
    svg = Svg(x0 + step * tiles + 40, y0 + lane_h * stages + 166, f"A {stages}-stage cp.async ring")
    svg.text(svg.width / 2, 22, f"A {stages}-stage cp.async ring (steps 2 and 3): stage s holds tiles s, s + {stages}, "
             f"s + {2 * stages}, ...", size=13, weight="bold", anchor="middle")
    svg.text(svg.width / 2, 40, "one column per trip t of the main loop (a 64-deep tile along K); bars are the "
             "tiles of A and B in each stage of shared memory", size=10, fill="#555", anchor="middle")
    colours = ["#8ecae6", "#ffb703", "#90be6d", "#f4a3c0", "#cdb4db", "#ffd6a5"]
    for s in range(stages):
        y = y0 + s * lane_h
        svg.text(x0 - 10, y + lane_h * 0.6, f"stage {s}", size=10, anchor="end")
        svg.line(x0, y + lane_h, x0 + step * tiles, y + lane_h, stroke="#ddd")
    # Tile t is started in the prologue (t < stages - 1) or at the top of step t - (stages - 1),
    # lands by the top of step t (cp.async.wait_group stages - 2), and is read during step t.
    for t in range(tiles):
        s = t % stages
        y = y0 + s * lane_h + 5
        start = max(0, t - (stages - 1))
        colour = colours[t % len(colours)]
        if t > start:  # tiles of the prologue land before the loop's first step
            svg.rect(x0 + start * step + 3, y, (t - start) * step - 6, lane_h - 10, colour, dash="4,3", **THIN)
            svg.text(x0 + (start + t) * step / 2, y + lane_h * 0.48, f"cp.async: tile {t}", size=9, anchor="middle")
        svg.rect(x0 + t * step + 3, y, step - 6, lane_h - 10, colour, stroke="#222", width=1.4)
        svg.text(x0 + t * step + step / 2, y + lane_h * 0.48, f"mma on tile {t}", size=9, weight="bold", anchor="middle")
    base = y0 + stages * lane_h
    for t in range(tiles + 1):
        x = x0 + t * step
        svg.line(x, y0 - 6, x, base + 6, stroke="#b00020", dash="3,3", width=0.9)
    for t in range(tiles):
        svg.text(x0 + t * step + step / 2, base + 20, f"t = {t}", size=9, fill="#555", anchor="middle")
    notes = [
        f"Each red line is the barrier between two tiles: cp.async.wait_group {stages - 2} (this thread's copies of "
        "tile t have landed), __syncthreads() (everyone's have,",
        "and everyone is done with tile t - 1); then the copies of tile t + 3 start in the stage tile t - 1 just "
        "freed, and the warps multiply tile t.",
        "(In the code the barrier comes just before the last 16-deep slice of tile t - 1's math, so that tile t's "
        "first fragments load while it runs.)",
        f"Prologue: tiles 0-{stages - 2} start before the loop. A tile's copy has {stages - 1} tiles of math to hide "
        "behind; with 2 stages (plain double buffering) it has 1.",
        "Each commit closes a group, even an empty one past the last tile, so 'all but the newest "
        f"{stages - 2} groups' always means 'up to tile t'.",
    ]
    for i, note in enumerate(notes):
        svg.text(x0 - 100, base + 50 + 16 * i, note, size=10, anchor="start")
    return svg


FIGURES = {
    "mma_fragments.svg": mma_fragments,
    "ldmatrix_swizzle.svg": ldmatrix_swizzle,
    "cp_async_pipeline.svg": cp_async_pipeline,
}


if __name__ == "__main__":
    sys.exit(redraw_or_check(FIGURES, HERE, "python3 07_optimization/tensor_cores/diagrams/mma_ldmatrix_cp_async.py"))
