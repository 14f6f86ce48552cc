#!/usr/bin/env python3
"""Draws each step's percentage of its limit from chapter 07's benchmark output.

Reads the runners' recorded runs (docs/results/data/, through scripts/results.py), or raw output
files, and draws one horizontal bar chart per table the program printed: one bar per row (step),
its length the table's first column whose header starts with "%" (% of copy, % of CUB,
% of cuBLAS). The chart's title is the heading printed just above the table; the program's goal
(from its SUMMARY line) draws a dashed goal line. Rows that are the limit itself (the copy,
CUB, cuBLAS) are grey. Tables without a "%" column (07_sgemm's
list of step 8's tile configurations) are skipped; each configuration (8a, 8b, ...) is a bar of
the main table.

Above the bar charts, a roofline: FLOP/s against arithmetic intensity (FLOP per byte moved to or
from global memory), its roofs the copy bandwidth and cuBLAS's fp32 rate from the same run, with
the best step of the elementwise add, the reduction and some SGEMM steps placed on it (their
intensities are counted from the code; see the README). Under the charts, the line that names
the run the files come from (device, date, commit), so the figure cannot pass for another run:
--check compares that line with the files, without drawing (no matplotlib needed).

Usage: python3 07_optimization/plot_results.py            draws 07_optimization/results.svg from the record
       python3 07_optimization/plot_results.py --check    exit 1 unless results.svg names the recorded run
       python3 07_optimization/plot_results.py <files...> -o <image>   other runs' raw output, another image
"""
import html
import argparse
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "scripts"))
import results  # noqa: E402  (the record's data: docs/results/data/)

RECORD = ["07_elementwise", "07_reduction", "07_sgemm", "07_fusion"]


def charts(output, summaries):
    """One chart per table the program printed with a "%" column: title, label (that column's
    header), steps, values, goal (the program's first goal in %, read from its SUMMARY, drawn on
    its first such table)."""
    goals = [g["at_least"] for s in summaries for g in s.get("goals", []) if g.get("unit") == "%"]
    found = []
    for table in results.tables(output):
        column = next((c for c, h in enumerate(table["header"]) if h.startswith("%")), None)
        if column is None:
            continue
        steps, values = [], []
        for row in table["rows"]:
            value = results.number(row[column]) if column < len(row) else None
            if value is not None:
                steps.append(row[0])
                values.append(value)
        found.append({"title": table["title"], "label": table["header"][column], "steps": steps,
                      "values": values, "goal": goals.pop(0) if goals and not found else None})
    return found


# Points on the roofline: (run, step name's start, column, FLOP per byte, label).
# Intensities are counted from the code: the add does 1 FLOP per 12 bytes (x, y read, z
# written); the reduction 1 add per 4-byte element; SGEMM 2 FLOP per multiply-add, with the
# bytes each block loads from global memory: naive, 8 bytes per multiply-add; a 32 x 32 tile,
# 32x fewer; a 128 x 128 tile, BM * BN / (2 * (BM + BN)) = 32 FLOP per byte.
ROOFLINE_POINTS = [
    ("07_elementwise", "3 ", "GB/s", 1 / 12, "add, float4"),
    ("07_reduction", "7 ", "GB/s", 1 / 4, "reduction, single pass"),
    ("07_sgemm", "1 ", "TFLOP/s", 0.25, "SGEMM 1, naive"),
    ("07_sgemm", "3 ", "TFLOP/s", 8, "SGEMM 3, 32 x 32 tiles"),
    ("07_sgemm", "5 ", "TFLOP/s", 32, "SGEMM 5, 128 x 128 tiles"),
    ("07_sgemm", "8d", "TFLOP/s", 32, "SGEMM 8d"),
]


def column_value(output, step_start, column):
    """The number in \\p column of the first table row whose step starts with \\p step_start."""
    for table in results.tables(output):
        if column in table["header"]:
            for row in table["rows"]:
                if row[0].startswith(step_start):
                    return results.number(row[table["header"].index(column)])
    return None


def roofline(outputs):
    """The roofs (GB/s of the copy, TFLOP/s of cuBLAS) and the points, from the runners' output."""
    copy = column_value(outputs.get("07_elementwise", ""), "cudaMemcpy", "GB/s")
    peak = column_value(outputs.get("07_sgemm", ""), "cuBLAS, pedantic", "TFLOP/s")
    points = []
    for name, start, column, intensity, label in ROOFLINE_POINTS:
        value = column_value(outputs.get(name, ""), start, column)
        if value is not None:
            gflops = value * intensity if column == "GB/s" else value * 1000
            points.append((intensity, gflops, label))
    return copy, peak, points


def is_limit(step):
    """True for the rows that are the limit rather than a step: the copy, CUB, cuBLAS."""
    return step.startswith(("cudaMemcpy", "CUB", "cuBLAS"))


def source_line(runs):
    """The text under the charts: which files, which run."""
    return "Source: docs/results/07_*.md, " + " / ".join(sorted(runs))


def load(args):
    """{name: (output, summaries, the line naming its run)} of the record's runs or of raw output files."""
    if not args.files:
        found = {name: results.load(name) for name in RECORD}
        return {name: (f["output"], f["summaries"], results.run_line(f["run"])) for name, f in found.items()}
    loaded = {}
    for path in args.files:
        if not path.exists():
            sys.exit(f"plot_results.py: {path} does not exist")
        output = path.read_text()
        loaded[path.stem] = (output, results.summaries(output), f"{path.name}: no line naming its run")
    return loaded


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=pathlib.Path,
                        help="raw output files of the runners (default: chapter 07's recorded runs)")
    parser.add_argument("-o", "--output", type=pathlib.Path, default=HERE / "results.svg",
                        help="image to write (.svg or .png), or with --check the SVG to check")
    parser.add_argument("--check", action="store_true",
                        help="draw nothing; exit 1 unless the SVG names the run the files come from")
    args = parser.parse_args()

    try:
        loaded = load(args)
    except LookupError as err:
        sys.exit(f"plot_results.py: {err} (run scripts/gpu-check.sh first)")
    tables, runs = [], set()
    for name, (output, summaries, run) in loaded.items():
        found = charts(output, summaries)
        if not found:
            sys.exit(f"plot_results.py: no table with a '%' column in {name}")
        tables += found
        runs.add(run)
    source = source_line(runs)

    if args.check:
        svg = args.output.read_text() if args.output.exists() else ""
        if html.escape(source, quote=False) not in svg:
            print(f"plot_results.py: {args.output} was not drawn from these files; it should name\n  {source}\n"
                  "Redraw it: python3 07_optimization/plot_results.py (or scripts/sync-results.py, which also "
                  "updates the READMEs)")
            return 1
        print(f"plot_results.py: {args.output} names the run of its files")
        return 0

    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_results.py needs matplotlib: pip install matplotlib")
    # A redraw from the same tables gives the same file: text stays text, no date, fixed ids.
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "07_optimization"})

    copy_gbs, peak_tflops, points = roofline({name: out for name, (out, _, _) in loaded.items()})
    has_roofline = copy_gbs is not None and peak_tflops is not None
    heights = ([4.5] if has_roofline else []) + [0.4 * len(t["steps"]) + 1.0 for t in tables]
    fig, axes = plt.subplots(len(heights), 1, figsize=(9, sum(heights) + 0.4),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    axes = list(axes[:, 0])
    if has_roofline:
        draw_roofline(axes.pop(0), copy_gbs, peak_tflops * 1000, points)
    for ax, t in zip(axes, tables):
        y = range(len(t["steps"]))
        # The limit itself (the copy, CUB, cuBLAS) in grey, the steps measured against it in blue.
        colors = ["#8C8C8C" if is_limit(step) else "#4C72B0" for step in t["steps"]]
        bars = ax.barh(y, t["values"], color=colors)
        ax.bar_label(bars, labels=[f"{v:.1f}%" for v in t["values"]], padding=3, fontsize=8)
        ax.set_yticks(list(y), t["steps"], fontsize=8)
        ax.invert_yaxis()  # first step on top, as in the table
        ax.set_xlim(0, max(110, max(t["values"], default=0) * 1.15))
        ax.set_title(t["title"], fontsize=10, loc="left")
        label = t["label"]
        if t["goal"] is not None:  # named in the axis label: a legend would cover the longest bars
            ax.axvline(t["goal"], color="#C44E52", linestyle="--", linewidth=1)
            label += f"  (dashed line: the goal, {t['goal']:g}%)"
        ax.set_xlabel(label, fontsize=9)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.text(0.01, 0.004, source, fontsize=7, color="#555555")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, metadata={"Date": None} if args.output.suffix == ".svg" else None)
    print(f"wrote {args.output} ({len(axes) + has_roofline} charts)")
    return 0


def draw_roofline(ax, copy_gbs, peak_gflops, points):
    """Log-log roofline: min(peak, intensity x bandwidth), and the measured points."""
    ridge = peak_gflops / copy_gbs
    intensities = [0.05, ridge, 100.0]
    ax.loglog(intensities, [min(peak_gflops, i * copy_gbs) for i in intensities], color="#8C8C8C")
    ax.annotate(f"copy bandwidth, {copy_gbs:.0f} GB/s", (0.06, 0.06 * copy_gbs * 1.25), fontsize=8,
                rotation=33, color="#555555")
    ax.annotate(f"cuBLAS fp32, {peak_gflops / 1000:.1f} TFLOP/s", (ridge / 8, peak_gflops * 1.15), fontsize=8,
                color="#555555")
    ax.axvline(ridge, color="#C44E52", linestyle=":", linewidth=1)
    ax.annotate(f"ridge: {ridge:.1f} FLOP/byte", (ridge * 1.05, 60), fontsize=8, color="#C44E52")
    for intensity, gflops, label in points:
        ax.plot(intensity, gflops, "o", color="#4C72B0")
        right_of_ridge = intensity > ridge  # label on the left there, inside the axes
        ax.annotate(label, (intensity, gflops), textcoords="offset points", xytext=(-6 if right_of_ridge else 6, -10),
                    ha="right" if right_of_ridge else "left", fontsize=8)
    ax.set_xlim(0.05, 100)
    ax.set_ylim(50, peak_gflops * 2)
    ax.set_title("Roofline: FLOP/s against arithmetic intensity, both roofs measured in the same run",
                 fontsize=10, loc="left")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of global memory traffic)", fontsize=9)
    ax.set_ylabel("GFLOP/s", fontsize=9)


if __name__ == "__main__":
    sys.exit(main())
