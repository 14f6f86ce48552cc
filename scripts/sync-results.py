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

Running the script again replaces every generated part, so it is safe after every GPU check.
Without file arguments it also redraws the figures drawn from the record (FIGURES below).

Usage: scripts/sync-results.py [--check] [files...]   (default: every chapter README.md, a part's README.md one folder down, docs/*.md)
--check: change nothing; exit 1 if a page is out of date or names a result that does not exist.
"""
import argparse
import json
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
MARKER = re.compile(
    r"<!-- GPU-(OUTPUT|TABLE|EXCERPT): ([\w.-]+)((?: \d+)|(?: \"[^\"\n]+\" \d+))? -->\n"
    r"(?:.*?<!-- /GPU-OUTPUT -->\n)?",
    re.S,
)
FIGURE = re.compile(r"<!--fig:([\w.-]+):((?:goal:)?[\w.-]+)-->(.*?)<!--/fig-->")


def read_result(name):
    """Returns (header lines, output text) of docs/results/<name>.md."""
    text = (RESULTS / f"{name}.md").read_text()
    header, _, rest = text.partition("```text\n")
    output, _, _ = rest.rpartition("```")
    about = [line for line in header.splitlines() if line and not line.startswith("#")]
    return about, output.rstrip("\n")


def tables(output):
    """The Markdown tables in a program's output, each as a list of lines."""
    found, current = [], []
    for line in output.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def summary(name):
    """The JSON of the last SUMMARY line in the recorded output of benchmark <name>."""
    _, output = read_result(name)
    lines = [line for line in output.splitlines() if line.startswith("SUMMARY {")]
    if not lines:
        raise LookupError(f"docs/results/{name}.md has no SUMMARY line")
    return json.loads(lines[-1][len("SUMMARY "):])


def figure(name, key):
    """The recorded value of figure <key> (or goal:<n>) of benchmark <name>, as prose shows it."""
    found = summary(name)
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


def render(kind, name, index, page):
    about, output = read_result(name)
    link = os.path.relpath(RESULTS / f"{name}.md", page.parent)
    source = f"*Measured by `scripts/gpu-check.sh`: {about[0]} Source: [docs/results/{name}.md]({link})*"
    # The SUMMARY line is for machines: pages show the lesson's lines.
    output = "\n".join(line for line in output.splitlines() if not line.startswith("SUMMARY {"))
    if kind == "OUTPUT":
        body = f"```text\n{output}\n```"
    elif kind == "EXCERPT":
        start, count = re.fullmatch(r' "([^"]+)" (\d+)', index).groups()
        lines = output.splitlines()
        first = next((i for i, line in enumerate(lines) if start in line), None)
        if first is None:
            raise LookupError(f"{name}'s output has no line containing {start!r}")
        body = "```text\n" + "\n".join(lines[first:first + int(count)]) + "\n```"
        source = source[:-1] + f" (an excerpt; [the whole output]({link}))*"
    else:
        found = tables(output)
        position = int(index or 1)
        if position > len(found):
            raise LookupError(f"{name} has {len(found)} table(s), not {position}")
        body = "\n".join(found[position - 1])
    return f"{body}\n\n{source}\n"


def shown(path):
    """A path relative to the repository root where possible, for messages."""
    return os.path.relpath(path.resolve(), ROOT)


def sync(path):
    text = path.read_text()

    def replace(match):
        kind, name, index = match.group(1), match.group(2), match.group(3)
        head = f"<!-- GPU-{kind}: {name}{index or ''} -->\n"
        return head + render(kind, name, index, path) + "<!-- /GPU-OUTPUT -->\n"

    def fill(match):
        name, key = match.group(1), match.group(2)
        return f"<!--fig:{name}:{key}-->{figure(name, key)}<!--/fig-->"

    return text, FIGURE.sub(fill, MARKER.sub(replace, text))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    files = args.files or sorted(ROOT.glob("[0-9][0-9]_*/README.md")) + sorted(
        ROOT.glob("[0-9][0-9]_*/*/README.md")) + sorted((ROOT / "docs").glob("*.md")) + [
        ROOT / "README.md"]
    stale = []
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


# Scripts that draw a figure from the record when run without arguments. Their own ctests
# (label "record") check that each figure names the run it was drawn from.
FIGURES = ["07_optimization/plot_results.py"]


def redraw_figures():
    import subprocess

    for script in FIGURES:
        subprocess.run([sys.executable, str(ROOT / script)], check=True)


if __name__ == "__main__":
    sys.exit(main())
