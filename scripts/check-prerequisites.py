#!/usr/bin/env python3
"""Checks that the README's prerequisites are exactly what CI installs.

CI (.ci/run) starts from a bare machine, so its package lists are the tested truth: a
newcomer who installs what the README says must get the same tests, not 71 skipped ones.
The README's install commands follow a `<!-- prerequisites -->` comment; .ci/run keeps its
lists in the bash arrays `apt_packages` and `pip_packages`.

Usage: scripts/check-prerequisites.py [README.md] [.ci/run]    Exit status 1 on a difference.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def ci_lists(script):
    """{'apt': set, 'pip': set} from the arrays apt_packages=(...) and pip_packages=(...)."""
    found = {}
    for kind in ("apt", "pip"):
        match = re.search(rf"^{kind}_packages=\(([^)]*)\)", script, re.M)
        if not match:
            raise SystemExit(f".ci/run has no {kind}_packages=(...) array")
        found[kind] = set(match.group(1).split())
    return found


def readme_lists(readme):
    """{'apt': set, 'pip': set} from the install commands in the block after the marker."""
    _, marker, rest = readme.partition("<!-- prerequisites -->")
    if not marker:
        raise SystemExit("README.md has no <!-- prerequisites --> marker")
    block = re.search(r"```(?:bash|sh)\n(.*?)```", rest, re.S)
    if not block:
        raise SystemExit("no ```bash block follows the <!-- prerequisites --> marker")
    found = {"apt": set(), "pip": set()}
    for line in block.group(1).replace("\\\n", " ").splitlines():
        words = line.split("#")[0].split()
        if "apt-get" in words and "install" in words:
            found["apt"] |= {w for w in words[words.index("install") + 1:] if not w.startswith("-")}
        elif "pip" in words and "install" in words:
            found["pip"] |= {w for w in words[words.index("install") + 1:] if not w.startswith("-")}
    return found


def main():
    readme = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "README.md"
    script = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / ".ci" / "run"
    want, have = ci_lists(script.read_text()), readme_lists(readme.read_text())
    ok = True
    for kind in ("apt", "pip"):
        if missing := sorted(want[kind] - have[kind]):
            print(f"README.md does not list what CI installs ({kind}): {' '.join(missing)}")
            ok = False
        if extra := sorted(have[kind] - want[kind]):
            print(f"README.md lists what CI does not install ({kind}): {' '.join(extra)}")
            ok = False
    if ok:
        print(f"prerequisites: README.md and .ci/run agree "
              f"({len(want['apt'])} system packages, {len(want['pip'])} Python packages)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
