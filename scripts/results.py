#!/usr/bin/env python3
"""The GPU check's results: written once as data, every page rendered from it.

Each recorded run is data in docs/results/data/:
  <name>.json          what ran (command, exit status, seconds), where and when (the run's
                       device, driver, toolkit, commit, date), and the SUMMARY JSON it printed
  <name>.output.txt    its output, as the program printed it
A check's verdicts (CTest's JUnit files, read once) are data too: record.json for the check of
this build, <record>.json for a build made elsewhere (scripts/gpu-check.sh --prebuilt).

From that data this module renders every page of docs/results/ (<name>.md for each run,
README.md for the check, headlines.md), and it is what scripts/sync-results.py and
07_optimization/plot_results.py read. Nothing here reads a page back.

Usage:
  results.py about [--commit C]                        the run's metadata, as JSON on stdout
  results.py record <name> [--results DIR] -- <command...>
                                                       runs one command, prints its output,
                                                       keeps it as data (exit 77: an earlier
                                                       record is kept; with none, the skip is)
                                                       and renders its page; exits with its status
  results.py write --logs DIR [--results DIR] [--record NAME]
                                                       the check's verdicts from CTest's JUnit files
  results.py render [--results DIR] [--check]          every page from the data
Environment: TUTORIAL_RUN_INFO=<run.json> (from `about`) says where and when for `record`.
"""
import argparse
import datetime
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
STEPS = ("tests", "sanitize", "benchmark")


def data_dir(results):
    return pathlib.Path(results) / "data"


# --- The run: where and when ------------------------------------------------------------------

def _first_line(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.strip().splitlines()[0] if out.strip() else "unknown"


def run_info(commit=None, nvcc=None):
    """Device, driver, toolkit, commit and date of a run on this machine. nvcc: the version
    of the nvcc that made a build carried here (scripts/gpu-check.sh --prebuilt)."""
    def gpu(field):
        return _first_line(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"])

    smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True).stdout if gpu("name") != "unknown" else ""
    driver_cuda = next((line.split("CUDA Version:")[1].split()[0] for line in smi.splitlines()
                        if "CUDA Version:" in line), "unknown")
    here = next((line for line in _nvcc_version().splitlines() if "release" in line), "")
    # "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0 (V13.0.88)"
    release, _, build = here.partition("release ")[2].partition(", ")
    if commit is None:
        commit = _first_line(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
        if subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True,
                          text=True).stdout.strip():
            commit += " (with uncommitted changes)"
    gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ")
    return {"gpu": gpu("name"), "gpus": max(gpus, 1), "compute_cap": gpu("compute_cap"),
            "driver": gpu("driver_version"),
            "driver_cuda": driver_cuda,
            "nvcc": f"{nvcc} (the build's)" if nvcc else f"{release} ({build})" if release else "unknown",
            "cmake": _first_line(["cmake", "--version"]),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit}


def _nvcc_version():
    try:
        return subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def run_line(run):
    """The sentence that names a run, under every page and figure drawn from it."""
    if "gpu" not in run:
        return f"Run by hand on {run['date']}."
    return f"{device(run)}, driver {run['driver']}, CUDA {run['nvcc']}; {run['date']}; commit {run['commit']}."


def device(run):
    """The machine's GPUs: "NVIDIA H100 80GB HBM3", or "2 x NVIDIA H100 80GB HBM3" on a machine of
    several (a one-GPU program ran on one of them)."""
    count = run.get("gpus", 1)
    return f"{count} × {run['gpu']}" if count > 1 else run["gpu"]


# --- One recorded run ---------------------------------------------------------------------------

def summaries(output):
    """Every SUMMARY line's JSON in an output (a script may run several programs)."""
    found = []
    for line in output.splitlines():
        if line.startswith("SUMMARY {"):
            try:
                found.append(json.loads(line[len("SUMMARY "):]))
            except json.JSONDecodeError:
                pass
    return found


def save(results, name, command, status, seconds, output, run):
    """Keeps one run as data: <name>.json and <name>.output.txt."""
    folder = data_dir(results)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.output.txt").write_text(output.rstrip("\n") + "\n")
    record = {"kind": "run", "name": name, "command": command, "exit_status": status,
              "seconds": seconds, "run": run, "summaries": summaries(output)}
    (folder / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")


def load(name, results=RESULTS):
    """One recorded run: its JSON, with its output under "output". "headlines" is the check's
    headlines, rendered from its record like a run's output, for pages that quote them."""
    folder = data_dir(results)
    path = folder / f"{name}.json"
    if name == "headlines" and (folder / "record.json").exists():
        record = json.loads((folder / "record.json").read_text())
        return {"name": name, "run": record["run"], "summaries": [],
                "output": "\n".join(headline_lines(record, results))}
    if not path.exists():
        raise LookupError(f"no recorded run '{name}' ({os.path.relpath(path, ROOT)} is missing)")
    found = json.loads(path.read_text())
    found["output"] = (folder / f"{name}.output.txt").read_text().rstrip("\n")
    return found


def summary(found):
    """The last SUMMARY of a recorded run: the program's own, where a script ran several."""
    if not found["summaries"]:
        raise LookupError(f"{found['name']} printed no SUMMARY line")
    return found["summaries"][-1]


def lesson_lines(output):
    """The output without its SUMMARY lines, which are for machines."""
    return [line for line in output.splitlines() if not line.startswith("SUMMARY {")]


def tables(output):
    """The tables a program printed (Markdown tables in its output), each a dict:
    title (the heading printed above it), header, rows (lists of cells), lines (as printed)."""
    found, lines, heading = [], output.splitlines(), ""
    i = 0
    while i < len(lines):
        if lines[i].startswith("#"):
            heading = lines[i].lstrip("#").strip()
        if not lines[i].startswith("|"):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines[start:i]]
        body = [row for row in rows[1:] if not all(set(cell) <= set("-:") for cell in row)]
        found.append({"title": heading, "header": rows[0], "rows": body, "lines": lines[start:i]})
    return found


def number(cell):
    """The number a table cell starts with: "96.0%" -> 96.0, "2,770" -> 2770.0; None if none."""
    word = cell.split()[0] if cell.split() else ""
    try:
        return float(word.rstrip("%x").replace(",", ""))
    except ValueError:
        return None


def fence_for(text):
    """A code fence longer than any run of backticks that starts a line of \\p text, so that an
    output which prints Markdown fences itself (topology.sh's sections) stays one block."""
    runs = re.findall(r"^\s*(`{3,})", text, re.M)
    return "`" * max([3] + [len(run) + 1 for run in runs])


def render_run(found):
    command = found["command"]
    fence = fence_for(found["output"])
    return "\n".join([f"# {found['name']}", "", run_line(found["run"]),
                      f"Command: `{command}` (exit status {found['exit_status']}, {found['seconds']} s)",
                      "", fence + "text", found["output"], fence, ""])


def record_command(name, command, results):
    """Runs \\p command as benchmark \\p name: prints its output, keeps it, renders its page."""
    info = os.environ.get("TUTORIAL_RUN_INFO")
    run = json.loads(pathlib.Path(info).read_text()) if info else {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    begin = time.monotonic()
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace")
    except OSError as err:
        print(f"results.py: cannot run {command[0]}: {err.strerror}")
        return 127
    seconds = round(time.monotonic() - begin)
    print(done.stdout, end="")
    if done.returncode == 77 and (data_dir(results) / f"{name}.json").exists():
        return 77  # no usable GPU (or tool): nothing measured, keep the last record
    shown = " ".join(shlex.quote(word) for word in command).replace(f"{ROOT}/", "")
    save(results, name, shown, done.returncode, seconds, done.stdout, run)
    (pathlib.Path(results) / f"{name}.md").write_text(render_run(load(name, results)))
    return done.returncode


# --- A check's verdicts -------------------------------------------------------------------------

def read_junit(path):
    """[{name, status, seconds, output}] with status 'passed', 'failed' or 'skipped'."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = {"run": "passed", "fail": "failed"}.get(case.get("status"), "skipped")
        cases.append({"name": case.get("name"), "status": status,
                      "seconds": float(case.get("time") or 0), "output": case.findtext("system-out") or ""})
    return cases


def sanitizer_summary(output):
    """A compute-sanitizer run's last summary line ("ERROR SUMMARY: 0 errors"), or None."""
    lines = [line.lstrip("= ").strip() for line in output.splitlines()
             if "ERROR SUMMARY" in line or "RACECHECK SUMMARY" in line]
    return lines[-1] if lines else None


def write_record(logs, results, name="record", extra=None):
    """data/<name>.json from <logs>/run.json and <logs>/<step>.xml (+ <logs>/extra.json)."""
    logs = pathlib.Path(logs)
    record = {"kind": "record", "page": "README.md" if name == "record" else f"{name}.md",
              "run": json.loads((logs / "run.json").read_text()), "steps": {}}
    for step in STEPS:
        # A step run in parts (scripts/gpu-check.sh with GPU_CHECK_PART) left <step>-<part>.xml files.
        parts = sorted(logs.glob(f"{step}.xml")) + sorted(logs.glob(f"{step}-*.xml"))
        if parts:
            cases = [case for part in parts for case in read_junit(part)]
            # In chapter order, whichever part ran a case; within a chapter, as CTest ran them.
            cases.sort(key=lambda case: case["name"][:2] if case["name"][:2].isdigit() else "~")
            for case in cases:
                if step == "sanitize":
                    case["summary"] = sanitizer_summary(case["output"])
                if step == "benchmark" and case["status"] == "skipped":
                    keep_skipped_run(results, case, record["run"])
                del case["output"]
            record["steps"][step] = cases
    test_logs = sorted(logs.glob("tests.log")) + sorted(logs.glob("tests-*.log"))
    if test_logs and name == "record":
        (pathlib.Path(results) / "ctest.log").write_text("".join(log.read_text() for log in test_logs))
        record["ctest_log"] = "ctest.log"
    record.update(extra or {})
    data_dir(results).mkdir(parents=True, exist_ok=True)
    (data_dir(results) / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    return record


def keep_skipped_run(results, case, run):
    """A benchmark that skipped (exit 77) with no earlier record: its output says why, so it is
    kept as the run's data (exit status 77), from CTest's JUnit file, which holds that output."""
    name = case["name"].removesuffix(".benchmark")
    if (data_dir(results) / f"{name}.json").exists() or not case["output"].strip():
        return
    command = f"ctest -R '^{name}\\.benchmark$'  (skipped: the reason is in its output)"
    save(results, name, command, 77, round(case["seconds"]), case["output"], run)


def plural(count, word):
    return f"{count} {word}{'' if count == 1 else 's'}"


def problems(record):
    """What keeps a check from passing: a failed or skipped test (a skip on a GPU machine hides
    a problem too), and a sanitizer run whose output ends without its summary (cut short)."""
    found = []
    for step, cases in record["steps"].items():
        for case in cases:
            if case["status"] != "passed":
                found.append(f"{step}: {case['name']} {case['status']}")
            if step == "sanitize" and case.get("summary") is None:
                found.append(f"{case['name']}: no compute-sanitizer summary in its output")
    return found


def benchmark_names(record):
    return [case["name"].removesuffix(".benchmark") for case in record["steps"].get("benchmark", [])]


def render_record(record, results=RESULTS):
    run = record["run"]
    out = [f"# {record.get('title', 'Latest GPU check')}", ""]
    if record.get("intro"):
        out += [record["intro"], ""]
    out += ["Written by `scripts/gpu-check.sh`; do not edit by hand.", "", "| | |", "| --- | --- |",
            f"| device | {device(run)} (compute capability {run['compute_cap']}) |",
            f"| driver | {run['driver']} (CUDA {run['driver_cuda']}) |"]
    for key, value in record.get("build", {}).items():
        out.append(f"| {key} | {value} |")
    if "build" not in record:
        out.append(f"| toolkit | nvcc {run['nvcc']}, {run['cmake']} |")
    out += [f"| date | {run['date']} |", f"| commit | {run['commit']} |"]
    for step, cases in record["steps"].items():
        passed = sum(1 for case in cases if case["status"] == "passed")
        label = record.get("step_labels", {}).get(step, f"ctest, {step}")
        out.append(f"| {label} | {passed} of {len(cases)} passed |")
    if record.get("ctest_log"):
        out.append(f"| ctest log | [{record['ctest_log']}]({record['ctest_log']}) |")
    out.append("")

    if "sanitize" in record["steps"]:
        out += ["## compute-sanitizer", "", "| program | tool | summary | verdict |", "| --- | --- | --- | --- |"]
        for case in record["steps"]["sanitize"]:
            program, _, tool = case["name"].partition(".sanitize.")
            verdict = "clean" if case["status"] == "passed" else case["status"].upper()
            if case.get("summary") is None:
                verdict = "NO SUMMARY"
            out.append(f"| {program} | {tool} | {case.get('summary') or 'none'} | {verdict} |")
        out.append("")
    if "benchmark" in record["steps"]:
        out += ["## Benchmarks", "", "| output | time | verdict | checks |", "| --- | --- | --- | --- |"]
        for case in record["steps"]["benchmark"]:
            name = case["name"].removesuffix(".benchmark")
            found = _load_or_none(name, results)
            sums = found["summaries"] if found else []
            checks = (f"{plural(sum(s.get('checks', 0) for s in sums), 'check')}, "
                      f"{sum(s.get('failed', 0) for s in sums)} failed") if sums else "no SUMMARY line"
            if sums and run_key(found["run"]) != run_key(run):  # kept from, or recorded again in, another run
                checks += f" (in the run of {found['run'].get('date')}, commit {found['run'].get('commit')})"
            out.append(f"| [{name}]({name}.md) | {case['seconds']:.0f} s | {case['status']} | {checks} |")
        out.append("")
    if record.get("not_run"):
        out += ["## Not run here, and why", ""]
        out += [f"- `{name}`: {why}" for name, why in record["not_run"]]
        out.append("")
    if record.get("outputs"):
        out += ["## Outputs", ""]
        out += [f"- [{name}]({name}.md)" for name in record["outputs"]]
        out.append("")
    found = problems(record)
    out += ["## Verdict", ""]
    out += ["Every step passed."] if not found else ["Problems:", ""] + [f"- {p}" for p in found]
    return "\n".join(out) + "\n"


def _load_or_none(name, results):
    try:
        return load(name, results)
    except LookupError:
        return None


def headline(name, sums):
    """A benchmark's headline: its checks, then one line per goal."""
    checks = sum(s.get("checks", 0) for s in sums)
    failed = sum(s.get("failed", 0) for s in sums)
    exact = sum(s.get("exact", 0) for s in sums)
    verdict = ("passed" if checks == 1 else "all passed") if failed == 0 else f"{failed} FAILED"
    # What kind of checks they were, naming only kinds that occur (a "0 exact" read as a failure).
    if exact == checks:
        kinds = "exact, Max error: 0" if checks == 1 else "each exact, Max error: 0"
    elif exact == 0:
        kinds = "within its tolerance or condition" if checks == 1 else "each within a tolerance or a condition"
    else:
        kinds = f"{exact} exact, Max error: 0; {checks - exact} within a tolerance or a condition"
    programs = f" ({len(sums)} programs)" if len(sums) > 1 else ""
    lines = [f"{name}: {plural(checks, 'check')}{programs}, {verdict}; {kinds}"]
    for s in sums:
        for goal in s.get("goals", []):
            value = goal.get("value")
            shown = "no value" if value is None else f"{value:.1f}{goal.get('unit', '')}"
            lines.append(f"  Goal: {goal.get('goal')} >= {goal.get('at_least'):g}{goal.get('unit', '')}: "
                         f"{shown}, {'met' if goal.get('met') else 'NOT met'}")
    return lines


def run_key(run):
    return (run.get("date"), run.get("commit"), run.get("nvcc"), run.get("gpu"), run.get("gpus", 1))


def step_lines(record):
    """One line per step of the check: how many of its tests passed, and the others by name."""
    what = {"tests": "the tests", "sanitize": "the sanitizer runs", "benchmark": "the benchmarks"}
    lines = []
    for step, cases in record["steps"].items():
        passed = sum(case["status"] == "passed" for case in cases)
        line = f"run A, {what.get(step, step)}: {passed} of {len(cases)} passed"
        for status in sorted({case["status"] for case in cases} - {"passed"}):
            names = [case["name"] for case in cases if case["status"] == status]
            line += f"; {status.upper() if status == 'failed' else status}: {', '.join(names)}"
        lines.append(line)
    return lines


def headline_lines(record, results=RESULTS):
    """Every benchmark's headline, each naming the run it comes from, then a legend of the runs:
    run A is the check; a benchmark it skipped keeps its last recorded run (exit 77 keeps it), and
    one recorded again after the check (results.py record) names that run."""
    check = record["run"]
    letters = {run_key(check): "A"}
    legend = [f"run A: this check (scripts/gpu-check.sh): {run_line(check)}"]
    statuses = {case["name"].removesuffix(".benchmark"): case["status"]
                for case in record["steps"].get("benchmark", [])}
    heads = []
    for name in benchmark_names(record):
        found = _load_or_none(name, results)
        status = statuses[name]
        if not (found and found["summaries"]):  # an output without verdicts, or a skip
            if status != "passed":
                heads.append(f"{name}: {status} in run A, and no run of it with a SUMMARY line is recorded")
            continue
        run = found["run"]
        if run_key(run) not in letters:
            letter = chr(ord("A") + len(letters))
            letters[run_key(run)] = letter
            when = ("recorded again after the check" if run.get("date", "") > check.get("date", "")
                    else "an earlier run, kept because the check skipped the benchmark")
            legend.append(f"run {letter}: {when}: {run_line(run)}")
        letter = letters[run_key(run)]
        lines = headline(name, found["summaries"])
        lines[0] += f" (run {letter}" + (f"; {status} in run A too)" if status == "passed" and letter != "A"
                                         else f"; {status} in run A)" if letter != "A" else ")")
        heads += lines
    return step_lines(record) + ([""] + heads + [""] + legend if heads else [])


def render_headlines(record, results=RESULTS):
    heads = headline_lines(record, results)
    if not heads:
        return None
    return "\n".join(["# headlines", "", run_line(record["run"]),
                      "Command: `scripts/gpu-check.sh` (the SUMMARY line of every benchmark output)", "",
                      "```text", *heads, "```", ""])


def pages(results=RESULTS):
    """{path: text} of every page the data renders."""
    results = pathlib.Path(results)
    rendered = {}
    for path in sorted(data_dir(results).glob("*.json")):
        found = json.loads(path.read_text())
        if found.get("kind") == "run":
            rendered[results / f"{path.stem}.md"] = render_run(load(path.stem, results))
        elif found.get("kind") == "record":
            rendered[results / found["page"]] = render_record(found, results)
            if path.stem == "record":
                heads = render_headlines(found, results)
                if heads:
                    rendered[results / "headlines.md"] = heads
    return rendered


def render(results=RESULTS, check=False):
    """Writes every page (or, with check, lists those out of date); returns the stale ones."""
    stale = []
    for path, text in pages(results).items():
        if not path.exists() or path.read_text() != text:
            stale.append(path)
            if not check:
                path.write_text(text)
    return stale


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    about = sub.add_parser("about")
    about.add_argument("--commit")
    about.add_argument("--nvcc", help="the nvcc version of a build made elsewhere")
    rec = sub.add_parser("record")
    rec.add_argument("name")
    rec.add_argument("--results", type=pathlib.Path, default=RESULTS)
    write = sub.add_parser("write")
    write.add_argument("--logs", type=pathlib.Path, required=True)
    write.add_argument("--results", type=pathlib.Path, default=RESULTS)
    write.add_argument("--record", default="record")
    ren = sub.add_parser("render")
    ren.add_argument("--results", type=pathlib.Path, default=RESULTS)
    ren.add_argument("--check", action="store_true")
    argv, command = sys.argv[1:], []
    if "--" in argv:  # record's command, with options of its own
        argv, command = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    args = parser.parse_args(argv)

    if args.action == "about":
        print(json.dumps(run_info(args.commit, args.nvcc), indent=1))
        return 0
    if args.action == "record":
        if not command:
            parser.error("record: no command after --")
        return record_command(args.name, command, args.results)
    if args.action == "write":
        extra = args.logs / "extra.json"
        record = write_record(args.logs, args.results, args.record,
                              json.loads(extra.read_text()) if extra.exists() else None)
        render(args.results)
        found = problems(record)
        print(f"record written to {args.results}" + (f"; problems: {len(found)}" if found else ""))
        for p in found:
            print(f"  {p}")
        return 1 if found else 0
    stale = render(args.results, args.check)
    for path in stale:
        print(("out of date: " if args.check else "rendered ") + os.path.relpath(path, ROOT))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
