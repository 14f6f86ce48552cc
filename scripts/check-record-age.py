#!/usr/bin/env python3
"""Which chapters' code changed after the GPU record their pages quote, and do the pages say so?

Every figure in the pages comes from docs/results/data/, each record made at one commit. CI has no
GPU and cannot record again, so a chapter whose code (any file in its folder but its pages and
figures) changed after one of its records is reported here, with the commits since. The check fails
only where a chapter's pages (any .md in its folder) do not say so, by a marker beside the sentence
that tells the reader:

    <!-- code-newer-than-record: 21ef4a8 -->The figures below come from commit 21ef4a8; ...

and where a marker names a record commit that is no longer older than the code (a note left behind
after a new record). Exit 0: every page tells the truth; 1: one does not; 77: this copy has no git
history back to a record's commit (not a clone, or a shallow one), so nothing can be compared.

    scripts/check-record-age.py [--self-test]
"""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"<!--\s*code-newer-than-record:\s*([0-9a-f]{7,40})\s*-->")
NOT_CODE = (":(exclude)*.md", ":(exclude)*.svg", ":(exclude)*.png")  # pages and figures


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def full_hash(commit: str) -> str | None:
    try:
        return git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    except subprocess.CalledProcessError:
        return None


def pages(chapter: str) -> dict[Path, str]:
    return {page: page.read_text() for page in sorted((ROOT / chapter).rglob("*.md"))}


def records_by_chapter() -> dict[str, dict[str, list[str]]]:
    """{chapter folder: {record commit: [record names]}}: the records of docs/results/data/ that the
    chapter's pages quote (a GPU-OUTPUT, GPU-TABLE or GPU-EXCERPT block, a fig marker, or a link)."""
    chapters: dict[str, dict[str, list[str]]] = {}
    texts = {p.name: "\n".join(pages(p.name).values()) for p in ROOT.glob("[0-9][0-9]_*") if p.is_dir()}
    for path in sorted((ROOT / "docs/results/data").glob("*.json")):
        commit = (json.loads(path.read_text()).get("run") or {}).get("commit")
        quoted = re.compile(rf"(GPU-[A-Z]+: |fig:|results/(data/)?){re.escape(path.stem)}\b")
        for chapter, text in texts.items():
            if commit and quoted.search(text):
                chapters.setdefault(chapter, {}).setdefault(commit, []).append(path.stem)
    return chapters


def commits_since(commit: str, chapter: str) -> list[str]:
    """The commits after `commit` that changed the chapter's code, newest first, one line each."""
    log = git("log", "--format=%h %s", f"{commit}..HEAD", "--", chapter, *NOT_CODE)
    return [line[:110] for line in log.splitlines()]


def said_in_pages(chapter: str) -> set[str]:
    """The full hash of each commit that a marker in the chapter's pages names."""
    return {full_hash(short) or short for text in pages(chapter).values() for short in MARKER.findall(text)}


def verdicts(stale: dict[str, set[str]], said: dict[str, set[str]]) -> list[str]:
    """The problems: a stale record no page names, and a marker naming a record that is not stale."""
    problems = []
    for chapter in sorted(set(stale) | set(said)):
        for commit in sorted(stale.get(chapter, set()) - said.get(chapter, set())):
            problems.append(f"{chapter}: its code changed after the record of {commit[:7]}, and no page says so")
        for commit in sorted(said.get(chapter, set()) - stale.get(chapter, set())):
            problems.append(f"{chapter}: a page says its code is newer than the record of {commit[:7]}, "
                            "but no record of that commit is older than the code: remove the note")
    return problems


def self_test() -> int:
    cases = [({"03": {"a"}}, {"03": {"a"}}, 0), ({"03": {"a"}}, {}, 1), ({}, {"06": {"b"}}, 1),
             ({"03": {"a", "b"}}, {"03": {"a"}}, 1), ({}, {}, 0)]
    for stale, said, want in cases:
        got = len(verdicts(stale, said))
        if got != want:
            print(f"self-test FAILED: stale {stale}, said {said}: {got} problems, expected {want}")
            return 1
    print(f"self-test: {len(cases)} cases, each verdict as expected (a missing note and a stale one fail)")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    try:
        git("rev-parse", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        print("record age: not a git clone, so no commit can be compared: skipping (exit 77)")
        return 77
    stale: dict[str, set[str]] = {}
    said: dict[str, set[str]] = {}
    for chapter, records in sorted(records_by_chapter().items()):
        said[chapter] = said_in_pages(chapter)
        for commit, names in sorted(records.items()):
            full = full_hash(commit)
            if full is None:
                shallow = git("rev-parse", "--is-shallow-repository") == "true"
                print(f"record age: commit {commit} of the record ({names[0]}) is not in this clone's history"
                      f"{' (a shallow clone: clone without --depth)' if shallow else ''}: skipping (exit 77)")
                return 77
            since = commits_since(full, chapter)
            if since:
                stale.setdefault(chapter, set()).add(full)
                print(f"{chapter}: {len(since)} commit(s) changed its code after the record of {commit} "
                      f"({', '.join(names[:3])}{', ...' if len(names) > 3 else ''}); newest: {since[0]}")
    problems = verdicts(stale, said)
    for problem in problems:
        print(f"NOT said: {problem}")
    if problems:
        print(f"record age: {len(problems)} problem(s). Beside the sentence that tells the reader, add "
              "<!-- code-newer-than-record: COMMIT --> to one of the chapter's pages (or record again).")
        return 1
    print(f"record age: {len(stale)} chapter(s) with code newer than a record, each said in its pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
