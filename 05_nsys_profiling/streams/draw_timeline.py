#!/usr/bin/env python3
"""Draws the streams lesson's timeline (timeline.svg) from the recorded run of 05_streams.

05_streams prints one row per GPU operation of one traced run of each way (CUPTI, the chapter's
own tracer): "TIMELINE <way> | <lane> | <start us> | <end us>". This script reads those rows from
the record (docs/results/data/05_streams.*, made by scripts/gpu-check.sh) and draws both ways on
one time axis, one row per lane: copy in, kernel, copy out. Plain SVG, no plotting library.

    python3 05_nsys_profiling/streams/draw_timeline.py           # (re)draw timeline.svg
    python3 05_nsys_profiling/streams/draw_timeline.py --check   # exit 1 if timeline.svg is not what the record draws

With --check, exit status 77 (skipped) while the record holds no traced run of 05_streams.
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "scripts"))
import results  # noqa: E402  (the course's reader of the record)

FIGURE = HERE / "timeline.svg"
LANES = ["copy in", "kernel", "copy out"]
COLOURS = {"copy in": "#4e79a7", "kernel": "#59a14f", "copy out": "#e15759"}
WAYS = ["one stream", "pipeline"]


def rows_from(output):
    rows = []
    for line in output.splitlines():
        if line.startswith("TIMELINE "):
            way, lane, start, end = (part.strip() for part in line[len("TIMELINE "):].split("|"))
            rows.append((way, lane, float(start), float(end)))
    return rows


def draw(rows, run):
    width, left, lane_h, top = 900, 110, 22, 40
    span = max(end for *_, end in rows)
    scale = (width - left - 20) / span
    parts, y = [], top
    for way in WAYS:
        parts.append(f'<text x="10" y="{y + 14}" font-weight="bold">{way}</text>')
        y += 20
        for lane in LANES:
            parts.append(f'<text x="10" y="{y + 15}">{lane}</text>')
            for w, l, start, end in rows:
                if w == way and l == lane:
                    x = left + start * scale
                    parts.append(f'<rect x="{x:.1f}" y="{y}" width="{max(0.5, (end - start) * scale):.1f}" '
                                 f'height="{lane_h - 4}" fill="{COLOURS[lane]}" stroke="white" stroke-width="0.5"/>')
            y += lane_h
        y += 10
    for tick in range(0, int(span) + 1, max(1000, int(span / 8) // 1000 * 1000)):
        x = left + tick * scale
        parts.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 5}" stroke="black"/>')
        parts.append(f'<text x="{x:.1f}" y="{y + 18}" text-anchor="middle">{tick / 1000:g} ms</text>')
    height = y + 50
    title = f"05_streams: one stream against the 3-stream pipeline (CUPTI), {run}"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="12">\n<text x="10" y="20">{title}</text>\n'
            + "\n".join(parts) + "\n</svg>\n")


def main():
    check = "--check" in sys.argv[1:]
    skipped = 77 if check else 0  # drawing (as sync-results.py does) has nothing to do: no error
    try:
        found = results.load("05_streams")
    except LookupError as err:
        print(f"draw_timeline.py: skipped: {err}")
        return skipped
    rows = rows_from(found["output"])
    if not rows:
        print("draw_timeline.py: skipped: the recorded 05_streams run printed no TIMELINE rows")
        return skipped
    run = found.get("run", {})
    svg = draw(rows, f'{run.get("gpu", "")} {run.get("date", "")}'.strip())
    if check:
        if not FIGURE.exists() or FIGURE.read_text() != svg:
            print(f"draw_timeline.py: {FIGURE.name} is not what the record draws: "
                  "run python3 05_nsys_profiling/streams/draw_timeline.py")
            return 1
        print("draw_timeline.py: timeline.svg matches the record")
        return 0
    FIGURE.write_text(svg)
    print(f"wrote {FIGURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
