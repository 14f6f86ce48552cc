#!/usr/bin/env python3
"""Opens the site's landing page in headless Chromium and checks that the course map renders.

    check_browser.py <html folder>/index.html [--screenshot out.png] [--chromium PATH]

Two runs of Debian's `chromium --headless`: one takes a screenshot (an artefact to look
at), one dumps the DOM after the page's scripts ran. The DOM must hold the course map:
a link to every chapter page the site has, with that chapter's title, and the
navigation tree that Doxygen's JavaScript builds. Exit 0 if so, 1 if not, 77 (skipped)
where no Chromium is installed.
"""
import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SKIPPED = 77


def chromium(binary, profile, *args):
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--hide-scrollbars", "--no-first-run", "--user-data-dir=" + profile,
               "--virtual-time-budget=5000", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("--screenshot", type=Path, default=Path("landing-page.png"))
    parser.add_argument("--chromium")
    args = parser.parse_args()

    binary = args.chromium or next((shutil.which(n) for n in ("chromium", "chromium-browser",
                                                              "google-chrome") if shutil.which(n)), None)
    if not binary:
        print("check_browser: skipped: no Chromium found (Debian: apt-get install chromium)")
        return SKIPPED
    index = args.index.resolve()
    if not index.exists():
        print("check_browser: %s not found: build the docs first (cmake --build build --target docs)" % index)
        return 1
    url = index.as_uri()
    html_dir = index.parent

    with tempfile.TemporaryDirectory() as profile:
        shot = chromium(binary, profile, "--window-size=1280,1600", "--screenshot=%s" % args.screenshot, url)
        dom = chromium(binary, profile, "--dump-dom", url)
    problems = []
    if not args.screenshot.exists() or args.screenshot.stat().st_size < 20000:
        problems.append("no screenshot, or an almost empty one, at %s (chromium said: %s)"
                        % (args.screenshot, shot.stderr.strip()[-500:]))
    text = dom.stdout
    if dom.returncode != 0 or "<body" not in text:
        problems.append("chromium --dump-dom failed (exit %d): %s" % (dom.returncode, dom.stderr.strip()[-500:]))

    # Every chapter page of the site must be linked from the rendered course map, by title.
    chapters = sorted(html_dir.glob("chapter[0-9][0-9].html"))
    if not chapters:
        problems.append("the site has no chapter pages (chapterNN.html)")
    for page in chapters:
        title = re.search(r"<div class=\"title\">(.*?)</div>", page.read_text(encoding="utf-8"), re.S)
        if not re.search(r"<a [^>]*href=\"%s\"" % re.escape(page.name), text):
            problems.append("the landing page has no link to %s" % page.name)
        if title:
            words = re.sub(r"<[^>]+>", "", title.group(1))
            number = re.search(r"\d\d", page.name).group(0)
            if number not in re.sub(r"<[^>]+>", " ", text):
                problems.append("chapter %s is not named on the landing page (%s)" % (number, words))
    for needed in ("Course map", "Environment", "Glossary"):
        if needed not in text:
            problems.append("the landing page does not show '%s'" % needed)
    # Doxygen's navigation tree is built by JavaScript: its entries prove the scripts ran.
    tree = text.split('id="nav-tree-contents"', 1)
    if len(tree) < 2 or "chapter01.html" not in tree[1]:
        problems.append("the navigation tree was not rendered (JavaScript did not run?)")

    for problem in problems:
        print("check_browser: " + problem)
    print("check_browser: %s, %d chapter pages linked, screenshot %s (%d bytes)"
          % ("FAILED" if problems else "passed", len(chapters), args.screenshot,
             args.screenshot.stat().st_size if args.screenshot.exists() else 0))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
