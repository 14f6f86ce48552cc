#!/usr/bin/env python3
"""Fails when a chapter's or a lesson's page has a main path too long to finish in one sitting.

The main path of a page is every line before its first "## Going deeper" heading (a page without
one counts whole). It must fit in MAX_LINES lines and MAX_WORDS words, and no line of prose may be
wider than MAX_WIDTH characters, so that the line limit cannot be met by long lines. Words are
counted outside fenced code blocks; HTML comments (markers such as <!--fig:...--> and <!-- CODE:
... -->) are removed before counting and measuring; tables (lines starting with "|"), code and the
blocks scripts/sync-results.py generates from the record (a table's caption names its run) may be
wider. What a reader can skip goes under "Going deeper".

Without pages named, the pages are every chapter's README (NN_*/README.md) and every page one folder
down (NN_*/*/README.md: chapter 06's parts, chapter 07's lessons); the front page is not one.

    python3 scripts/check_lesson_length.py [pages...]   # CTest: docs.lesson_length
    python3 scripts/check_lesson_length.py --self-test  # CTest: docs.lesson_length_selftest

Exit status: 0 every page fits; 1 a page breaks a limit (each is named with its counts) or none found.
"""
import os
import pathlib
import re
import sys
import tempfile

MAX_LINES = 200
MAX_WORDS = 1800
MAX_WIDTH = 140
ROOT = pathlib.Path(__file__).resolve().parent.parent
GOING_DEEPER = "## Going deeper"
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
FENCE = re.compile(r"^\s*(```|~~~)")
GENERATED_OPEN = re.compile(r"<!-- GPU-(OUTPUT|TABLE|EXCERPT):")
GENERATED_CLOSE = "<!-- /GPU-OUTPUT -->"


def default_pages():
    """Every chapter page and every page one folder below a chapter, in course order."""
    pages = []
    for chapter in sorted(p for p in ROOT.glob("[0-9][0-9]_*") if p.is_dir()):
        pages += [chapter / "README.md"] + sorted(chapter.glob("*/README.md"))
    return pages


def main_path(text):
    """The lines before the first '## Going deeper' heading (all lines without one)."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.rstrip() == GOING_DEEPER or line.startswith(GOING_DEEPER + " "):
            return lines[:number]
    return lines


def prose_lines(lines):
    """The main path's lines outside fenced code, with HTML comments removed (a comment spanning
    lines leaves them empty, so the count of lines does not change), each with whether it lies in
    a block that scripts/sync-results.py generates from the record (a table or an output and its
    caption, which may be wide), and its line number in the page."""
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), "\n".join(lines))
    prose, in_code, in_generated = [], False, False
    for number, (raw, line) in enumerate(zip(lines, text.split("\n")), start=1):
        if GENERATED_OPEN.match(raw):
            in_generated = True
        elif raw.startswith(GENERATED_CLOSE):
            in_generated = False
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            prose.append((line, in_generated, number))
    return prose


def measure(text):
    """(lines, words, [width of each prose line wider than MAX_WIDTH, in page order])."""
    lines = main_path(text)
    prose = prose_lines(lines)
    words = sum(len(line.split()) for line, _, _ in prose)
    return len(lines), words, [width for _, width in wide_lines(prose)]


def wide_lines(prose):
    """(line number, width) of each prose line wider than MAX_WIDTH, outside tables and generated blocks."""
    return [(number, len(line.rstrip())) for line, generated, number in prose
            if len(line.rstrip()) > MAX_WIDTH and not generated and not line.lstrip().startswith("|")]


def check(pages):
    failing = 0
    for page in pages:
        lines, words, wide = measure(page.read_text(encoding="utf-8"))
        name = os.path.relpath(page, ROOT) if ROOT in page.resolve().parents else str(page)
        problems = []
        if lines > MAX_LINES:
            problems.append("%d lines > %d" % (lines, MAX_LINES))
        if words > MAX_WORDS:
            problems.append("%d words > %d" % (words, MAX_WORDS))
        if wide:
            problems.append("%d prose line(s) over %d characters (widest %d)" % (len(wide), MAX_WIDTH, max(wide)))
        print("%-44s main path %3d lines, %4d words: %s" % (name, lines, words, "; ".join(problems) or "ok"))
        for number, width in wide_lines(prose_lines(main_path(page.read_text(encoding="utf-8")))):
            print("    line %d: %d characters" % (number, width))
        failing += bool(problems)
    if failing:
        print("lesson_length: %d page(s) too long before '## Going deeper' (at most %d lines, %d words, "
              "prose lines of %d characters): move what a reader can skip under Going deeper, or split "
              "the lesson" % (failing, MAX_LINES, MAX_WORDS, MAX_WIDTH))
        return 1
    print("lesson_length: every page's main path fits (%d pages)" % len(pages))
    return 0


def self_test():
    """The measuring on made-up pages: each limit holds at its value and fails one past it."""
    word = "word " * 9 + "word\n"  # ten words, 49 characters
    fits = "x\n" * MAX_LINES + GOING_DEEPER + "\n" + "x\n" * 50
    cases = [  # (page, lines, words, wide widths)
        (fits, MAX_LINES, MAX_LINES, []),
        ("x\n" * (MAX_LINES + 1) + GOING_DEEPER + "\n", MAX_LINES + 1, MAX_LINES + 1, []),
        ("x\n" * (MAX_LINES + 1), MAX_LINES + 1, MAX_LINES + 1, []),  # no Going deeper: counts whole
        ("x\n" * 10 + "## Going deeper, again\n" + GOING_DEEPER + "\n", 11, 14, []),
        (word * (MAX_WORDS // 10), MAX_WORDS // 10, MAX_WORDS, []),
        (word * (MAX_WORDS // 10) + "one\n", MAX_WORDS // 10 + 1, MAX_WORDS + 1, []),
        ("```\n" + word * 500 + "```\n", 502, 0, []),  # code is not counted
        ("<!-- a\n" + word * 500 + "-->\n", 502, 0, []),  # nor are comments, over lines too
        ("y" * MAX_WIDTH + "\n", 1, 1, []),
        ("y" * (MAX_WIDTH + 1) + "\n", 1, 1, [MAX_WIDTH + 1]),
        ("|" + "y" * 300 + "|\n", 1, 1, []),  # tables may be wide
        ("<!--fig:r:f-->" + "y" * MAX_WIDTH + "<!--/fig-->\n", 1, 1, []),  # markers do not count
        ("<!-- GPU-TABLE: r -->\n" + "y" * 300 + "\n<!-- /GPU-OUTPUT -->\n" + "y" * 300 + "\n",
         4, 2, [300]),  # a generated block's caption may be wide, the prose after it not
    ]
    for number, (text, *expected) in enumerate(cases):
        got = list(measure(text))
        if got != expected:
            print("lesson_length: self-test case %d failed: measured %s, expected %s" % (number, got, expected))
            return 1
    with tempfile.TemporaryDirectory() as folder:
        page = pathlib.Path(folder) / "README.md"
        for number, text in enumerate([cases[1][0], cases[5][0], cases[9][0]]):
            page.write_text(text, encoding="utf-8")
            if check([page]) != 1:
                print("lesson_length: self-test failed: page %d, over a limit, passed" % number)
                return 1
        page.write_text(fits, encoding="utf-8")
        if check([page]) != 0:
            print("lesson_length: self-test failed: a page within every limit failed")
            return 1
    print("lesson_length: self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    pages = [pathlib.Path(p) for p in sys.argv[1:]] or default_pages()
    if not pages or not all(page.is_file() for page in pages):
        print("lesson_length: missing page(s): %s" % (", ".join(str(p) for p in pages if not p.is_file())
                                                     or "none found"))
        return 1
    return check(pages)


if __name__ == "__main__":
    sys.exit(main())
