#!/usr/bin/env python3
"""Writes the GPU check's record from CTest's JUnit files and the programs' SUMMARY lines.

scripts/gpu-check.sh runs three CTest steps (tests, sanitize, benchmark), each writing
<logs>/<step>.xml, and the benchmark runs leave <results>/<name>.md. This script turns
them into <results>/README.md (the record: where, when, every verdict) and
<results>/headlines.md (each benchmark's checks and goals, read from its SUMMARY line).
It changes no verdict: a test's status is CTest's, and CTest's is the program's exit code.

Usage: scripts/write-record.py --logs DIR --results DIR
Exit status: 0 when every step that ran passed and nothing was skipped, 1 otherwise.
"""
import argparse
import json
import pathlib
import re
import shlex
import shutil
import sys
import xml.etree.ElementTree as ET

STEPS = ("tests", "sanitize", "benchmark")


def read_about(logs):
    """The KEY=value lines that gpu-check.sh wrote (bash %q quoting)."""
    about = {}
    for line in (logs / "about.env").read_text().splitlines():
        key, _, value = line.partition("=")
        about[key] = " ".join(shlex.split(value))
    return about


def read_junit(path):
    """[(name, status, seconds, output)] with status 'passed', 'failed' or 'skipped'."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = {"run": "passed", "fail": "failed"}.get(case.get("status"), "skipped")
        cases.append((case.get("name"), status, float(case.get("time") or 0),
                      case.findtext("system-out") or ""))
    return cases


def summaries(output):
    """Every SUMMARY line's JSON in a program's output (an ncu script runs several programs)."""
    found = []
    for line in output.splitlines():
        if line.startswith("SUMMARY {"):
            try:
                found.append(json.loads(line[len("SUMMARY "):]))
            except json.JSONDecodeError:
                pass
    return found


def recorded_output(record):
    """The output block of a benchmark record <results>/<name>.md."""
    text = record.read_text()
    _, _, rest = text.partition("```text\n")
    return rest.rpartition("```")[0]


def plural(count, word):
    return f"{count} {word}{'' if count == 1 else 's'}"


def headline(name, found):
    """A benchmark's headline: its checks, then one line per goal."""
    checks = sum(s.get("checks", 0) for s in found)
    failed = sum(s.get("failed", 0) for s in found)
    exact = sum(s.get("exact", 0) for s in found)
    verdict = "all passed" if failed == 0 else f"{failed} FAILED"
    programs = f" ({len(found)} programs)" if len(found) > 1 else ""
    lines = [f"{name}: {plural(checks, 'check')}{programs}, {exact} of them exact (Max error: 0), {verdict}"]
    for s in found:
        for goal in s.get("goals", []):
            value = goal.get("value")
            shown = "no value" if value is None else f"{value:.1f}{goal.get('unit', '')}"
            lines.append(f"  Goal: {goal.get('goal')} >= {goal.get('at_least'):g}{goal.get('unit', '')}: "
                         f"{shown}, {'met' if goal.get('met') else 'NOT met'}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=pathlib.Path, required=True)
    parser.add_argument("--results", type=pathlib.Path, required=True)
    args = parser.parse_args()
    about = read_about(args.logs)
    run_line = (f"{about['GPU_NAME']}, driver {about['DRIVER']}, CUDA {about['NVCC_VERSION']}; "
                f"{about['STARTED']}; commit {about['COMMIT']}.")
    steps = {step: read_junit(args.logs / f"{step}.xml")
             for step in STEPS if (args.logs / f"{step}.xml").exists()}
    problems = []
    for step, cases in steps.items():
        for name, status, _, _ in cases:
            if status != "passed":  # a skip on a GPU machine hides a problem too
                problems.append(f"{step}: {name} {status}")

    out = ["# Latest GPU check", "", "Written by `scripts/gpu-check.sh`; do not edit by hand.", "",
           "| | |", "| --- | --- |",
           f"| device | {about['GPU_NAME']} (compute capability {about['COMPUTE_CAP']}) |",
           f"| driver | {about['DRIVER']} (CUDA {about['DRIVER_CUDA']}) |",
           f"| toolkit | nvcc {about['NVCC_VERSION']}, {about['CMAKE_VERSION']} |",
           f"| date | {about['STARTED']} |", f"| commit | {about['COMMIT']} |"]
    for step, cases in steps.items():
        passed = sum(1 for c in cases if c[1] == "passed")
        out.append(f"| ctest, {step} | {passed} of {len(cases)} passed |")
    if (args.logs / "tests.log").exists():
        shutil.copy(args.logs / "tests.log", args.results / "ctest.log")
        out.append("| ctest log | [ctest.log](ctest.log) |")
    out.append("")

    if "sanitize" in steps:
        out += ["## compute-sanitizer", "", "| program | tool | summary | verdict |",
                "| --- | --- | --- | --- |"]
        for name, status, _, output in steps["sanitize"]:
            program, _, tool = name.partition(".sanitize.")
            lines = re.findall(r"=+ ((?:ERROR|RACECHECK) SUMMARY.*)", output)
            verdict = "clean" if status == "passed" else status.upper()
            if not lines:
                # Every tool ends with its summary: without one the output was cut short.
                problems.append(f"{name}: no compute-sanitizer summary in its output")
                verdict = "NO SUMMARY"
            out.append(f"| {program} | {tool} | {lines[-1] if lines else 'none'} | {verdict} |")
        out.append("")

    heads = []
    if "benchmark" in steps:
        out += ["## Benchmarks", "", "| output | time | verdict | checks |", "| --- | --- | --- | --- |"]
        for name, status, seconds, _ in steps["benchmark"]:
            name = name.removesuffix(".benchmark")
            record = args.results / f"{name}.md"
            found = summaries(recorded_output(record)) if record.exists() else []
            checks = (f"{plural(sum(s.get('checks', 0) for s in found), 'check')}, "
                      f"{sum(s.get('failed', 0) for s in found)} failed") if found else "no SUMMARY line"
            out.append(f"| [{name}]({name}.md) | {seconds:.0f} s | {status} | {checks} |")
            if found:
                heads += headline(name, found)
        out.append("")

    out += ["## Verdict", ""]
    out += ["Every step passed."] if not problems else ["Problems:", ""] + [f"- {p}" for p in problems]
    (args.results / "README.md").write_text("\n".join(out) + "\n")

    if heads:
        (args.results / "headlines.md").write_text("\n".join(
            ["# headlines", "", run_line,
             "Command: `scripts/gpu-check.sh` (the SUMMARY line of every benchmark output)", "",
             "```text", *heads, "```", ""]))
    print(f"record written to {args.results}" + (f"; problems: {len(problems)}" if problems else ""))
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
