#!/usr/bin/env python3
"""Checks in headless Chromium that every figure on the site's pages renders.

    check_figures.py <html folder> [--require PAGE=MARKDOWN ...] [--repo DIR] [--chromium PATH]

Doxygen shows a Markdown image as <img> (PNG and the like) or as <object> (SVG). A page that
links a missing or broken file still builds, so this loads each page that has figures in
Chromium, inside a small harness page in the same folder, and asks the browser: every <img>
must have loaded with naturalWidth > 0, every SVG <object> must hold an SVG document with a
width and height above 0. --require PAGE=MARKDOWN (e.g. chapter07.html=07_optimization/README.md)
also demands that each image the Markdown file links is among PAGE's loaded figures. Exit 0
if all render, 1 if not, 77 (skipped) where no Chromium is installed.
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
FIGURE = re.compile(r'<img [^>]*src="(?!doxygen\.svg)|<object type="image/svg\+xml"')

HARNESS = """<!DOCTYPE html>
<html><body><pre id="result">pending</pre><script>
const pages = %s;
const found = [];
function inspect(page, doc) {
  for (const img of doc.querySelectorAll("img")) {
    const src = img.getAttribute("src");
    if (src === "doxygen.svg") continue;  // Doxygen's own footer logo
    found.push({page: page, src: src, ok: img.complete && img.naturalWidth > 0,
                size: img.naturalWidth + "x" + img.naturalHeight});
  }
  for (const obj of doc.querySelectorAll('object[type="image/svg+xml"]')) {
    let svg = null;
    try { svg = obj.contentDocument && obj.contentDocument.documentElement; } catch (e) {}
    const box = svg && svg.getBoundingClientRect ? svg.getBoundingClientRect() : null;
    const shown = obj.getBoundingClientRect();
    found.push({page: page, src: obj.getAttribute("data"),
                ok: !!svg && svg.tagName.toLowerCase() === "svg" && box.width > 0 && box.height > 0 && shown.width > 0,
                size: box ? Math.round(box.width) + "x" + Math.round(box.height) : "none"});
  }
}
function next(i) {
  if (i === pages.length) {
    document.getElementById("result").textContent = "RESULT " + JSON.stringify(found);
    return;
  }
  const frame = document.createElement("iframe");
  frame.style.width = "1280px";
  frame.style.height = "1000px";
  frame.onload = () => setTimeout(() => { inspect(pages[i], frame.contentDocument); frame.remove(); next(i + 1); }, 200);
  frame.src = pages[i];
  document.body.appendChild(frame);
}
next(0);
</script></body></html>
"""


def markdown_images(path):
    """The local images a Markdown file links, as build_pages.py names them on the site."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    targets = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", text) + re.findall(r'<img [^>]*src="([^"]+)"', text)
    folder = path.parent
    names = []
    for target in targets:
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue
        names.append(str((folder / target).resolve()))
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("--require", action="append", default=[], metavar="PAGE=MARKDOWN")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--chromium")
    args = parser.parse_args()

    binary = args.chromium or next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                                    if shutil.which(n)), None)
    if not binary:
        print("check_figures: skipped: no Chromium found (Debian: apt-get install chromium)")
        return SKIPPED
    html = args.html.resolve()
    pages = sorted(p.name for p in html.glob("*.html") if FIGURE.search(p.read_text(encoding="utf-8")))
    if not pages:
        print("check_figures: no page in %s shows a figure: build the docs first (cmake --build build --target docs)" % html)
        return 1

    harness = html / "check_figures_harness.html"
    harness.write_text(HARNESS % json.dumps(pages), encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory() as profile:
            run = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                  "--allow-file-access-from-files", "--no-first-run", "--user-data-dir=" + profile,
                                  "--virtual-time-budget=%d" % (3000 * len(pages)), "--dump-dom", harness.as_uri()],
                                 capture_output=True, text=True, timeout=300)
    finally:
        harness.unlink()
    result = re.search(r"RESULT (\[.*?\])</pre>", run.stdout, re.S)
    if not result:
        print("check_figures: the harness page did not finish (chromium exit %d): %s"
              % (run.returncode, run.stderr.strip()[-500:]))
        return 1
    found = json.loads(result.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))

    problems = ["%s: %s does not render (%s)" % (f["page"], f["src"], f["size"]) for f in found if not f["ok"]]
    for requirement in args.require:
        page, _, markdown = requirement.partition("=")
        shown = {f["src"] for f in found if f["page"] == page and f["ok"]}
        for image in markdown_images(args.repo / markdown):
            flat = str(Path(image).relative_to(args.repo.resolve())).replace("/", "_")
            if flat not in shown:
                problems.append("%s: %s's figure %s is not shown" % (page, markdown, flat))
    for problem in problems:
        print("check_figures: " + problem)
    print("check_figures: %s, %d figures on %d pages" % ("FAILED" if problems else "passed", len(found), len(pages)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
