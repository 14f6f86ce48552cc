#!/usr/bin/env python3
"""Opens the site in headless Chromium: the course map renders, and so does Chinese text.

    check_browser.py <html folder>/index.html [--screenshot out.png] [--chromium PATH]

Runs of Debian's `chromium --headless`: one takes a screenshot (an artefact to look at),
one dumps the DOM after the page's scripts ran. The DOM must hold the course map: a link
to every chapter page the site has, with that chapter's title, and the navigation tree
that Doxygen's JavaScript builds. Then the Chinese characters of the glossary page are
drawn, in the site's own font, on a canvas in the same browser: a machine without a font
for them draws the same empty box for each (tofu), so each must differ from the others
and from a character no font has. A screenshot of the glossary is kept beside the first.
Exit 0 if all holds, 1 if not, 77 (skipped) where no Chromium is installed.
"""
import argparse
import json
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


# A page in the site's folder, with the site's style sheets, that draws each character on a
# canvas and writes what it found into the DOM for --dump-dom to read.
GLYPH_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">%s</head>
<body><div class="contents" id="probe">x</div><pre id="result"></pre><script>
const chars = %s;
const font = "48px " + getComputedStyle(document.getElementById("probe")).fontFamily;
function drawn(ch) {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 64;
  const g = canvas.getContext("2d");
  g.font = font;
  g.fillText(ch, 4, 52);
  return Array.from(g.getImageData(0, 0, 64, 64).data).join(",");
}
const missing = drawn("\\u{10FFFD}");   // a private-use character: no font has it
const seen = {}, result = {font: font, tofu: [], same: []};
for (const ch of chars) {
  const image = drawn(ch);
  if (image === missing) result.tofu.push(ch);
  else if (seen[image]) result.same.push(seen[image] + ch);
  else seen[image] = ch;
}
document.getElementById("result").textContent = "GLYPHS " + JSON.stringify(result);
</script></body></html>
"""


def check_chinese(binary, profile, html_dir, screenshot):
    """Problems with the glossary's Chinese characters in this browser, or [] if they render."""
    glossary = html_dir / "glossary.html"
    if not glossary.exists():
        return ["the site has no glossary.html"]
    chars = sorted(set(re.findall(r"[\u4e00-\u9fff]", glossary.read_text(encoding="utf-8"))))
    if len(chars) < 10:
        return ["the glossary holds %d Chinese characters; its Chinese column is missing" % len(chars)]
    chromium(binary, profile, "--window-size=1280,1600", "--screenshot=%s" % screenshot,
             glossary.as_uri())
    sheets = "".join('<link rel="stylesheet" href="%s">' % css.name for css in sorted(html_dir.glob("*.css")))
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=html_dir, encoding="utf-8") as page:
        page.write(GLYPH_PAGE % (sheets, json.dumps(chars)))
        page.flush()
        dom = chromium(binary, profile, "--dump-dom", Path(page.name).as_uri())
    found = re.search(r"GLYPHS (\{.*?\})</pre>", dom.stdout)
    if not found:
        return ["the glyph test page did not run: %s" % dom.stderr.strip()[-300:]]
    result = json.loads(found.group(1))
    problems = []
    if result["tofu"] or result["same"]:
        problems.append("%d of the glossary's %d Chinese characters draw as empty boxes in %s "
                        "(e.g. %s): install a CJK font (Debian: apt-get install fonts-noto-cjk)"
                        % (len(result["tofu"]) + len(result["same"]), len(chars), result["font"],
                           "".join((result["tofu"] + result["same"])[:6])))
    print("check_browser: %d Chinese characters of the glossary drawn in %s, %d as empty boxes"
          % (len(chars), result["font"], len(result["tofu"]) + len(result["same"])))
    return problems


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

    glossary_shot = args.screenshot.with_name("glossary.png")
    with tempfile.TemporaryDirectory() as profile:
        shot = chromium(binary, profile, "--window-size=1280,1600", "--screenshot=%s" % args.screenshot, url)
        dom = chromium(binary, profile, "--dump-dom", url)
        problems = check_chinese(binary, profile, html_dir, glossary_shot)
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
