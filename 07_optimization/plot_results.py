#!/usr/bin/env python3
"""Draws each step's percentage of its limit from chapter 07's benchmark output.

Reads the runners' output (docs/results/07_*.md as scripts/gpu-check.sh writes them, or the raw
program output) and draws one horizontal bar chart per Markdown table: one bar per row (step),
its length the table's first column whose header starts with "%" (% of copy, % of CUB,
% of cuBLAS). The chart's title is the heading printed just above the table; a line
"Goal: >= N% ..." below it draws a dashed goal line. Rows that are the limit itself (the copy,
CUB, cuBLAS) are grey. Tables without a "%" column (07_sgemm's
list of step 8's tile configurations) are skipped; each configuration (8a, 8b, ...) is a bar of
the main table.

Usage: python3 07_optimization/plot_results.py docs/results/07_elementwise.md docs/results/07_reduction.md \\
           docs/results/07_sgemm.md docs/results/07_fusion.md -o 07_optimization/results.svg
"""
import argparse
import pathlib
import re
import sys


def cells(line):
    """The cells of one Markdown table row, stripped."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def is_separator(row):
    return all(re.fullmatch(r":?-+:?", c) for c in row if c)


def parse(text):
    """Every table in \\p text as a dict: title, label (the % column's header), steps, values, goal."""
    found = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            i += 1
        rows = [cells(l) for l in lines[start:i]]
        if len(rows) < 3 or not is_separator(rows[1]):
            continue
        header, body = rows[0], rows[2:]
        column = next((c for c, h in enumerate(header) if h.startswith("%")), None)
        if column is None:
            continue
        steps, values = [], []
        for row in body:
            match = re.search(r"-?\d+(?:\.\d+)?", row[column]) if column < len(row) else None
            if match:
                steps.append(row[0])
                values.append(float(match.group()))
        title = next((l.lstrip("#").strip() for l in reversed(lines[:start]) if l.startswith("#")), "")
        goal = None
        for line in lines[i:i + 6]:
            m = re.search(r"Goal: >= (\d+(?:\.\d+)?)%", line)
            if m:
                goal = float(m.group(1))
                break
        found.append({"title": title, "label": header[column], "steps": steps, "values": values, "goal": goal})
    return found


def is_limit(step):
    """True for the rows that are the limit rather than a step: the copy, CUB, cuBLAS."""
    return step.startswith(("cudaMemcpy", "CUB", "cuBLAS"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=pathlib.Path, help="benchmark output files")
    parser.add_argument("-o", "--output", type=pathlib.Path, default=pathlib.Path("07_optimization/results.svg"),
                        help="image to write (.svg or .png)")
    args = parser.parse_args()

    tables = []
    for path in args.files:
        if not path.exists():
            sys.exit(f"plot_results.py: {path} does not exist (run scripts/gpu-check.sh first)")
        found = parse(path.read_text())
        if not found:
            sys.exit(f"plot_results.py: no table with a '%' column in {path}")
        tables += found

    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_results.py needs matplotlib: pip install matplotlib")
    # A redraw from the same tables gives the same file: text stays text, no date, fixed ids.
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "07_optimization"})

    heights = [0.4 * len(t["steps"]) + 1.0 for t in tables]
    fig, axes = plt.subplots(len(tables), 1, figsize=(9, sum(heights)), gridspec_kw={"height_ratios": heights},
                             squeeze=False)
    for ax, t in zip(axes[:, 0], tables):
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
    fig.tight_layout()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, metadata={"Date": None} if args.output.suffix == ".svg" else None)
    print(f"wrote {args.output} ({len(tables)} charts)")


if __name__ == "__main__":
    main()
