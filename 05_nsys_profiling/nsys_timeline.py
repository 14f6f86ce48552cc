#!/usr/bin/env python3
"""nsys's report as data and as a picture: where a program's time went on the GPU.

    nsys_timeline.py dump REPORT.sqlite      every kernel, copy, unified-memory migration, memset
                                            and NVTX range of the report, as a table (ms since
                                            the first of them), then a SUMMARY line of counts
    nsys_timeline.py summary REPORT.sqlite   the SUMMARY line alone (nsys_stats.sh prints it)
    nsys_timeline.py draw [--check]          05_nsys_profiling/timeline.svg from the recorded dump
                                            (docs/results/data/05_nsys_timeline.output.txt)

REPORT.sqlite is what `nsys profile --stats=true` (or `nsys export --type sqlite`) writes beside
the .nsys-rep. The GPU check records the dump of chapter 05's program, so the figure is redrawn
from the record without a GPU. Python's standard library only.
"""
import json
import pathlib
import sqlite3
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "07_optimization" / "diagrams"))

# nsys's numbering of copy kinds (its reports' MemcpyOperStrs): CUPTI's memcpy kinds, and 11-13
# for the page migrations of unified memory, which nsys files as copies.
COPY_KINDS = {1: "memcpy HtoD", 2: "memcpy DtoH", 8: "memcpy DtoD", 10: "memcpy PtoP",
              11: "migration HtoD", 12: "migration DtoH", 13: "migration DtoD"}
NVTX_PUSH_POP = 59
LANES = ("NVTX", "kernel", "memcpy", "memset", "migration HtoD", "migration DtoH")


def events(database):
    """[(lane, name, start_ns, end_ns, bytes)] of the report, in start order."""
    found = []
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
            found += [("kernel", name, start, end, None) for start, end, name in db.execute(
                "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                "JOIN StringIds AS s ON s.id = k.demangledName")]
        if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
            for start, end, size, kind in db.execute("SELECT start, end, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
                name = COPY_KINDS.get(kind, f"memcpy kind {kind}")
                found.append(("memcpy" if name.startswith("memcpy") else name, name, start, end, size))
        if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
            found += [("memset", "memset", start, end, size) for start, end, size in
                      db.execute("SELECT start, end, bytes FROM CUPTI_ACTIVITY_KIND_MEMSET")]
        if "NVTX_EVENTS" in tables:
            found += [("NVTX", text, start, end, None) for start, end, text in db.execute(
                "SELECT e.start, e.end, coalesce(e.text, s.value) FROM NVTX_EVENTS AS e "
                "LEFT JOIN StringIds AS s ON s.id = e.textId WHERE e.eventType = ? AND e.end IS NOT NULL",
                (NVTX_PUSH_POP,))]
    return sorted(found, key=lambda e: (e[2], LANES.index(e[0])))


def api_calls(database):
    """{CUDA runtime function: [durations in ns]} of the report (cudaDeviceSynchronize_v3020 ->
    cudaDeviceSynchronize)."""
    calls = {}
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
            for name, ns in db.execute("SELECT s.value, r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                                       "JOIN StringIds AS s ON s.id = r.nameId"):
                calls.setdefault(name.split("_v")[0], []).append(ns)
    return calls


def summary(found, calls):
    """Counts and totals a README quotes, as the course's SUMMARY JSON."""
    def of(lane):
        return [e for e in found if e[0] == lane]
    kernels = {}
    for _, name, start, end, _ in of("kernel"):
        kernels[name] = kernels.get(name, 0) + (end - start)
    longest = max(kernels.items(), key=lambda item: item[1], default=(None, 0))
    figures = {"kernels": len(of("kernel")), "kernel_names": len(kernels),
               "top_kernel_total_ms": round(longest[1] * 1e-6, 1),
               "htod_migrations": len(of("migration HtoD")), "dtoh_migrations": len(of("migration DtoH")),
               "htod_migrated_mb": round(sum(e[4] for e in of("migration HtoD")) / 1e6, 3),
               "dtoh_migrated_mb": round(sum(e[4] for e in of("migration DtoH")) / 1e6, 3),
               "copies": len(of("memcpy")), "nvtx_ranges": len(of("NVTX"))}
    for call, key, scale in (("cudaDeviceSynchronize", "synchronize_ms", 1e-6), ("cudaLaunchKernel", "launch_max_us", 1e-3),
                             ("cudaMallocManaged", "malloc_managed_max_ms", 1e-6)):
        if call in calls:
            figures[key] = round((sum(calls[call]) if key == "synchronize_ms" else max(calls[call])) * scale, 1)
    return {"program": "nsys_timeline", "checks": 1, "failed": int(not kernels), "exact": 0, "goals": [],
            "figures": figures}


def dump(database):
    found = events(database)
    if not found:
        print(f"nsys_timeline: {database} holds no GPU work and no NVTX range")
        return 1
    first = min(e[2] for e in found)
    print(f"Timeline of {pathlib.Path(database).name}: {len(found)} events, ms since the first\n")
    print("| Lane | Name | Start (ms) | Duration (ms) | Bytes |")
    print("|------|------|------------|---------------|-------|")
    for lane, name, start, end, size in found:
        print(f"| {lane} | {name} | {(start - first) * 1e-6:.4f} | {(end - start) * 1e-6:.4f} | "
              f"{'' if size is None else size} |")
    print()
    print("SUMMARY " + json.dumps(summary(found, api_calls(database)), separators=(",", ":")))
    return 0


# --- The figure ---------------------------------------------------------------------------------

COLOURS = {"NVTX": "#d9e4f2", "kernel": "#4c78a8", "memcpy": "#f58518", "memset": "#b279a2",
           "migration HtoD": "#54a24b", "migration DtoH": "#e45756"}
LEFT, RIGHT, TOP, LANE_H, GAP = 120, 20, 40, 22, 6


def nvtx_depths(ranges):
    """The nesting depth of each NVTX range (push/pop ranges nest)."""
    depths, open_ends = [], []
    for _, _, start, end in ranges:
        open_ends = [e for e in open_ends if e > start]
        depths.append(len(open_ends))
        open_ends.append(end)
    return depths


def draw():
    from results import load, run_line, tables
    from svg import Svg
    recorded = load("05_nsys_timeline")
    rows = next(t for t in tables(recorded["output"]) if t["header"][0] == "Lane")["rows"]
    found = [(lane, name, float(start), float(start) + float(dur)) for lane, name, start, dur, _ in rows]
    nvtx = [e for e in found if e[0] == "NVTX"]
    depths = nvtx_depths(nvtx)
    nvtx_lanes = max(depths, default=0) + 1
    lanes = [f"NVTX {d + 1}" for d in range(nvtx_lanes)] + [lane for lane in LANES[1:]
                                                             if any(e[0] == lane for e in found)]
    width, end_ms = 900, max(e[3] for e in found)
    height = TOP + len(lanes) * (LANE_H + GAP) + 58
    figure = Svg(width, height, "nsys timeline of 05_nsys_profiling")
    figure.text(LEFT, 20, "nsys's report of 05_nsys_profiling: GPU work and NVTX ranges on one time axis",
                13, weight="bold")
    scale = (width - LEFT - RIGHT) / end_ms

    def y_of(lane):
        return TOP + lanes.index(lane) * (LANE_H + GAP)

    for lane in lanes:
        figure.text(LEFT - 8, y_of(lane) + LANE_H * 0.7, lane, 11, "end")
        figure.line(LEFT, y_of(lane) + LANE_H, width - RIGHT, y_of(lane) + LANE_H, "#cccccc", 0.5)
    for (lane, name, start, end), depth in zip(nvtx, depths):
        x, w = LEFT + start * scale, max((end - start) * scale, 1.0)
        figure.rect(x, y_of(f"NVTX {depth + 1}"), w, LANE_H, COLOURS["NVTX"], "#6b8bb5", 0.5)
        if w > 5.5 * len(name):
            figure.text(x + 3, y_of(f"NVTX {depth + 1}") + LANE_H * 0.7, name, 10)
    for lane, name, start, end in found:
        if lane == "NVTX":
            continue
        x, w = LEFT + start * scale, max((end - start) * scale, 0.8)
        figure.rect(x, y_of(lane), w, LANE_H, COLOURS[lane], "none", 0)
        label = name.split("(")[0] + f" {end - start:.1f} ms"
        if lane == "kernel" and w > 6 * len(label):
            figure.text(x + w / 2, y_of(lane) + LANE_H * 0.7, label, 10, "middle", fill="white")
    axis_y = TOP + len(lanes) * (LANE_H + GAP)
    figure.line(LEFT, axis_y, width - RIGHT, axis_y)
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000) if end_ms / s <= 10)
    for i in range(int(end_ms // step) + 1):
        x = LEFT + i * step * scale
        figure.line(x, axis_y, x, axis_y + 4)
        figure.text(x, axis_y + 16, f"{i * step:g}", 10, "middle")
    figure.text(LEFT + (width - LEFT - RIGHT) / 2, axis_y + 32, "ms since the first event", 11, "middle")
    figure.text(LEFT, axis_y + 50, run_line(recorded["run"]), 9, fill="#555555")
    return figure


def main():
    if len(sys.argv) == 3 and sys.argv[1] in ("dump", "summary"):
        if sys.argv[1] == "dump":
            return dump(sys.argv[2])
        print("SUMMARY " + json.dumps(summary(events(sys.argv[2]), api_calls(sys.argv[2])), separators=(",", ":")))
        return 0
    if len(sys.argv) >= 2 and sys.argv[1] == "draw":
        from svg import redraw_or_check
        sys.argv = [sys.argv[0]] + sys.argv[2:]
        return redraw_or_check({"timeline.svg": draw}, pathlib.Path(__file__).parent,
                               "python3 05_nsys_profiling/nsys_timeline.py draw")
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
