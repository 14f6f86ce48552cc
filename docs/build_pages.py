#!/usr/bin/env python3
"""Turns the course's Markdown (written for a code-hosting site) into Doxygen pages.

The chapter READMEs and the pages in docs/ are plain GitHub-style Markdown with
relative links: that is how most readers see them. Doxygen needs a little more: a
stable label per page and an anchor per section, links as `@ref label`, diagrams drawn
from their .dot sources, and text in which `@`, `\\`, `%` and unknown `<tags>` are not
taken for commands.
This script runs at build time (so chapters that land after configuring are picked
up), writes one page per source file into OUT/pages/, and writes OUT/pages.doxy,
which the Doxyfile includes: the page order, the source folders, images and diagrams.

    build_pages.py --repo <repository root> --out <folder in the build tree> [--dot PATH]
"""
import argparse
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# The reading order: setup, the chapters, then the guides. Chapters come from the
# top-level CMakeLists.txt (the course's own list) plus any NN_name/ folder present.
PAGES_BEFORE_CHAPTERS = ["environment"]
PAGES_AFTER_CHAPTERS = ["profiling", "errata", "pitfalls", "not-covered", "where-next", "glossary"]
SOURCE_PATTERNS = ("*.cu", "*.cuh", "*.hpp", "*.h", "*.cpp")
IMAGE_SUFFIXES = {".svg", ".png", ".jpg", ".jpeg", ".gif"}

# HTML tags Doxygen 1.9.4 accepts in Markdown; any other <word> is escaped as text.
HTML_TAGS = set(
    "a b big blockquote br caption center cite code dd del details dfn div dl dt em hr i img "
    "ins kbd li ol p pre s small span strike strong sub summary sup table tbody td tfoot th "
    "thead tr tt u ul var h1 h2 h3 h4 h5 h6".split())
# After a backslash, these stay escaped (Doxygen and Markdown agree on them);
# any other escaped punctuation loses its backslash (Doxygen would read a command).
KEPT_ESCAPES = set("\\@&$#<>%.\"|_*[]()`!+")
PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


class Page:
    """One Doxygen page: where its Markdown comes from and how it is named."""

    def __init__(self, label, source, title):
        self.label = label
        self.source = source  # Path of the Markdown file, or None for a placeholder
        self.title = title
        self.children = []  # a chapter's other Markdown files: pages under the chapter's


def first_heading(path):
    """The text of the first level-1 heading of a Markdown file, or None."""
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.match(r"\s*(```|~~~)", line):
            in_fence = not in_fence
        elif not in_fence and line.startswith("# "):
            return plain_title(line[2:])
    return None


def plain_title(text):
    """A heading's text without Markdown markup or a trailing {#label}."""
    text = re.sub(r"\{#[\w-]+\}\s*$", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text.replace("`", "").replace("*", "").strip()


def chapter_folders(repo):
    """NN_name folders, from the top-level CMakeLists.txt list and from the tree."""
    names = set()
    top = repo / "CMakeLists.txt"
    if top.exists():
        names.update(re.findall(r"\b(\d\d_[A-Za-z0-9_]+)\b", top.read_text(encoding="utf-8")))
    names.update(p.name for p in repo.iterdir() if p.is_dir() and re.fullmatch(r"\d\d_\w+", p.name))
    return sorted(names)


def collect_pages(repo):
    """Every page of the site, in reading order (the main page first)."""
    docs = repo / "docs"
    pages = [Page("index", docs / "index.md", first_heading(docs / "index.md"))]
    sequence = []
    for name in PAGES_BEFORE_CHAPTERS:
        sequence.append(docs_page(docs, name))
    for folder in chapter_folders(repo):
        number, _, topic = folder.partition("_")
        readme = repo / folder / "README.md"
        label = "chapter" + number
        if readme.exists():
            title = first_heading(readme) or "Chapter %s: %s" % (number, topic.replace("_", " "))
            sequence.append(Page(label, readme, title))
            sequence[-1].children = chapter_extra_pages(repo / folder, label)
        else:
            sequence.append(Page(label, None, "Chapter %s: %s (not written yet)"
                                 % (number, topic.replace("_", " "))))
    for name in PAGES_AFTER_CHAPTERS:
        sequence.append(docs_page(docs, name))
    sequence = [p for p in sequence if p is not None]
    extras = [docs_page(docs, p.stem) for p in sorted(docs.glob("*.md"))
              if p.stem not in PAGES_BEFORE_CHAPTERS + PAGES_AFTER_CHAPTERS + ["index"]]
    # The repository README is not a page of its own: the landing page is the one main
    # page, and links to the README lead there.
    return pages, sequence, [p for p in extras if p] + [Page("gpu_results", None, "Latest GPU results")]


def chapter_extra_pages(folder, chapter_label):
    """A chapter folder's Markdown files other than its README (a reader's page on its
    diagrams, say): each becomes a page under the chapter's, labelled chapterNN_<name>."""
    pages = []
    for path in sorted(folder.rglob("*.md")):
        relative = path.relative_to(folder)
        if relative == Path("README.md") or any(part.startswith((".", "build")) or part.endswith(".egg-info")
                                                 or part == "__pycache__" for part in relative.parts[:-1]):
            continue
        name = re.sub(r"[^A-Za-z0-9]+", "_", str(relative.with_suffix(""))).strip("_").lower()
        pages.append(Page("%s_%s" % (chapter_label, name), path, first_heading(path) or path.stem))
    return pages


def docs_page(docs, name):
    path = docs / (name + ".md")
    if not path.exists():
        return None
    return Page(name.replace("-", "_"), path, first_heading(path) or name)


class Converter:
    """Rewrites one Markdown file for Doxygen: links, images, escapes."""

    def __init__(self, repo, out, link_map, source_files, page_of, dot=None):
        self.repo = repo
        self.dot = dot  # Graphviz's dot, to draw diagrams from their .dot sources
        self.out = out
        self.link_map = link_map  # repo-relative path of a .md file -> page label
        self.source_files = source_files  # repo-relative paths Doxygen documents
        self.page_of = page_of  # repo-relative path of a page's own Markdown -> its label
        self._anchors = {}  # repo-relative path -> what anchors() found
        self.used_labels = set(page_of.values()) | set(link_map.values())
        self.current = ""  # the file being converted
        self.broken_anchors = []  # (page, link target) whose #anchor names no heading

    # --- links and images -------------------------------------------------
    def resolve(self, base, target):
        """A repo-relative path for a relative link target, or None if outside the repo."""
        path = os.path.normpath(os.path.join(base, target))
        if path.startswith(".."):
            return None
        return "" if path == "." else path

    def link(self, base, text, target):
        """Markdown for a link [text](target) as Doxygen should see it."""
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("@ref"):
            return "[%s](%s)" % (text, target)  # external, or already a Doxygen reference
        page, _, fragment = target.partition("#")
        if not page:  # an anchor in this page, in GitHub's naming: its Doxygen label
            anchor = self.anchors(self.repo / self.current)[0].get(fragment)
            if not anchor:
                self.broken_anchors.append((self.current, target))
            return self.ref(text, anchor) if anchor else text
        path = self.resolve(base, page)
        if path is not None:
            for candidate in (path, os.path.join(path, "README.md")):
                candidate = os.path.normpath(candidate)
                if candidate in self.page_of and fragment:
                    anchor = self.anchors(self.repo / candidate)[0].get(fragment)
                    if anchor:
                        return self.ref(text, anchor)
                    self.broken_anchors.append((self.current, target))
                if candidate in self.link_map:
                    return self.ref(text, self.link_map[candidate])
                if candidate in self.source_files:
                    return self.ref(text, candidate)
            if path == "docs/results" or path.startswith("docs/results/"):
                stem = os.path.splitext(os.path.basename(path))[0]
                if path.endswith(".md") and stem != "README" and (self.repo / path).is_file():
                    return self.ref(text, results_label(stem))  # its section there
                return self.ref(text, "gpu_results")
        # A file Doxygen does not publish (a script, a CMakeLists.txt): name it.
        shown = path if path is not None else target
        if shown and shown not in text:
            return "%s (`%s`)" % (text, shown)
        return text

    def ref(self, text, label):
        """A link to a page, section or file of the site, as Doxygen should see it."""
        code = re.fullmatch(r"`([^`]+)`", text)
        if code:  # Doxygen 1.9.4 shows the backticks of a code span in a link's text
            return "<code>[%s](@ref %s)</code>" % (html.escape(code.group(1), quote=False), label)
        return "[%s](@ref %s)" % (text, label)

    def image(self, base, alt, target):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            return "![%s](%s)" % (alt, target)
        path = self.resolve(base, target)
        if path is None or not (self.repo / path).is_file():
            print("build_pages.py: image %s not found (from %s)" % (target, base), file=sys.stderr)
            return alt
        src = self.repo / path
        flat = path.replace("/", "_")
        dot = src.with_suffix(".dot")
        if src.suffix == ".svg" and dot.is_file() and self.dot:
            # Drawn from the Graphviz source at build time, so the site shows the current .dot.
            # An image, not \dotfile: Doxygen puts a \dotfile in a fixed-size iframe that
            # cuts a wide diagram off, while an image scales to the page (course.css).
            subprocess.run([self.dot, "-Tsvg", "-o", str(self.out / "images" / flat), str(dot)], check=True)
        else:
            shutil.copyfile(src, self.out / "images" / flat)
        return "![%s](%s)" % (alt, flat)

    # --- text -------------------------------------------------------------
    def escape_text(self, text):
        """Plain Markdown text made safe from Doxygen's command characters."""
        out = []
        i = 0
        while i < len(text):
            c = text[i]
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if c == "\\" and nxt in PUNCTUATION and nxt:
                out.append(("\\" + nxt) if nxt in KEPT_ESCAPES else html.escape(nxt, quote=False))
                i += 2
                continue
            if c in "\\@%":
                out.append("\\" + c)
            elif c == ":" and re.match(r"::[A-Za-z_]", text[i:]) and not re.search(r"\w$", text[:i]):
                out.append("\\::")  # as is #word: ::name is a link request
                i += 2
                continue
            elif c == "#" and re.match(r"#\w", text[i:]):
                out.append("\\#")  # Doxygen reads #word as a link request
            elif c == "&":
                m = re.match(r"&(#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);", text[i:])
                if m and m.group(1) in ("amp", "lt", "gt"):
                    out.append(m.group(0))
                    i += len(m.group(0))
                    continue
                if m:  # other entities: the character itself (Doxygen knows only some)
                    out.append(html.escape(html.unescape(m.group(0)), quote=False))
                    i += len(m.group(0))
                    continue
                out.append("\\&")
            elif c == "<":
                m = re.match(r"</?([A-Za-z][A-Za-z0-9]*)\b[^<>]*>", text[i:])
                if m and m.group(1).lower() in HTML_TAGS:
                    out.append(m.group(0))
                    i += len(m.group(0))
                    continue
                out.append("\\<")
            elif c == ">" and out and out[-1] == "\\<":
                out.append("\\>")
            else:
                out.append(c)
            i += 1
        return "".join(out)

    LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]*(?:\([^()\s]*\))?[^()\s<>]*)>?"
                      r"(?:\s+\"[^\"]*\")?\s*\)")
    AUTOLINK = re.compile(r"<(https?://[^>\s]+|mailto:[^>\s]+)>")
    HTML_IMG = re.compile(r"<img\s[^>]*?src=\"([^\"]+)\"[^>]*?>", re.I)
    COMMENT = re.compile(r"<!--.*?-->")
    HTML_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9]*)\b[^<>]*>")

    def inline(self, base, line):
        """One line of running text: code spans, links and images kept intact. A comment inside
        running text (a figure's <!--fig:...--> marker) is dropped: Doxygen would drop the space
        after it ("3009GB/s")."""
        out = []
        pos = 0
        while pos < len(line):
            rest = line[pos:]
            m_code = re.match(r"(`+)", rest)
            if m_code:
                ticks = m_code.group(1)
                end = rest.find(ticks, len(ticks))
                while end != -1 and rest[end + len(ticks):end + len(ticks) + 1] == "`":
                    end = rest.find(ticks, end + len(ticks) + 1)
                if end == -1:
                    out.append(self.escape_text(ticks))
                    pos += len(ticks)
                else:
                    span = rest[: end + len(ticks)]
                    if line.lstrip().startswith("|") and "|" in span[len(ticks):-len(ticks)]:
                        # a | in a table cell's code: Doxygen splits the cell there unless escaped,
                        # which it only honours outside code spans
                        span = "<code>%s</code>" % self.escape_code(span[len(ticks):-len(ticks)])
                    elif ticks == "`" and "'" in span:
                        # Doxygen 1.9.4 reads `text' as a quotation, not code: use double backticks
                        span = "``" + span[1:-1] + "``"
                    out.append(span)
                    pos += end + len(ticks)
                continue
            for regex, handler in ((self.LINK, self._link_match), (self.AUTOLINK, lambda b, m: m.group(0)),
                                   (self.HTML_IMG, self._img_match), (self.COMMENT, lambda b, m: ""),
                                   (self.HTML_TAG, self._tag_match)):
                m = regex.match(rest)
                if m:
                    out.append(handler(base, m))
                    pos += len(m.group(0))
                    break
            else:
                # plain text up to the next character that may start a token
                m = re.match(r"[^`\[!<]+|.", rest, re.S)
                out.append(self.escape_text(m.group(0)))
                pos += len(m.group(0))
        return "".join(out)

    @staticmethod
    def escape_code(code):
        """Code as the text of a <code> tag, in which Doxygen still reads commands and Markdown."""
        code = code.strip().replace("\\|", "|")
        table = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
        return "".join(table.get(c, "\\" + c if c in "\\@%|*_#$`" else c) for c in code)

    def title_text(self, title):
        """A page title as Doxygen's navigation tree shows it (it leaves \\& as is)."""
        return self.escape_text(title).replace("\\&", "&amp;")

    @staticmethod
    def code_emphasis(line):
        """**`code`** as <b>: Doxygen 1.9.4 leaves emphasis that starts with a code span as text."""
        line = re.sub(r"(\*\*|__)(`[^`].*?)\1", r"<b>\2</b>", line)
        return re.sub(r"(?<![*\w])([*_])(`[^`].*?)\1(?![*\w])", r"<em>\2</em>", line)

    def _link_match(self, base, m):
        bang, text, target = m.group(1), m.group(2), m.group(3)
        if bang:
            return self.image(base, plain_title(text), target)
        return self.link(base, self.inline(base, text), target)

    def _tag_match(self, base, m):
        """An HTML tag Doxygen knows stays; <T> and the like are text."""
        if m.group(1).lower() in HTML_TAGS:
            return m.group(0)
        return self.escape_text(m.group(0))

    def _img_match(self, base, m):
        alt = re.search(r"alt=\"([^\"]*)\"", m.group(0))
        return self.image(base, alt.group(1) if alt else "", m.group(1))

    # --- headings and their anchors -------------------------------------------
    def anchors(self, path):
        """Anchors of a Markdown file: GitHub's #slug of each heading -> its Doxygen label.

        The first level-1 heading of a page is its title and stands for the page itself;
        every other heading gets a label of its own, prefixed with the page's label so
        that labels are unique across the site. Returns (slug -> label, labels in order).
        """
        key = os.path.relpath(path, self.repo)
        if key not in self._anchors:
            prefix = self.page_of.get(key)
            by_slug, in_order, seen = {}, [], {}
            title_pending = prefix is not None
            for _, kind, line in classify(split_references(path)[0]):
                heading = HEADING.match(line) if kind == "text" else None
                if not heading:
                    continue
                slug = github_slug(plain_title(heading.group(2)))
                count = seen.get(slug, 0)
                seen[slug] = count + 1
                slug = slug if count == 0 else "%s-%d" % (slug, count)
                if title_pending and len(heading.group(1)) == 1:
                    by_slug[slug] = prefix
                    title_pending = False
                    continue
                if prefix is None:
                    in_order.append(None)
                    continue
                tail = re.sub(r"[^a-z0-9]+", "_", slug.lower()).strip("_") or "s%d" % (len(in_order) + 1)
                label = "%s_%s" % (prefix, tail)
                while label in self.used_labels:
                    label += "_"
                self.used_labels.add(label)
                by_slug[slug] = label
                in_order.append(label)
            self._anchors[key] = (by_slug, in_order)
        return self._anchors[key]

    def convert(self, path, label=None, demote=0):
        """The Doxygen Markdown for one file; the first '# ' heading gets {#label}."""
        base = os.path.relpath(path.parent, self.repo)
        kept, refs = split_references(path)
        heading_labels = list(self.anchors(path)[1])
        self.current = os.path.relpath(path, self.repo)
        out = []
        titled = label is None
        title_pending = self.current in self.page_of or label is not None  # as anchors() counts
        for _, kind, line in classify(kept):
            if kind == "verbatim":
                out.append(line)
                continue
            # reference-style links ([text][name], [name][], [name]) become inline links
            line = re.sub(r"\[([^\]]+)\]\[([^\]]*)\]",
                          lambda m: "[%s](%s)" % (m.group(1), refs.get((m.group(2) or m.group(1)).lower(), "#"))
                          if (m.group(2) or m.group(1)).lower() in refs else m.group(0), line)
            line = re.sub(r"(?<![\]!\\])\[([^\[\]]+)\](?![\[(])",
                          lambda m: "[%s](%s)" % (m.group(1), refs[m.group(1).lower()])
                          if m.group(1).lower() in refs else m.group(0), line)
            heading = HEADING.match(line)
            if not heading:
                out.append(self.inline(base, self.code_emphasis(line)))
                continue
            # Plain text: Doxygen 1.9.4 shows a section title's code spans as literal <tt> tags
            text = self.title_text(plain_title(heading.group(2)))
            level = len(heading.group(1))
            if title_pending and level == 1:
                title_pending = False
                if not titled:
                    # plain text: the navigation tree shows a title's markup as text
                    out.append("# %s {#%s}" % (self.title_text(plain_title(heading.group(2))), label))
                    titled = True
                else:
                    out.append("# " + text)  # the main page's title
                continue
            anchor = heading_labels.pop(0) if heading_labels else None
            if anchor:  # not {#label}: with one, 1.9.4 shows the heading's code spans as <tt> text
                out.append("\\anchor %s" % anchor)
            out.append("#" * min(6, level + demote) + " " + text)
        if not titled:
            out.insert(0, "# %s {#%s}\n" % (self.escape_text(path.stem), label))
        elif label is not None:
            # The title must come first: after anything else (a comment, a badge) Doxygen
            # makes the labelled heading a section of a page named after the file.
            first = next(i for i, line in enumerate(out) if line.endswith("{#%s}" % label))
            out = [out[first], ""] + out[:first] + out[first + 1:]
        return out


HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def split_references(path):
    """The lines of a Markdown file without its reference-style link definitions, and those."""
    refs = {}  # [name]: target
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(\s+\"[^\"]*\")?\s*$", line)
        if m:
            refs[m.group(1).lower()] = m.group(2)
        else:
            kept.append(line)
    return kept, refs


def classify(lines):
    """Each line as (index, kind, line): "verbatim" (code, comments: left as they are) or "text"."""
    fence = None
    in_comment = False
    prev_blank = True
    in_list = False
    for i, line in enumerate(lines):
        if fence:
            if line.strip().startswith(fence):
                fence = None
            yield i, "verbatim", line
            continue
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            fence = m.group(1)
            yield i, "verbatim", line
            continue
        if in_comment:
            in_comment = "-->" not in line
            yield i, "verbatim", line
            continue
        if "<!--" in line and "-->" not in line.split("<!--", 1)[1]:
            in_comment = True
            yield i, "verbatim", line
            continue
        stripped = line.strip()
        if re.match(r"^([-*+]|\d+[.)])\s", stripped) and not line.startswith("    "):
            in_list = True
        elif not stripped:
            pass
        elif not line.startswith(" ") and prev_blank:
            in_list = False
        if line.startswith("    ") and prev_blank and not in_list:
            yield i, "verbatim", line  # an indented code block
            continue
        prev_blank = not stripped
        yield i, "text", line


def github_slug(text):
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"<[^>]+>", "", text).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def nav_line(sequence, index, escape, parent=None):
    """Previous / course map / glossary / next, for a page in the reading order; for a
    chapter's extra page (index None), back to its chapter."""
    parts = []
    if parent is not None:
        parts.append("[&larr; Back to %s](@ref %s)" % (escape(parent.title), parent.label))
    elif index > 0:
        before = sequence[index - 1]
        parts.append("[&larr; Previous: %s](@ref %s)" % (escape(before.title), before.label))
    parts.append("[Course map](@ref index)")
    if any(p.label == "glossary" for p in sequence) and (index is None or sequence[index].label != "glossary"):
        parts.append("[Glossary](@ref glossary)")
    if index is not None and index + 1 < len(sequence):
        after = sequence[index + 1]
        parts.append("[Next: %s &rarr;](@ref %s)" % (escape(after.title), after.label))
    return "<div class=\"course-nav\">" + " &middot; ".join(parts) + "</div>"


def with_nav(lines, nav):
    """The page with the navigation line after its title and at its end."""
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return lines[: i + 1] + ["", nav, ""] + lines[i + 1:] + ["", nav, ""]
    return [nav, ""] + lines + ["", nav]


def results_page(converter, repo):
    """docs/results/README.md, then every other file there (written by scripts/gpu-check.sh)."""
    results = repo / "docs" / "results"
    lines = ["# Latest GPU results {#gpu_results}", ""]
    files = sorted(results.glob("*")) if results.is_dir() else []
    readme = results / "README.md"
    if not files:
        lines += ["No GPU run has been recorded yet. `scripts/gpu-check.sh`, run on a machine with",
                  "an NVIDIA GPU, writes its results to `docs/results/`; the next docs build shows them here."]
        return lines
    lines += ["The files in `docs/results/`, as the last run of `scripts/gpu-check.sh` wrote them.", ""]
    if readme.exists():
        lines += converter.convert(readme, label=None, demote=1) + [""]
    for path in files:
        if path == readme or not path.is_file():
            continue
        if path.suffix == ".md":
            lines += ["## %s {#%s}" % (converter.escape_text(path.stem), results_label(path.stem)), ""]
            text = path.read_text(encoding="utf-8")
            if re.search(r"^\s*(```|~~~|#)", text, re.M):
                lines += converter.convert(path, label=None, demote=2)
            else:
                lines += program_output(converter, text)
            lines.append("")
        elif path.suffix.lower() in IMAGE_SUFFIXES:
            lines += ["## %s" % converter.escape_text(path.name), "",
                      converter.image("docs/results", path.stem, path.name), ""]
        else:
            lines += ["- `%s` (in `docs/results/`)" % path.name, ""]
    return lines


def results_label(stem):
    """The label of the section that shows docs/results/<stem>.md on the results page."""
    return "results_" + re.sub(r"[^A-Za-z0-9_]", "_", stem)


def program_output(converter, text):
    """A program's saved output: its Markdown tables as tables, the rest verbatim."""
    lines, block = [], []

    def flush():
        if block:
            lines.extend(["```text"] + block + ["```", ""])
            block.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            if block:
                flush()
            lines.append(converter.inline("docs/results", line))
        else:
            if lines and lines[-1].lstrip().startswith("|"):
                lines.append("")
            if line.strip() or block:
                block.append(line)
    flush()
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--dot", default=shutil.which("dot"),
                        help="Graphviz's dot (default: the one on PATH); without it a diagram's .svg is copied")
    args = parser.parse_args()
    repo, out = args.repo.resolve(), args.out.resolve()
    for sub in ("pages", "images"):
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir(parents=True)

    main_page, sequence, extras = collect_pages(repo)
    every = main_page + [q for p in sequence for q in [p] + p.children] + extras
    page_of = {os.path.relpath(p.source, repo): p.label for p in every if p.source}
    link_map = dict(page_of)
    if (repo / "README.md").exists():
        link_map["README.md"] = "index"
    for p in sequence:  # a missing README still has a page: links to it resolve
        if p.source is None and p.label.startswith("chapter"):
            folder = [f for f in chapter_folders(repo) if f.startswith(p.label[len("chapter"):] + "_")][0]
            link_map[folder + "/README.md"] = p.label
    folders = [d for d in [repo / "common" / "include" / "tutorial"] + [repo / f for f in chapter_folders(repo)]
               if d.is_dir()]
    sources = {os.path.relpath(s, repo) for d in folders for pat in SOURCE_PATTERNS for s in d.rglob(pat)}
    conv = Converter(repo, out, link_map, sources, page_of, args.dot)
    parent_of = {child.label: p for p in sequence for child in p.children}

    written = []
    for index, page in enumerate(every):
        if page.label == "gpu_results":
            lines = results_page(conv, repo)
        elif page.source is None:
            folder = [f for f, l in link_map.items() if l == page.label][0]
            lines = ["# %s {#%s}" % (page.title, page.label), "",
                     "This chapter's README (`%s`) has not been written yet." % folder]
        else:
            lines = conv.convert(page.source, label=None if page.label == "index" else page.label)
        if page.children:
            lines += ["", "<div class=\"course-nav\">More in this chapter: %s</div>"
                      % " &middot; ".join("\\subpage %s" % child.label for child in page.children)]
        if page in sequence:
            lines = with_nav(lines, nav_line(sequence, sequence.index(page), conv.title_text))
        elif page.label in parent_of:
            lines = with_nav(lines, nav_line(sequence, None, conv.title_text, parent_of[page.label]))
        target = out / "pages" / (page.label + ".md")
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(target)

    with open(out / "pages.doxy", "w", encoding="utf-8") as f:
        f.write("# Written by docs/build_pages.py at build time.\n")
        f.write("INPUT = %s\n" % " \\\n        ".join('"%s"' % p for p in written + folders))
        f.write('USE_MDFILE_AS_MAINPAGE = "%s"\n' % written[0])
        f.write('IMAGE_PATH = "%s"\n' % (out / "images"))
        f.write('STRIP_FROM_PATH = "%s" "%s"\n' % (out / "pages", repo))
    print("build_pages.py: %d pages (%d chapters), %d source files"
          % (len(written), sum(p.label.startswith("chapter") for p in sequence), len(sources)))
    # A link to a section that does not exist would silently lead to the top of the page.
    for source, target in conv.broken_anchors:
        print("build_pages.py: %s links to %s, but no heading there has that anchor" % (source, target),
              file=sys.stderr)
    return 1 if conv.broken_anchors else 0


if __name__ == "__main__":
    sys.exit(main())
