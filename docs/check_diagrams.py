#!/usr/bin/env python3
"""Checks that each committed diagram is a rendering of its Graphviz source.

    check_diagrams.py --repo <repository root> [--dot PATH] [--update]

Diagrams live as NAME.dot with NAME.svg committed beside it, so that a reader on a
code-hosting site sees them (the docs build renders the .dot itself). For every .dot in
docs/diagrams/ and NN_name/diagrams/, this renders it and compares the nodes and edges
(the <title> elements of the SVG) with the committed .svg: layout and Graphviz version
may differ, the content may not. --update rewrites the .svg files instead.
"""
import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path


def titles(svg_text):
    return sorted(re.findall(r"<title>(.*?)</title>", svg_text, re.S))


def render(dot, source):
    return subprocess.run([dot, "-Tsvg", str(source)], capture_output=True, text=True, check=True).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--dot", default=shutil.which("dot"))
    parser.add_argument("--update", action="store_true")
    args = parser.parse_args()
    if not args.dot:
        print("check_diagrams: skipped: Graphviz dot not found (Debian: apt-get install graphviz)")
        return 77
    sources = sorted(args.repo.glob("docs/diagrams/*.dot")) + sorted(args.repo.glob("[0-9][0-9]_*/diagrams/*.dot"))
    problems = []
    for source in sources:
        svg = source.with_suffix(".svg")
        rendered = render(args.dot, source)
        if args.update:
            svg.write_text(rendered, encoding="utf-8")
            print("check_diagrams: wrote %s" % svg.relative_to(args.repo))
        elif not svg.exists():
            problems.append("%s has no committed %s" % (source.relative_to(args.repo), svg.name))
        elif titles(svg.read_text(encoding="utf-8")) != titles(rendered):
            problems.append("%s is out of date with its .dot: run docs/check_diagrams.py --repo . --update"
                            % svg.relative_to(args.repo))
    for problem in problems:
        print("check_diagrams: " + problem)
    print("check_diagrams: %d diagrams, %d problems" % (len(sources), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
