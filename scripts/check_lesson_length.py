#!/usr/bin/env python3
"""Fails when a lesson's page has a main path too long to finish in one sitting.

The main path of a page is every line before its first "## Going deeper" heading (a page without
one counts whole). It must fit in MAX_LINES; what a reader can skip goes under "Going deeper".
Without pages named, the pages are chapter 07's landing page (07_optimization/README.md) and every
lesson one folder down (07_optimization/*/README.md); chapter 08 names its README.

    python3 scripts/check_lesson_length.py [pages...]   # CTest: 07_optimization.lesson_length,
                                                        #        08_multi_gpu.lesson_length
    python3 scripts/check_lesson_length.py --self-test  # it fails a page one line too long

Exit status: 0 every page fits; 1 a page is too long (each is named with its count) or none found.
"""
import os
import pathlib
import sys
import tempfile

MAX_LINES = 200
ROOT = pathlib.Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "07_optimization"  # the default pages; chapter 08 names its README
GOING_DEEPER = "## Going deeper"


def main_path_lines(text):
    """The number of lines before the first '## Going deeper' heading (all lines without one)."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.rstrip() == GOING_DEEPER or line.startswith(GOING_DEEPER + " "):
            return number
    return len(lines)


def self_test():
    """The counting on made-up pages: the limit holds at MAX_LINES and fails one line past it."""
    cases = [
        ("x\n" * MAX_LINES + "## Going deeper\n" + "x\n" * 50, MAX_LINES),
        ("x\n" * (MAX_LINES + 1) + "## Going deeper\n", MAX_LINES + 1),
        ("x\n" * (MAX_LINES + 1), MAX_LINES + 1),  # no Going deeper: the page counts whole
        ("x\n" * 10 + "## Going deeper, again\n" + "## Going deeper\n", 11),
    ]
    for text, expected in cases:
        if main_path_lines(text) != expected:
            print("lesson_length: self-test failed: counted %d, expected %d" % (main_path_lines(text), expected))
            return 1
    with tempfile.TemporaryDirectory() as folder:
        page = pathlib.Path(folder) / "README.md"
        page.write_text(cases[1][0], encoding="utf-8")
        if check([page]) != 1:
            print("lesson_length: self-test failed: a page one line too long passed")
            return 1
    print("lesson_length: self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    pages = [pathlib.Path(p) for p in sys.argv[1:]] or (
        [CHAPTER / "README.md"] + sorted(CHAPTER.glob("*/README.md")))
    if not pages or not all(page.is_file() for page in pages):
        print("lesson_length: missing page(s): %s" % ", ".join(str(p) for p in pages if not p.is_file()))
        return 1
    return check(pages)


def check(pages):
    too_long = 0
    for page in pages:
        count = main_path_lines(page.read_text(encoding="utf-8"))
        name = os.path.relpath(page, ROOT) if ROOT in page.resolve().parents else page
        verdict = "ok" if count <= MAX_LINES else "TOO LONG"
        print("%-45s main path %3d lines (at most %d): %s" % (name, count, MAX_LINES, verdict))
        too_long += count > MAX_LINES
    if too_long:
        print("lesson_length: %d page(s) longer than %d lines before '## Going deeper': move what a "
              "reader can skip under Going deeper, or split the lesson" % (too_long, MAX_LINES))
        return 1
    print("lesson_length: every page's main path fits in %d lines (%d pages)" % (MAX_LINES, len(pages)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
