#!/usr/bin/env python3
"""Checks that every install line in the course says the same thing.

The course keeps one list of each kind: apt-packages.txt (system packages) and
requirements.txt (Python packages). CI (.ci/run) installs exactly those files on a bare
machine, so they are the tested truth. A page that shows install commands marks them with
a `<!-- prerequisites -->` comment before a ```bash block; its `apt-get install` line must
name exactly the packages of apt-packages.txt, and its pip line must install
`-r requirements.txt` (no package named beside it). Every page that names the range of CUDA
toolkits the course supports names the same range.

Each of those pages is followed line by line on a fresh machine, so its block must also run
as written: `apt-get update` before the install (a fresh machine has no package lists), and
`-y` on the install (a script cannot answer its question).

Usage: scripts/check-prerequisites.py [repository root]    Exit status 1 on a difference.
"""
import pathlib
import sys

PAGES_WITH_INSTALL_LINES = ["README.md", "docs/environment.md"]
PAGES_WITH_TOOLKIT_RANGE = ["README.md", "docs/index.md", "docs/environment.md"]
TOOLKIT_RANGE = "11.8 to 13.x"


def listed(path):
    """The package names in a list file: one a line, '#' starts a comment."""
    names = []
    for line in path.read_text().splitlines():
        names += line.split("#")[0].split()
    return names


def install_blocks(text):
    """Each ```bash block that follows a <!-- prerequisites --> marker, as a list of lines."""
    blocks = []
    for part in text.split("<!-- prerequisites -->")[1:]:
        part = part.lstrip()
        opening = next((f for f in ("```bash\n", "```sh\n") if part.startswith(f)), None)
        if opening is None or "```" not in part[len(opening):]:
            blocks.append(None)
            continue
        block = part[len(opening):part.index("```", len(opening))]
        blocks.append(block.replace("\\\n", " ").splitlines())
    return blocks


def toolkit_ranges(text):
    """What follows each "CUDA toolkit" that names a range: "11.8 to 13.x", "12 or 13", ..."""
    found = []
    for part in text.split("CUDA toolkit")[1:]:
        words = part.lstrip(",( ").replace("(", " ").replace(")", " ").split()[:3]
        if len(words) == 3 and words[0][:1].isdigit() and words[1] in ("to", "or"):
            found.append(" ".join(words).rstrip(".,;:"))
    return found


def check_block(page, lines, apt):
    """Problems with one marked block."""
    problems, saw_apt, saw_pip, saw_update = [], False, False, False
    for line in lines:
        words = line.split("#")[0].split()
        if "apt-get" in words and "update" in words:
            saw_update = True
        if "apt-get" in words and "install" in words:
            saw_apt = True
            if not saw_update:
                problems.append(f"{page}: its apt-get install line has no `apt-get update` before it")
            if not {"-y", "--yes", "--assume-yes"} & set(words):
                problems.append(f"{page}: its apt-get install line lacks -y, so a script stops at its question")
            names = [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
            if missing := [n for n in apt if n not in names]:
                problems.append(f"{page}: its apt-get line lacks {' '.join(missing)} (apt-packages.txt)")
            if extra := [n for n in names if n not in apt]:
                problems.append(f"{page}: its apt-get line adds {' '.join(extra)}, which apt-packages.txt does not list")
        elif "pip" in words and "install" in words:
            saw_pip = True
            rest = [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
            if rest != ["requirements.txt"] or "-r" not in words:
                problems.append(f"{page}: its pip line must be `pip install -r requirements.txt`, not: {line.strip()}")
    if not saw_apt:
        problems.append(f"{page}: the block after <!-- prerequisites --> has no apt-get install line")
    if not saw_pip:
        problems.append(f"{page}: the block after <!-- prerequisites --> has no pip install line")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    apt = listed(root / "apt-packages.txt")
    problems = []

    ci = (root / ".ci" / "run").read_text()
    for source in ("apt-packages.txt", "requirements.txt"):
        if source not in ci:
            problems.append(f".ci/run does not install from {source}")

    for page in PAGES_WITH_INSTALL_LINES:
        blocks = install_blocks((root / page).read_text())
        if not blocks:
            problems.append(f"{page}: no <!-- prerequisites --> marker")
        for lines in blocks:
            if lines is None:
                problems.append(f"{page}: no ```bash block right after <!-- prerequisites -->")
            else:
                problems += check_block(page, lines, apt)

    for page in PAGES_WITH_TOOLKIT_RANGE:
        found = toolkit_ranges((root / page).read_text())
        if not found:
            problems.append(f"{page}: does not say which CUDA toolkits the course supports ({TOOLKIT_RANGE})")
        problems += [f"{page}: says CUDA toolkit {m}; the course supports {TOOLKIT_RANGE}"
                     for m in found if m != TOOLKIT_RANGE]

    for problem in problems:
        print(problem)
    if not problems:
        print(f"prerequisites: {', '.join(PAGES_WITH_INSTALL_LINES)} and .ci/run install the same "
              f"{len(apt)} system packages and requirements.txt; every page says CUDA toolkit {TOOLKIT_RANGE}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
