#!/usr/bin/env python3
"""Checks the generated site: every local link and #anchor resolves, every chapter has its page.

    check_links.py <html folder> [--repo <repository root>]

Reads every .html file, collects href, src and data attributes, and checks that each
one that points into the site names a file that exists and, for #anchor, an element
with that id or name in it; and that no page shows <tt> or <code> tags as text (what
Doxygen 1.9.4 does with code in a section title). External links are not fetched.
With --repo, also checks that each chapter folder NN_name/ with a README.md has its
page (chapterNN.html) and that the page is not the placeholder, and that the relative
links of the Markdown files a code host shows (READMEs, docs/*.md) name existing files. Exit 0 if all is well,
1 with a list of what is broken.
"""
import argparse
import html
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Collector(HTMLParser):
    """Link targets and anchor names of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []  # (attribute, value, line)
        self.anchors = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.anchors.add(value)
            elif name in ("href", "src") or (tag == "object" and name == "data"):
                self.links.append((name, value, self.getpos()[0]))

    handle_startendtag = handle_starttag


def parse(path, cache):
    if path not in cache:
        collector = Collector()
        collector.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = collector
    return cache[path]


def check_site(html_dir):
    cache = {}
    broken = []
    pages = sorted(html_dir.rglob("*.html"))
    checked = 0
    for page in pages:
        for attr, value, line in parse(page, cache).links:
            parts = urlsplit(value)
            if parts.scheme or value.startswith("//") or value.startswith("javascript:"):
                continue  # external: not this check's business
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            checked += 1
            where = "%s:%d" % (page.relative_to(html_dir), line)
            if html_dir not in target.parents and target != html_dir:
                broken.append("%s: %s=\"%s\": points outside the site" % (where, attr, value))
            elif not target.exists():
                broken.append("%s: %s=\"%s\": no such file" % (where, attr, value))
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parse(target, cache).anchors:
                    broken.append("%s: %s=\"%s\": no anchor '%s' in %s"
                                  % (where, attr, value, parts.fragment, target.name))
    for page in pages:  # markup that Doxygen printed as text instead of rendering (not in listings)
        if page.name.endswith("_source.html"):
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        for tag in ("&lt;tt&gt;", "&lt;code&gt;"):
            if tag in text:
                broken.append("%s: shows %s as text" % (page.relative_to(html_dir), html.unescape(tag)))
    return pages, checked, broken


def check_chapters(html_dir, repo):
    problems = []
    for folder in sorted(p for p in repo.iterdir() if re.fullmatch(r"\d\d_\w+", p.name)):
        if not (folder / "README.md").exists():
            continue
        page = html_dir / ("chapter%s.html" % folder.name[:2])
        if not page.exists():
            problems.append("%s/README.md has no page (%s)" % (folder.name, page.name))
        elif "has not been written yet" in page.read_text(encoding="utf-8", errors="replace"):
            problems.append("%s is still the placeholder: rebuild the docs" % page.name)
    return problems


MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def check_markdown(repo):
    """Relative links in the Markdown a code host shows (READMEs, docs/*.md) name existing files.

    Links into docs/results/ are let through: scripts/gpu-check.sh writes that folder.
    """
    problems = []
    files = [repo / "README.md"] + sorted(repo.glob("docs/*.md")) + sorted(repo.glob("[0-9][0-9]_*/README.md"))
    for md in files:
        if not md.exists():
            continue
        in_fence = False
        for number, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*(```|~~~)", line):
                in_fence = not in_fence
            if in_fence:
                continue
            line = re.sub(r"(`+).*?\1", "", line)  # code spans hold no links
            for target in MD_LINK.findall(line):
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                path = (md.parent / unquote(target.split("#")[0])).resolve()
                if path.exists() or (repo / "docs" / "results") in [path] + list(path.parents):
                    continue
                problems.append("%s:%d: link to %s: no such file" % (md.relative_to(repo), number, target))
    return problems


def main():
    parser = argparse.ArgumentParser(description="Check the links of the generated site.")
    parser.add_argument("html_dir", type=Path)
    parser.add_argument("--repo", type=Path)
    args = parser.parse_args()
    html_dir = args.html_dir.resolve()
    if not (html_dir / "index.html").exists():
        print("check_links: %s/index.html not found: build the docs first "
              "(cmake --build build --target docs)" % html_dir)
        return 1
    pages, checked, broken = check_site(html_dir)
    if args.repo:
        broken += check_chapters(html_dir, args.repo.resolve())
        broken += check_markdown(args.repo.resolve())
    for problem in broken:
        print("BROKEN " + problem)
    print("check_links: %d pages, %d local links checked, %d broken"
          % (len(pages), checked, len(broken)))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
