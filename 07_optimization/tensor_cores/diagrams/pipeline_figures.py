#!/usr/bin/env python3
"""Draws the two figures of the Hopper steps as SVG, beside this script:

  pipeline_tma_mbarrier.svg  steps 5-7: the producer thread, the copy engine and two consumer
                             warpgroups around a ring of 4 shared-memory stages, on a time line
                             computed from a simple model (a load takes 3 units, a stage's
                             wgmmas 2), with the "full" and "empty" mbarrier phases;
  tile_order_persistent.svg  step 6: which tiles of C the first two waves of 132 persistent
                             blocks compute at 8192^3 in row order and in grouped_tile()'s
                             orders (00_common.cuh), 8 and 16 tile rows at a time, and what the
                             first wave reads.

  pipeline_figures.py           writes both
  pipeline_figures.py --check   exits 1 if a committed SVG differs from what it would write
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "diagrams"))  # chapter 07's svg.py
from svg import Svg, redraw_or_check  # noqa: E402

STAGE_COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1"]


# --- The pipeline ------------------------------------------------------------------------------

def schedule(k_tiles=9, stages=4, load=3.0, mma=2.0, issue=0.5):
    """Times (in model units) of each k-tile's load issue, arrival, wgmmas and release."""
    issued, landed, start, end, released = [], [], [], [], []
    for t in range(k_tiles):
        ready = 0.0 if t < stages else released[t - stages]  # empty[s] from the previous round
        issued.append(max(ready, issued[-1] + issue if issued else 0.0))
        landed.append(issued[t] + load)  # full[s] completes
        start.append(max(landed[t], end[t - 1] if t else 0.0))
        end.append(start[t] + mma)
        if t:  # wgmma_wait<1> after tile t's wgmmas are issued lets tile t-1's stage go
            released.append(max(end[t - 1], start[t]))
    released.append(end[-1])
    return issued, landed, start, end, released


def pipeline_svg():
    issued, landed, start, end, released = schedule()
    unit, x0 = 40.0, 250.0
    lanes = [("producer: 1 thread", "waits empty[s]; full[s] expects bytes; 2 TMA loads"),
             ("copy engine (TMA)", "writes A, B boxes into stage s; completes full[s]"),
             ("consumer warpgroup 1", "waits full[s]; 4 wgmmas, rows 0-63; releases s-1"),
             ("consumer warpgroup 2", "the same on rows 64-127 of the tile")]
    lane_y = [80 + 58 * i for i in range(len(lanes))]
    width = int(x0 + unit * (end[-1] + 1.5)) + 20
    height = lane_y[-1] + 150
    fig = Svg(width, height, "Steps 5-7: the producer, the copy engine and two consumer warpgroups around 4 stages")
    fig.text(12, 24, "Steps 5-7: a ring of 4 shared-memory stages between one loading thread and "
             "two multiplying warpgroups", 14, weight="bold")
    fig.text(12, 42, "A model, not a measurement: a load takes 3 time units, a stage's wgmmas 2.", 10, fill="#555")
    for (name, what), y in zip(lanes, lane_y):
        fig.text(12, y + 16, name, 12, weight="bold")
        fig.text(12, y + 31, what, 9, fill="#555")
        fig.line(x0, y + 36, width - 10, y + 36, stroke="#ddd")
    for t in range(len(issued)):
        s = t % 4
        colour = STAGE_COLOURS[s]
        x = lambda time: x0 + unit * time
        fig.rect(x(issued[t]), lane_y[0] + 4, unit * 0.25, 28, colour, stroke="none")
        row = lane_y[1] + 2 + 16 * (t % 2)  # two sub-rows: consecutive loads overlap in time
        fig.rect(x(issued[t]), row, unit * (landed[t] - issued[t]) - 1, 14, colour, opacity=0.45, stroke="none")
        fig.text(x(issued[t]) + 3, row + 11, f"k{t}", 9)
        for lane in (2, 3):
            fig.rect(x(start[t]), lane_y[lane] + 4, unit * (end[t] - start[t]) - 2, 28, colour, stroke="none")
            fig.text(x(start[t]) + 4, lane_y[lane] + 22, f"k{t}", 10, fill="white")
        # full[s]: the copy engine's last byte lets the consumers in.
        fig.line(x(landed[t]), lane_y[1] + 32, x(landed[t]), lane_y[2] + 4, dash="3,2", arrow=True, stroke="#555")
        if t + 4 < len(issued):  # empty[s]: both consumers' release lets the producer refill s
            fig.line(x(released[t]), lane_y[3] + 34, x(issued[t + 4]) + 3, lane_y[0] + 34,
                     stroke=colour, dash="2,3", arrow=True)
    legend_y = lane_y[-1] + 62
    fig.text(12, legend_y, "stage colours:", 11)
    for s, colour in enumerate(STAGE_COLOURS):
        fig.rect(110 + 70 * s, legend_y - 11, 14, 14, colour, stroke="none")
        fig.text(128 + 70 * s, legend_y, f"stage {s}", 11)
    fig.text(12, legend_y + 22, "dashed grey: full[s] completes (phase parity p), the consumers' "
             "wait on (s, p) returns.  dashed colour: both consumers arrived on empty[s], the "
             "producer's wait on (s, p ^ 1) returns.", 10)
    fig.text(12, legend_y + 40, "The producer runs up to 4 stages ahead; the consumers release "
             "stage s-1 once wgmma_wait<1> says its wgmmas are done, while stage s's still run.", 10)
    fig.text(12, legend_y + 58, "PipelineState {stage, phase}: stage counts 0..3, and phase flips "
             "each time stage wraps to 0 (k0-k3 wait on parity 0, k4-k7 on parity 1).", 10)
    return fig


# --- The tile order ------------------------------------------------------------------------------

def row_order(i, tiles_m, tiles_n):
    return i // tiles_n, i % tiles_n


def grouped_order(i, tiles_m, tiles_n, group):  # grouped_tile<group>() in 00_common.cuh
    per_group = group * tiles_n
    first_m = i // per_group * group
    rows = min(tiles_m - first_m, group)
    return first_m + i % per_group % rows, i % per_group // rows


def tile_order_svg(M=8192, N=8192, K=8192, BM=128, BN=256, blocks=132, shown_rows=16):
    tiles_m, tiles_n = M // BM, N // BN
    cell, gap = 10.0, 60.0
    panel_w, panel_h = tiles_n * cell, shown_rows * cell
    x_panels = [40.0 + i * (panel_w + gap) for i in range(3)]
    y0 = 120.0
    legend_y = y0 + panel_h + 64
    fig = Svg(int(x_panels[2] + panel_w + 30), int(legend_y + 20), "Step 6: the tile order of persistent blocks")
    fig.text(12, 24, f"Step 6: the first two waves of 132 persistent blocks, {M} x {N} x {K}", 14, weight="bold")
    fig.text(12, 42, f"{BM} x {BN} tiles, {tiles_m} x {tiles_n} of them (the top {shown_rows} tile rows "
             "shown). Each wave reads, along all of K,", 11)
    fig.text(12, 57, "the rows of A and of B under its tiles: fewer distinct rows, less to fetch from "
             "DRAM (L2 keeps what the wave shares).", 11)
    wave_colours = ["#e15759", "#f1a340"]
    panels = ((row_order, "row by row", x_panels[0]),
              (lambda i, m, n: grouped_order(i, m, n, 8), "8 tile rows at a time (steps 2-5)", x_panels[1]),
              (lambda i, m, n: grouped_order(i, m, n, 16), "16 tile rows at a time (steps 6-7)", x_panels[2]))
    for order, name, x in panels:
        fig.text(x - 12, y0 - 24, name, 12, weight="bold")
        fig.rect(x, y0, panel_w, panel_h, "#f4f4f4", stroke="#999")
        rows_read, cols_read = set(), set()
        for i in range(2 * blocks):
            tm, tn = order(i, tiles_m, tiles_n)
            if i < blocks:
                rows_read.add(tm)
                cols_read.add(tn)
            fig.rect(x + tn * cell + 0.5, y0 + tm * cell + 0.5, cell - 1, cell - 1, wave_colours[i // blocks], stroke="none")
        for tm in sorted(rows_read):  # A's tile rows that wave 0 reads, along the left edge
            fig.rect(x - 12, y0 + tm * cell, 8, cell - 1, "#4e79a7", stroke="none")
        for tn in sorted(cols_read):  # B's tile rows (C's tile columns), along the top
            fig.rect(x + tn * cell, y0 - 12, cell - 1, 8, "#59a14f", stroke="none")
        mb = (len(rows_read) * BM + len(cols_read) * BN) * K * 2 / 1e6
        fig.text(x, y0 + panel_h + 22, f"wave 0 reads {len(rows_read)} tile rows of A (blue)", 11)
        fig.text(x, y0 + panel_h + 38, f"and {len(cols_read)} of B (green): {mb:.0f} MB", 11, weight="bold")
    for i, (colour, what) in enumerate(zip(wave_colours, ["wave 0: tiles 0-131", "wave 1: tiles 132-263"])):
        fig.rect(12 + 190 * i, legend_y - 11, 14, 14, colour, stroke="none")
        fig.text(30 + 190 * i, legend_y, what, 11)
    return fig


FIGURES = {"pipeline_tma_mbarrier.svg": pipeline_svg, "tile_order_persistent.svg": tile_order_svg}


if __name__ == "__main__":
    sys.exit(redraw_or_check(FIGURES, HERE, "python3 07_optimization/tensor_cores/diagrams/pipeline_figures.py"))
