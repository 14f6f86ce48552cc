#!/usr/bin/env python3
"""Copies real GPU output from docs/results/ into the course's Markdown pages.

A page marks where measured output belongs, and this script fills it in from the
latest GPU check (scripts/gpu-check.sh), so no number in a README is typed by hand:

    <!-- GPU-OUTPUT: 03_launch_config -->          the whole output of that benchmark
    <!-- GPU-TABLE: 03_launch_config 2 -->         its 2nd Markdown table (default: 1st)

Each marker is followed by the generated block and a closing `<!-- /GPU-OUTPUT -->`;
running the script again replaces the block, so it is safe to re-run after every GPU check.

Usage: scripts/sync-results.py [--check] [files...]   (default: every README.md and docs/*.md)
--check: change nothing; exit 1 if a page is out of date or names a result that does not exist.
"""
import argparse
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
MARKER = re.compile(
    r"<!-- GPU-(OUTPUT|TABLE): ([\w.-]+)(?: (\d+))? -->\n"
    r"(?:.*?<!-- /GPU-OUTPUT -->\n)?",
    re.S,
)


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


def render(kind, name, index, page):
    about, output = read_result(name)
    link = os.path.relpath(RESULTS / f"{name}.md", page.parent)
    source = f"*Measured by `scripts/gpu-check.sh`: {about[0]} Source: [docs/results/{name}.md]({link})*"
    if kind == "OUTPUT":
        body = f"```text\n{output}\n```"
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
        head = f"<!-- GPU-{kind}: {name}{' ' + index if index else ''} -->\n"
        return head + render(kind, name, index, path) + "<!-- /GPU-OUTPUT -->\n"

    return text, MARKER.sub(replace, text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    files = args.files or sorted(ROOT.glob("[0-9][0-9]_*/README.md")) + sorted(
        (ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
