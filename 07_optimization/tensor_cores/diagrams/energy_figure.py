#!/usr/bin/env python3
"""Draws energy_per_flop.svg, beside this script, from the record (docs/results/data/):

  for each of the race's four shapes, every step's energy per FLOP (pJ, the race's "Energy / FLOP"
  column: NVML's power over the row's own batches, times their time, over their FLOPs), with
  cuBLAS BF16 and the mma.sync-alone row (operands in registers: the tensor cores' own cost) as
  dashed lines; beside steps 6, 7 and cuBLAS, the bytes through L2 per FLOP that ncu counted at
  that shape (07_tensor_cores_ncu's per-shape table), where the record has it. The figure names
  the runs it was drawn from.

  energy_figure.py           writes the figure
  energy_figure.py --check   exits 1 if the committed SVG differs from what it would write
"""
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "diagrams"))  # chapter 07's svg.py
sys.path.insert(0, str(HERE.parents[2] / "scripts"))  # results.py: the record's data
import results  # noqa: E402
from svg import Svg, redraw_or_check  # noqa: E402

SCALE_PJ = 2.2  # the axis ends here; steps 1 and the fp32 rows spend far more and are marked off scale
ROWS = ["cuBLAS BF16", "1 ", "2 ", "3 ", "4 ", "5 ", "6 ", "7 "]  # how the race's step names start


def race_tables():
    """[(shape label, {row name: pJ per FLOP})] from 07_tensor_cores's recorded tables."""
    found = results.load("07_tensor_cores")
    shapes = []
    for table in results.tables(found["output"]):
        if "Energy / FLOP" not in table["header"]:
            continue
        column = table["header"].index("Energy / FLOP")
        m = re.match(r"M = (\d+), N = (\d+), K = (\d+)", table["title"])
        label = " x ".join(m.groups()) if m else table["title"]
        shapes.append((label, {row[0]: results.number(row[column]) for row in table["rows"]}))
    return shapes, results.run_line(found["run"])


def l2_bytes():
    """{(shape label, 'step 6' | 'step 7' | 'cuBLAS BF16'): L2 bytes per FLOP} from the ncu record's
    per-shape table, if it has one (older records profile 4096^3 only)."""
    try:
        found = results.load("07_tensor_cores_ncu")
    except LookupError:
        return {}, None
    table = next((t for t in results.tables(found["output"]) if "L2 bytes / FLOP" in t["header"]), None)
    if table is None:
        return {}, None
    shape, kernel, value = (table["header"].index(h) for h in ("Shape", "Kernel", "L2 bytes / FLOP"))
    return {(row[shape], row[kernel]): results.number(row[value]) for row in table["rows"]}, \
        results.run_line(found["run"])


def energy_svg():
    shapes, run = race_tables()
    l2, ncu_run = l2_bytes()
    bar_x, bar_w, row_h = 190.0, 380.0, 17.0
    panel_h = row_h * (len(ROWS) + 1) + 34
    top = 74.0
    fig = Svg(860, int(top + panel_h * len(shapes) + 56), "Energy per FLOP by step")
    fig.text(12, 24, "Energy per FLOP by step, under the same power cap (pJ; less is better)", 14, weight="bold")
    fig.text(12, 42, "Red dashes: mma.sync alone (operands in registers, no loads): the tensor cores' own cost. "
             "Grey dashes: cuBLAS BF16.", 11)
    fig.text(12, 58, "Right: bytes through L2 per FLOP (ncu, lts__t_bytes) where the record has them.", 11)
    x_of = lambda pj: bar_x + bar_w * min(pj, SCALE_PJ) / SCALE_PJ
    for i, (label, pj) in enumerate(shapes):
        y0 = top + i * panel_h
        fig.text(12, y0 + 14, label, 12, weight="bold")
        names = [next((n for n in pj if n.startswith(start)), None) for start in ROWS]
        floor = next((v for n, v in pj.items() if n.startswith("mma.sync alone")), None)
        for r, name in enumerate(names):
            y = y0 + 22 + r * row_h
            if name is None or pj[name] is None:
                continue
            value = pj[name]
            fig.text(bar_x - 8, y + 12, name[:26], 10, anchor="end")
            fig.rect(bar_x, y + 2, x_of(value) - bar_x, row_h - 4, "#8C8C8C" if r == 0 else "#4e79a7", stroke="none")
            off = value > SCALE_PJ
            fig.text(x_of(value) + 4, y + 12, f"{value:.2f} pJ" + (" (off scale)" if off else ""), 10)
            kernel = "cuBLAS BF16" if r == 0 else f"step {r}"
            if (label, kernel) in l2:
                fig.text(bar_x + bar_w + 90, y + 12, f"L2: {l2[(label, kernel)]:.4f} B/FLOP", 10)
        bottom = y0 + 22 + len(ROWS) * row_h
        cublas = pj.get(names[0]) if names[0] else None
        for value, colour in ((floor, "#e15759"), (cublas, "#555555")):
            if value is not None:
                fig.line(x_of(value), y0 + 20, x_of(value), bottom, stroke=colour, width=1.2, dash="4,3")
        if floor is not None:
            fig.text(x_of(floor), bottom + 12, f"mma.sync alone {floor:.2f}", 9, anchor="middle", fill="#e15759")
    fig.text(12, fig.height - 24, f"Race: {run}", 9, fill="#555555")
    fig.text(12, fig.height - 10, f"ncu: {ncu_run}" if ncu_run else "ncu: no per-shape bytes in this record", 9,
             fill="#555555")
    return fig


FIGURES = {"energy_per_flop.svg": energy_svg}

if __name__ == "__main__":
    sys.exit(redraw_or_check(FIGURES, HERE, "python3 07_optimization/tensor_cores/diagrams/energy_figure.py"))
