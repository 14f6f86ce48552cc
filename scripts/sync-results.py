#!/usr/bin/env python3
"""Copies real GPU output from docs/results/ into the course's Markdown pages.

A page marks where measured output belongs, and this script fills it in from the
latest GPU check (scripts/gpu-check.sh), so no number in a README is typed by hand:

    <!-- GPU-OUTPUT: 03_add_progression -->            the whole output of that benchmark
    <!-- GPU-TABLE: 03_add_progression 2 -->           its 2nd Markdown table (default: 1st)
    <!-- GPU-EXCERPT: 03_add_progression "Part 2" 12 -->  12 lines from the first line that
                                                         contains "Part 2", and a link to the rest

Each of these is followed by the generated block and a closing `<!-- /GPU-OUTPUT -->`.
A number in the prose is filled in place from the SUMMARY line of a benchmark's output:

    <!--fig:07_elementwise:best_pct_of_copy-->97.3<!--/fig-->%   a key of its "figures"
    <!--fig:07_elementwise:goal:1-->97.3<!--/fig-->%             the value of its 1st goal

Every block and figure is rendered from the recorded runs' data (docs/results/data/, read by
scripts/results.py), never from a page. Running the script again replaces every generated part,
so it is safe after every GPU check. Without file arguments it first renders docs/results/'s own
pages from that data, and last redraws the figures drawn from it (FIGURES below).

Usage: scripts/sync-results.py [--check] [files...]   (default: every chapter README.md, a part's README.md one folder down, docs/*.md)
--check: change nothing; exit 1 if a page (docs/results/'s included) is out of date or names a
result that does not exist.
"""
import argparse
import os
import pathlib
import shlex
import sys

import results

ROOT = results.ROOT
RESULTS = results.RESULTS
CLOSE = "<!-- /GPU-OUTPUT -->\n"


def figure(name, key):
    """The recorded value of figure <key> (or goal:<n>) of benchmark <name>, as prose shows it."""
    found = results.summary(results.load(name))
    if key.startswith("goal:"):
        goals = found.get("goals", [])
        position = int(key[len("goal:"):])
        if not 1 <= position <= len(goals):
            raise LookupError(f"{name} has {len(goals)} goal(s), not {position}")
        value = goals[position - 1].get("value")
    else:
        if key not in found.get("figures", {}):
            raise LookupError(f"{name}'s SUMMARY line has no figure '{key}'")
        value = found["figures"][key]
    if value is None:
        raise LookupError(f"{name}'s figure '{key}' was not measured (null)")
    return f"{value:g}" if isinstance(value, float) else str(value)


def render(kind, name, args, page):
    """The block a marker stands for: rendered from the recorded run's data."""
    found = results.load(name)
    link = os.path.relpath(RESULTS / f"{name}.md", page.parent)
    source = (f"*Measured by `scripts/gpu-check.sh`: {results.run_line(found['run'])} "
              f"Source: [docs/results/{name}.md]({link})*")
    lines = results.lesson_lines(found["output"])
    if kind == "OUTPUT":
        body = "```text\n" + "\n".join(lines) + "\n```"
    elif kind == "EXCERPT":
        start, count = args
        first = next((i for i, line in enumerate(lines) if start in line), None)
        if first is None:
            raise LookupError(f"{name}'s output has no line containing {start!r}")
        body = "```text\n" + "\n".join(lines[first:first + int(count)]) + "\n```"
        source = source[:-1] + f" (an excerpt; [the whole output]({link}))*"
    else:
        found_tables = results.tables("\n".join(lines))
        position = int(args[0]) if args else 1
        if position > len(found_tables):
            raise LookupError(f"{name} has {len(found_tables)} table(s), not {position}")
        body = "\n".join(found_tables[position - 1]["lines"])
    return f"{body}\n\n{source}\n"


def fill_markers(text, page):
    """Replaces what follows each <!-- GPU-KIND: name args --> line, up to its closing line."""
    out, pos = [], 0
    while (at := text.find("<!-- GPU-", pos)) != -1:
        if at > 0 and text[at - 1] != "\n":  # a marker stands on a line of its own
            out.append(text[pos:at + 1])
            pos = at + 1
            continue
        head_end = text.find(" -->\n", at)
        if head_end == -1:
            break
        kind, _, spec = text[at + len("<!-- GPU-"):head_end].partition(": ")
        if kind not in ("OUTPUT", "TABLE", "EXCERPT"):
            out.append(text[pos:head_end])
            pos = head_end
            continue
        name, *args = shlex.split(spec)
        after = head_end + len(" -->\n")
        close = text.find(CLOSE, after)
        nxt = text.find("<!-- GPU-", after)
        if close != -1 and (nxt == -1 or close < nxt):
            after = close + len(CLOSE)  # the block generated last time, replaced
        out.append(text[pos:head_end + len(" -->\n")] + render(kind, name, args, page) + CLOSE)
        pos = after
    return "".join(out) + text[pos:]


def fill_figures(text):
    """Fills each <!--fig:name:key-->value<!--/fig--> with the recorded value."""
    out, pos = [], 0
    while (at := text.find("<!--fig:", pos)) != -1:
        head_end = text.find("-->", at)
        close = text.find("<!--/fig-->", head_end)
        name, _, key = text[at + len("<!--fig:"):head_end].partition(":")
        out.append(text[pos:head_end + 3] + figure(name, key))
        pos = close
    return "".join(out) + text[pos:]


def shown(path):
    """A path relative to the repository root where possible, for messages."""
    return os.path.relpath(path.resolve(), ROOT)


def sync(path):
    text = path.read_text()
    return text, fill_figures(fill_markers(text, path))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    files = args.files or sorted(ROOT.glob("[0-9][0-9]_*/README.md")) + sorted(
        ROOT.glob("[0-9][0-9]_*/*/README.md")) + sorted((ROOT / "docs").glob("*.md")) + [
        ROOT / "README.md"]
    # The record's own pages first: they are renderings of docs/results/data/.
    stale = [] if args.files else results.render(check=args.check)
    for path in files:
        if not path.exists():
            continue
        try:
            old, new = sync(path)
        except (OSError, LookupError) as err:
            print(f"{shown(path)}: {err}", file=sys.stderr)
            stale.append(path)
            continue
        if old != new:
            stale.append(path)
            if not args.check:
                path.write_text(new)
                print(f"updated {shown(path)}")
    if args.check and stale:
        print("out of date: " + ", ".join(str(shown(p)) for p in stale))
        return 1
    if not args.check and not args.files:
        redraw_figures()
    return 0


# Scripts (with their arguments) that draw a figure from the record. Their own ctests (label
# "record") check that each figure is what its script draws from the record now.
FIGURES = [["07_optimization/plot_results.py"], ["05_nsys_profiling/nsys_timeline.py", "draw"],
           ["07_optimization/tensor_cores/diagrams/energy_figure.py"], ["08_multi_gpu/figures/draw_figures.py"],
           ["05_nsys_profiling/streams/draw_timeline.py"]]


def redraw_figures():
    import subprocess

    for script, *arguments in FIGURES:
        subprocess.run([sys.executable, str(ROOT / script), *arguments], check=True)


if __name__ == "__main__":
    sys.exit(main())
