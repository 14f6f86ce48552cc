#!/usr/bin/env python3
"""Finds measured numbers typed into the course's prose instead of filled from docs/results.

A measured figure in a README must come from the latest GPU check: inside an inline
`<!--fig:NAME:KEY-->...<!--/fig-->` marker or a generated GPU-OUTPUT/TABLE/EXCERPT block,
which scripts/sync-results.py rewrites after every run. This check flags a number with a
unit of time, rate or ratio (ms, µs, GB/s, TFLOP/s, %, x) anywhere else in the prose.

A page may keep a measured history (how a kernel got faster, step by step, before the record
that is current) inside `<!-- history: DEVICE, YYYY-MM-DD, ... -->` ... `<!-- /history -->`: the
opening comment must name the date of those measurements, and nothing in it is flagged.

Not flagged: code (fenced blocks and `inline code`), generated blocks and markers, histories,
quotations (lines starting with ">"), and lines that say where a number comes from other than our run: a link to a public source,
the notes (labelled as theirs), a datasheet, or a goal or threshold (">= 95%", "at least").

Usage: docs/check_prose_figures.py [files...]   (default: chapter READMEs and docs/*.md)
Exit status 1 if anything is flagged.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# A ratio is written 13403x (no space): "2 x 2^20" is a product, not a figure.
MEASURED = re.compile(
    r"(?<![\w.^/-])~?\d[\d,]*(?:\.\d+)?(?:\s?(?:ms|µs|us|ns|s|GB/s|TB/s|GFLOP/s|TFLOP/s|%)|[x×])(?![\w/])")
GENERATED = re.compile(r"<!-- GPU-(?:OUTPUT|TABLE|EXCERPT):.*?<!-- /GPU-OUTPUT -->", re.S)
HISTORY = re.compile(r"<!-- history: [^>]*\d{4}-\d\d-\d\d[^>]*-->.*?<!-- /history -->", re.S)
FIGURE = re.compile(r"<!--fig:[^>]*-->.*?<!--/fig-->\S*")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
SOURCED = re.compile(
    r"https?://|the notes|notes'|their figure|datasheet|goal|threshold|target|at least|at most|>=|≥|<=|≤|"
    r"predict|expect|should|would|about \d|up to|cover|gencode|sm_\d", re.I)


def flagged(text):
    """(line number, line) pairs with a typed measured figure."""
    def blank(match):  # keep line numbers: replace a match by its newlines only
        return "\n" * match.group(0).count("\n")

    for pattern in (GENERATED, HISTORY, FENCE):
        text = pattern.sub(blank, text)
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        prose = INLINE_CODE.sub("", FIGURE.sub("", line))
        if line.lstrip().startswith("|"):  # a hand-written table: its cells are prose too
            prose = prose.replace("|", " ")
        quoted = line.lstrip().startswith(">")  # a quotation (the notes, in the errata)
        if MEASURED.search(prose) and not SOURCED.search(prose) and not quoted:
            found.append((number, line.strip()))
    return found


def main():
    files = [pathlib.Path(f) for f in sys.argv[1:]] or (
        sorted(ROOT.glob("[0-9][0-9]_*/README.md")) + sorted(ROOT.glob("[0-9][0-9]_*/*/README.md"))
        + sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"])
    problems = 0
    for path in files:
        for number, line in flagged(path.read_text()):
            print(f"{path.relative_to(ROOT) if path.is_absolute() else path}:{number}: {line[:160]}")
            problems += 1
    if problems:
        print(f"\n{problems} typed figure(s): put each in a <!--fig:NAME:KEY--> marker filled from "
              "docs/results, or say where it comes from (a link, the notes, a goal).")
        return 1
    print("prose figures: every measured number comes from docs/results or a named source")
    return 0


if __name__ == "__main__":
    sys.exit(main())
