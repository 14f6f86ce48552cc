#!/usr/bin/env python3
"""Cuts code excerpts from the course's source files into its Markdown pages.

A page never holds code typed by hand: it marks where an excerpt belongs, and this
script fills the block from the source, so the text cannot drift from the code.

In a source file, an excerpt is the lines between two comment markers (any comment style):

    // [excerpt:add-kernel]
    __global__ void add(...) { ... }
    // [/excerpt:add-kernel]

In a page, a marker line, the generated fenced block, and a closing line:

    <!-- CODE: 01_hello_add/add.cu add-kernel -->     the excerpt named add-kernel
    <!-- CODE: 01_hello_add/add.cu -->                the whole file
    <!-- CODE-DIFF: a/step1.cuh:kernel a/step2.cuh:kernel -->
                                                      what changed from one excerpt (or file,
                                                      without ':name') to the other, as a diff
    <!-- /CODE -->

Marker lines of any excerpt are left out of what a page shows, and an excerpt's common
indentation is removed. Paths are relative to the repository root.

Usage: scripts/excerpts.py [--check] [files...]
  (default: every chapter README.md, READMEs one and two folders down, docs/*.md, README.md)
--check: change nothing; exit 1 if a page differs from its sources or names a missing excerpt.
"""
import argparse
import difflib
import pathlib
import re
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPEN = re.compile(r"^<!-- (CODE|CODE-DIFF): (.+?) -->\n$")
CLOSE = "<!-- /CODE -->\n"
MARKER = re.compile(r"\[/?excerpt:([A-Za-z0-9_.-]+)\]")
LANGUAGES = {".cu": "cuda", ".cuh": "cuda", ".cpp": "cpp", ".hpp": "cpp", ".h": "cpp",
             ".py": "python", ".sh": "bash", ".cmake": "cmake", ".txt": "cmake"}


class ExcerptError(Exception):
    pass


def language(path):
    return LANGUAGES.get(path.suffix, "text")


def excerpt(spec):
    """The lines of 'path' or 'path:name', marker lines left out, common indent removed."""
    path_text, _, name = spec.partition(":")
    path = ROOT / path_text
    if not path.is_file():
        raise ExcerptError(f"no file {path_text}")
    lines = path.read_text().splitlines(keepends=True)
    if name:
        begins = [i for i, line in enumerate(lines) if f"[excerpt:{name}]" in line]
        ends = [i for i, line in enumerate(lines) if f"[/excerpt:{name}]" in line]
        if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
            raise ExcerptError(f"{path_text} must have one [excerpt:{name}] and one "
                               f"[/excerpt:{name}] after it (found {len(begins)} and {len(ends)})")
        lines = lines[begins[0] + 1:ends[0]]
    shown = [line for line in lines if not MARKER.search(line)]
    if not "".join(shown).strip():
        raise ExcerptError(f"{spec} is empty")
    return path, textwrap.dedent("".join(shown)).rstrip("\n") + "\n"


def render(kind, args):
    """The fenced block a marker stands for."""
    specs = args.split()
    if kind == "CODE":
        if not 1 <= len(specs) <= 2:
            raise ExcerptError(f"CODE takes a path and an optional name, not {args!r}")
        path, body = excerpt(":".join(specs))
        return f"```{language(path)}\n{body}```\n"
    if len(specs) != 2:
        raise ExcerptError(f"CODE-DIFF takes two excerpts, not {args!r}")
    (_, old), (_, new) = excerpt(specs[0]), excerpt(specs[1])
    diff = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=specs[0], tofile=specs[1], n=2))
    if not diff:
        raise ExcerptError(f"{specs[0]} and {specs[1]} are the same")
    return "```diff\n" + "".join(line if line.endswith("\n") else line + "\n" for line in diff) + "```\n"


def fill(text, page):
    """The page with every CODE block rendered anew."""
    out, lines, i = [], text.splitlines(keepends=True), 0
    while i < len(lines):
        out.append(lines[i])
        found = OPEN.match(lines[i])
        i += 1
        if not found:
            continue
        close = next((j for j in range(i, len(lines)) if lines[j] == CLOSE), None)
        if close is None:
            raise ExcerptError(f"{page}: '{lines[i - 1].strip()}' has no closing {CLOSE.strip()}")
        out.append(render(*found.groups()))
        out.append(CLOSE)
        i = close + 1
    return "".join(out)


def pages():
    found = [ROOT / "README.md"] + sorted(ROOT.glob("[0-9][0-9]_*/README.md"))
    found += sorted(ROOT.glob("[0-9][0-9]_*/*/README.md")) + sorted(ROOT.glob("[0-9][0-9]_*/*/*/README.md"))
    found += sorted((ROOT / "docs").glob("*.md"))
    return [p for p in found if p.is_file() and not any(
        part.startswith(("build", ".")) for part in p.relative_to(ROOT).parts[:-1])]


def main():
    global ROOT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; fail on a difference")
    parser.add_argument("--root", type=pathlib.Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    ROOT = args.root.resolve()
    stale, broken, blocks = [], [], 0
    for page in [f.resolve() for f in args.files] or pages():
        text = page.read_text()
        blocks += sum(1 for line in text.splitlines(keepends=True) if OPEN.match(line))
        try:
            new = fill(text, page.relative_to(ROOT))
        except ExcerptError as error:
            broken.append(f"{page.relative_to(ROOT)}: {error}")
            continue
        if new != text:
            stale.append(page.relative_to(ROOT))
            if not args.check:
                page.write_text(new)
    for line in broken:
        print(f"excerpts: {line}", file=sys.stderr)
    if args.check and stale:
        for page in stale:
            print(f"excerpts: {page} differs from its sources; run scripts/excerpts.py", file=sys.stderr)
    elif stale:
        print(f"excerpts: updated {', '.join(map(str, stale))}")
    print(f"excerpts: {blocks} code block(s) in {len(args.files) or len(pages())} page(s)")
    return 1 if broken or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
