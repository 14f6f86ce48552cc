#!/usr/bin/env python3
"""Builds a chapter's main program with the one nvcc command its README gives.

A chapter README marks its standalone build (no CMake, run from the chapter's folder)
with a comment, and the first ```bash block after it holds the command:

    <!-- standalone-build -->
    ```bash
    nvcc -std=c++17 -I../common/include -arch=native -o add add.cu
    ./add
    ```

This script runs the block's first `nvcc` line (with any `\\` continuations, up to a
`&&`, `;` or `|`) as a reader would, from the chapter's folder, with two changes:
`-arch=native` becomes an explicit architecture (native asks the GPU in the machine,
and a build machine may have none), and the program is written to a temporary folder,
so the source tree stays clean. It passes if nvcc exits 0 and the program appears, and
if the file the README's command writes is one git ignores (a reader who follows the README
must not be left with an untracked file) and is not the name of a folder already there.

Usage: scripts/check-readme-builds.py [--nvcc PATH] [--arch sm_90] [README.md ...]
       (default: every NN_name/README.md)
Exit status: 0 every marked README built; 1 one did not; 2 bad usage;
77 none of the READMEs has the marker (CTest: skipped).
"""
import argparse
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARKER = "<!-- standalone-build -->"
SKIPPED = 77


def standalone_command(readme):
    """The nvcc command under the README's marker as a list of words, or None if unmarked."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == MARKER)
    except StopIteration:
        return None
    fence = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == "```bash"), None)
    if fence is None:
        raise ValueError(f"no ```bash block after {MARKER}")
    block = []
    for line in lines[fence + 1:]:
        if line.strip().startswith("```"):
            break
        block.append(line)
    text = "\n".join(block).replace("\\\n", " ")  # join continuation lines
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "nvcc":
            for stop in ("&&", "||", ";", "|"):
                if stop in words:
                    words = words[: words.index(stop)]
            return words
    raise ValueError(f"the ```bash block after {MARKER} has no line starting with nvcc")


def adapted(words, nvcc, arch, out_dir):
    """The README's words with our nvcc, an explicit architecture and the output in out_dir."""
    result, output = [nvcc], None
    rest = iter(words[1:])
    for word in rest:
        if word in ("-arch=native", "--gpu-architecture=native"):
            word = f"-arch={arch}"
        elif word in ("-arch", "--gpu-architecture"):
            value = next(rest, "")
            result += [word, arch if value == "native" else value]
            continue
        elif word in ("-o", "--output-file"):
            output = out_dir / pathlib.Path(next(rest, "")).name
            result += ["-o", str(output)]
            continue
        elif word.startswith("--output-file="):
            output = out_dir / pathlib.Path(word.split("=", 1)[1]).name
            result += ["-o", str(output)]
            continue
        result.append(word)
    if output is None:
        raise ValueError("the nvcc command names no output file (-o NAME)")
    return result, output


def output_problem(chapter, words):
    """Why the README's own output file would trouble a reader's checkout, or None."""
    name = next((words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--output-file")), None)
    name = name or next((w.split("=", 1)[1] for w in words if w.startswith("--output-file=")), None)
    target = chapter / name
    if target.is_dir():
        return f"{name} is a folder in {chapter.name}/: nvcc cannot write the program there"
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", str(target)])
    if ignored.returncode == 1:
        return f"{chapter.name}/{name} is not git-ignored: the build leaves an untracked file"
    return None  # ignored, or no git here to ask


def check(readme, nvcc, arch):
    """Builds one README's program; returns True if it built, None if the README has no marker."""
    chapter = readme.resolve().parent
    words = standalone_command(readme)
    if words is None:
        return None
    with tempfile.TemporaryDirectory(prefix="readme-build-") as temp:
        command, program = adapted(words, nvcc, arch, pathlib.Path(temp))
        print(f"{chapter.name}: README:   {shlex.join(words)}")
        print(f"{chapter.name}: running:  {shlex.join(command)}   (in {chapter})", flush=True)
        begin = time.monotonic()
        completed = subprocess.run(command, cwd=chapter, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        seconds = time.monotonic() - begin
        if completed.stdout.strip():
            print(completed.stdout.rstrip())
        built = completed.returncode == 0 and program.is_file()
        verdict = "built" if built else f"FAILED (exit status {completed.returncode})"
        if problem := output_problem(chapter, words):
            built, verdict = False, f"FAILED: {problem}"
        print(f"{chapter.name}: {verdict}: {program.name} in {seconds:.0f} s\n", flush=True)
        return built


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvcc", default="nvcc", help="the nvcc to build with (default: nvcc on PATH)")
    parser.add_argument("--arch", default="sm_90", help="architecture for -arch=native (default: sm_90)")
    parser.add_argument("readmes", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    readmes = args.readmes or sorted(ROOT.glob("[0-9][0-9]_*/README.md"))
    results = {}
    for readme in readmes:
        if not readme.is_file():
            parser.error(f"{readme}: no such file")
        try:
            results[readme] = check(readme, args.nvcc, args.arch)
        except (ValueError, OSError) as err:
            print(f"{readme}: {err}")
            results[readme] = False
    unmarked = [r for r, built in results.items() if built is None]
    for readme in unmarked:
        print(f"{readme}: no {MARKER} marker: nothing to build")
    marked = {r: built for r, built in results.items() if built is not None}
    if not marked:
        return SKIPPED
    failed = [r for r, built in marked.items() if not built]
    print(f"{len(marked) - len(failed)} of {len(marked)} standalone builds succeeded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
