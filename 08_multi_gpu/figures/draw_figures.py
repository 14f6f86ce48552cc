#!/usr/bin/env python3
"""Draws chapter 08's figures from measured data; --check only compares them with the committed ones.

    python3 08_multi_gpu/figures/draw_figures.py           redraw
    python3 08_multi_gpu/figures/draw_figures.py --check   exit 1 if a committed figure differs

- topology.svg: the GPUs of the record's machine and how they are joined, from what
  08_multi_gpu/topology.sh recorded (docs/results/data/08_topology.output.txt);
- allreduce.svg: the one-shot (and what LL changes) and two-stage all-reduce on two GPUs (a drawing);
- timeline.svg: when each GEMM piece and each send ran on each GPU in the run whose time the table
  reports (the median run), from the event timestamps that 08_split_matmul --timeline wrote in the
  GPU check's benchmark run (docs/results/data/08_split_matmul_timeline.csv);
- model.svg: NCCL's all-reduce time measured on two GPUs in the GPU check
  (docs/results/data/08_allreduce_2gpus.json, else 08_allreduce.json), the alpha-beta fit, and
  its predictions for 4 and 8 GPUs behind an NVSwitch and for two hosts of 8 over InfiniBand,
  beside NCCL's times on all the record's GPUs where that run had more;
- pick.svg: on all the record's GPUs (08_allreduce.json), each of our kernels' measured times
  and the model's line through them (fitted by the program before its timed sizes), the one the
  model picked at each size, NCCL's times, and dashed the same lines predicted from the two-GPU
  run's fits; drawn once the record holds the fits.

- protocols.svg: NCCL's all-reduce time with each algorithm and protocol forced, in CUDA graphs, NCCL's
  own choice marked, and the model's fit per protocol (docs/results/data/08_nccl_protocols.csv and
  .json, written by nccl_protocols.py in the GPU check); drawn once the record holds them;
- graphs.svg: eager calls against CUDA graphs for an empty kernel, NCCL and ours, from
  08_allreduce's record; drawn once the record holds graph times.

After a new GPU check, redraw: the ctest 08_multi_gpu.figures_up_to_date fails until then.
"""
import csv
import json
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHAPTER = HERE.parent
sys.path.insert(0, str(CHAPTER.parent / "07_optimization" / "diagrams"))  # the course's SVG writer
sys.path.insert(0, str(CHAPTER / "model"))
from svg import Svg, redraw_or_check  # noqa: E402
import alpha_beta  # noqa: E402

COMPUTE, COPY = "#7aa6d8", "#f0a35e"
RECORD = CHAPTER.parent / "docs" / "results" / "data" / "08_allreduce.json"
TWO_GPU_RECORD = CHAPTER.parent / "docs" / "results" / "data" / "08_allreduce_2gpus.json"
TOPOLOGY_RECORD = CHAPTER.parent / "docs" / "results" / "data" / "08_topology.output.txt"
TIMELINE_RECORD = CHAPTER.parent / "docs" / "results" / "data" / "08_split_matmul_timeline.csv"
PROTOCOLS_CSV = CHAPTER.parent / "docs" / "results" / "data" / "08_nccl_protocols.csv"
PROTOCOLS_RECORD = CHAPTER.parent / "docs" / "results" / "data" / "08_nccl_protocols.json"
SIZE_TICKS = (("4 KiB", 4 << 10), ("64 KiB", 64 << 10), ("1 MiB", 1 << 20), ("16 MiB", 16 << 20),
              ("256 MiB", 256 << 20), ("1 GiB", 1 << 30))
TIME_TICKS = {-7: "0.1 us", -6: "1 us", -5: "10 us", -4: "100 us", -3: "1 ms", -2: "10 ms", -1: "100 ms"}


def log_axes(fig, left, top, width, height, smin, smax, tmin, tmax):
    """A log-log frame (size across, time up) with grid lines; returns the (size, seconds) -> (x, y) map."""
    def xy(size, seconds):
        x = left + (math.log(size) - math.log(smin)) / (math.log(smax) - math.log(smin)) * width
        y = top + height - (math.log(seconds) - math.log(tmin)) / (math.log(tmax) - math.log(tmin)) * height
        return x, y

    fig.rect(left, top, width, height, fill="#ffffff")
    for e in range(round(math.log10(tmin)), round(math.log10(tmax))):
        x, y = xy(smin, 10.0 ** e)
        fig.line(left, y, left + width, y, stroke="#dddddd")
        fig.text(left - 6, y + 4, TIME_TICKS[e], 10, "end")
    for label, size in SIZE_TICKS:
        if smin <= size <= smax:
            x, y = xy(size, tmin)
            fig.line(x, top, x, top + height, stroke="#dddddd")
            fig.text(x, top + height + 16, label, 10, "middle")
    fig.text(left + width / 2, top + height + 36, "message size (log scale)", 11, "middle")
    return xy


def polyline(fig, points, color, dash=None, width=2):
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        fig.line(x0, y0, x1, y1, stroke=color, width=width, dash=dash)


def gpu_box(fig, x, y, name, detail):
    fig.rect(x, y, 150, 70, fill="#eef3fa")
    fig.text(x + 75, y + 28, name, 14, "middle", weight="bold")
    fig.text(x + 75, y + 48, detail, 11, "middle")


def read_topology(text):
    """What 08_multi_gpu/topology.sh recorded: each GPU's model and PCI bus id, the NV<k> of
    `nvidia-smi topo -m` between GPU 0 and GPU 1, the per-link rate of `nvlink -s`, and whether
    the links end at another GPU (`nvlink -R` names its bus id) or at switch chips (no GPU's)."""
    names = dict(re.findall(r"^GPU (\d+): (.+?) \(UUID", text, re.M))
    bus_ids = {bus.strip().lower()[-12:] for bus in re.findall(r"^\d+, (\S+)$", text, re.M)}
    pair = re.search(r"^GPU0\s+X\s+(\S+)", text, re.M)
    rate = re.search(r"Link 0: ([\d.]+) GB/s", text)
    far_ends = {far.lower()[-12:] for far in re.findall(r"Remote Device (\S+): Link", text)}
    return {"names": [names[k] for k in sorted(names, key=int)], "pair": pair.group(1) if pair else "?",
            "link_gbs": float(rate.group(1)) if rate else None,
            "switch": bool(far_ends) and not (far_ends & bus_ids)}


def draw_topology():
    """The machine of the record: GPU models, links and where they end, as topology.sh saw them."""
    topo = read_topology(TOPOLOGY_RECORD.read_text())
    links = int(topo["pair"][2:]) if topo["pair"].startswith("NV") else 0
    names = topo["names"]
    gpus = f"{len(names)} x {names[0]}" if len(set(names)) == 1 else ", ".join(names)
    fig = Svg(640, 250, f"{gpus}: {topo['pair']} in nvidia-smi topo -m")
    gpu_box(fig, 20, 40, "GPU 0", names[0])
    gpu_box(fig, 470, 40, "GPU 1", names[1])
    if topo["switch"]:
        fig.rect(255, 35, 130, 80, fill="#f4efe4")
        fig.text(320, 70, "NVSwitch chips", 13, "middle", weight="bold")
        fig.text(320, 90, "(on the HGX board)", 11, "middle")
        for x1, x2 in ((175, 250), (465, 390)):
            fig.line(x1, 75, x2, 75, width=3)
        fig.text(212, 64, f"{links} links", 11, "middle")
        fig.text(428, 64, f"{links} links", 11, "middle")
        path = "GPU 0's links and GPU 1's meet in the switches: any pair of GPUs gets them all"
    else:
        fig.line(175, 75, 465, 75, width=3)
        fig.text(320, 64, f"{links} links, GPU to GPU", 11, "middle")
        path = "the links join the two GPUs directly"
    rate = topo["link_gbs"]
    if rate:
        fig.text(320, 150, f"nvidia-smi nvlink -s: {rate:g} GB/s per link, {links * rate:.0f} GB/s per GPU", 11,
                 "middle")
    fig.text(320, 170, path, 11, "middle")
    fig.text(320, 200, "peer access: a kernel on one GPU loads and stores the other's memory;", 11, "middle")
    fig.text(320, 218, "the copy engines copy between them (cudaMemcpyPeerAsync)", 11, "middle")
    return fig


def draw_allreduce():
    fig = Svg(760, 256, "One-shot and two-stage all-reduce on two GPUs")
    colors = ("#7aa6d8", "#f0a35e")
    rows = (40, 150)
    # One-shot: each GPU pushes its input into its own slot on both GPUs, then sums its slots.
    fig.text(20, 22, "one-shot: push, one barrier, sum locally", 13, weight="bold")
    for g, y in enumerate(rows):
        fig.text(20, y + 16, "GPU %d" % g, 12, weight="bold")
        fig.cell(80, y, 80, 24, "input %d" % g, fill=colors[g])
        for position, slot in enumerate((g, 1 - g)):  # its own slot first
            fig.cell(210 + position * 60, y, 60, 24, "slot %d" % slot, fill=colors[slot], size=10)
        fig.line(335, y + 12, 355, y + 12, arrow=True)
        fig.text(360, y + 16, "0 + 1", 11)
    for g, y in enumerate(rows):
        fig.line(160, y + 12, 205, y + 12, arrow=True)  # into its own slot, locally
    fig.line(150, 64, 295, 148, arrow=True, dash="4,3")   # GPU 0 -> slot 0 on GPU 1
    fig.line(150, 150, 295, 66, arrow=True, dash="4,3")   # GPU 1 -> slot 1 on GPU 0
    fig.text(200, 212, "dashed: a store across NVLink", 10, "middle")
    fig.text(200, 230, "LL: each pair of values travels beside the call's epoch,", 10, "middle")
    fig.text(200, 244, "so the receiver polls the data itself: no barrier", 10, "middle")
    # Two-stage: each GPU sums its half of both inputs, then copies the other half.
    x0 = 420
    fig.text(x0, 22, "two-stage: reduce-scatter, all-gather", 13, weight="bold")
    for g, y in enumerate(rows):
        fig.text(x0, y + 16, "GPU %d" % g, 12, weight="bold")
        fig.cell(x0 + 50, y, 50, 24, "in[0:h]", fill=colors[g], size=10)
        fig.cell(x0 + 100, y, 50, 24, "in[h:n]", fill=colors[g], size=10)
        fig.cell(x0 + 190, y, 60, 24, "half %d" % g, size=10)
        fig.cell(x0 + 270, y, 60, 24, "half %d" % (1 - g), fill="#dddddd", size=10)
    fig.line(x0 + 220, 64, x0 + 300, 148, arrow=True, dash="4,3")
    fig.line(x0 + 220, 150, x0 + 300, 66, arrow=True, dash="4,3")
    fig.text(x0 + 160, 202, "1. GPU g sums half g of both inputs (reads the other's half)", 10, "middle")
    fig.text(x0 + 160, 218, "2. each copies the half it lacks (grey) from the other", 10, "middle")
    fig.text(x0 + 160, 238, "per GPU across NVLink: half the message, twice", 10, "middle")
    return fig


def draw_timeline():
    source = TIMELINE_RECORD
    rows = list(csv.DictReader(source.open(encoding="utf-8")))
    # One run per version: the run whose time the table reports ("run" rows), and its pieces.
    totals = {r["version"]: float(r["end_ms"]) for r in rows if r["lane"] == "run"}
    rows = [r for r in rows if r["lane"] != "run"]
    versions = list(dict.fromkeys(r["version"] for r in rows))
    gpus = sorted({int(r["gpu"]) for r in rows})
    end = max([float(r["end_ms"]) for r in rows] + list(totals.values()))
    left, width, lane_h = 150, 560, 18
    panel_h = len(gpus) * 2 * (lane_h + 4) + 34
    fig = Svg(left + width + 30, 40 + len(versions) * panel_h + 40,
              "Split matmul: GEMM pieces and sends on each GPU, from recorded CUDA events")
    scale = width / end
    for v, version in enumerate(versions):
        top = 30 + v * panel_h
        fig.text(10, top + 12, version, 13, weight="bold")
        if version in totals:
            fig.text(left + width, top + 12, "the table's run: %.3f ms" % totals[version], 11, "end")
        else:
            done = max(float(r["end_ms"]) for r in rows if r["version"] == version)
            fig.text(left + width, top + 12, "all of C on every GPU at %.2f ms" % done, 11, "end")
        y = top + 22
        for g in gpus:
            for lane, color in (("compute", COMPUTE), ("copy", COPY)):
                fig.text(10, y + lane_h - 5, "GPU %d %s" % (g, "GEMM" if lane == "compute" else "send to peers"), 11)
                fig.rect(left, y, width, lane_h, fill="#ffffff", stroke="#cccccc", width=0.5)
                for r in rows:
                    if r["version"] == version and int(r["gpu"]) == g and r["lane"] == lane:
                        x0, x1 = float(r["start_ms"]) * scale, float(r["end_ms"]) * scale
                        fig.rect(left + x0, y + 2, max(x1 - x0, 1), lane_h - 4, fill=color, stroke="#333333", width=0.5)
                y += lane_h + 4
    axis = 40 + len(versions) * panel_h
    fig.line(left, axis - 10, left + width, axis - 10)
    step = 0.1 if end < 1.5 else 0.5
    for i in range(int(end / step) + 1):
        x = left + i * step * scale
        fig.line(x, axis - 13, x, axis - 7)
        fig.text(x, axis + 4, "%.1f" % (i * step), 10, "middle")
    fig.text(left + width / 2, axis + 22, "milliseconds since each GPU started its part of the matmul", 11, "middle")
    fig.text(10, 14, "data: %s" % source.relative_to(CHAPTER.parent), 10)
    return fig


def draw_model():
    source = TWO_GPU_RECORD if TWO_GPU_RECORD.exists() and any(
        k.startswith("nccl_us_") for k in alpha_beta.record_figures(TWO_GPU_RECORD)) else RECORD
    fitted = alpha_beta.record_figures(source).get("gpus", 2)
    n = alpha_beta.record_figures(RECORD).get("gpus", 2)
    points = alpha_beta.measured_points(source)
    fit = alpha_beta.fit([s for s, _ in points], [t for _, t in points])
    left, top, width, height = 80, 50, 520, 300
    fig = Svg(left + width + 220, top + height + 70, "All-reduce time: measured on %d GPUs, predicted beyond" % fitted)
    fig.text(10, 20, "All-reduce (fp32) time against message size: alpha = %.1f us, bus bandwidth beta = %.0f GB/s "
             "fitted to %d GPUs" % (fit.alpha * 1e6, fit.beta / 1e9, fitted), 12, weight="bold")
    fig.text(10, 36, "data: %s" % (source.relative_to(CHAPTER.parent)), 10)
    smin, smax = 4 << 10, 1 << 30
    tmin, tmax = 1e-6, 1e-1

    def xy(size, seconds):
        x = left + (math.log(size) - math.log(smin)) / (math.log(smax) - math.log(smin)) * width
        y = top + height - (math.log(seconds) - math.log(tmin)) / (math.log(tmax) - math.log(tmin)) * height
        return x, y

    fig.rect(left, top, width, height, fill="#ffffff")
    for e in range(-6, 0):
        x, y = xy(smin, 10.0 ** e)
        fig.line(left, y, left + width, y, stroke="#dddddd")
        fig.text(left - 6, y + 4, ["1 us", "10 us", "100 us", "1 ms", "10 ms", "100 ms"][e + 6], 10, "end")
    for label, size in (("4 KiB", 4 << 10), ("64 KiB", 64 << 10), ("1 MiB", 1 << 20), ("16 MiB", 16 << 20),
                        ("256 MiB", 256 << 20), ("1 GiB", 1 << 30)):
        x, y = xy(size, tmin)
        fig.line(x, top, x, top + height, stroke="#dddddd")
        fig.text(x, top + height + 16, label, 10, "middle")
    fig.text(left + width / 2, top + height + 36, "message size (log scale)", 11, "middle")
    curves = [("%d GPUs (fit)" % fitted, "#222222", lambda s: fit.time(s), None),
              ("4 GPUs, NVSwitch", "#2b7bba", lambda s: alpha_beta.one_host(4, s, fit, fitted_on=fitted),
               lambda s: alpha_beta.one_host(4, s, fit, False, fitted)),
              ("8 GPUs, NVSwitch", "#1a9850", lambda s: alpha_beta.one_host(8, s, fit, fitted_on=fitted),
               lambda s: alpha_beta.one_host(8, s, fit, False, fitted)),
              ("2 hosts x 8, InfiniBand", "#d73027", lambda s: alpha_beta.two_hosts(8, s, fit, fitted_on=fitted), None)]
    sizes = [smin * 2 ** (i / 4) for i in range(0, 4 * 18 + 1)]
    for i, (name, color, model, fast_end) in enumerate(curves):
        for m, dash in ((model, None), (fast_end, "5,4")):
            if m is None:
                continue
            xys = [xy(s, m(s)) for s in sizes]
            for (x0, y0), (x1, y1) in zip(xys, xys[1:]):
                fig.line(x0, y0, x1, y1, stroke=color, width=2, dash=dash)
        ly = top + 20 + i * 20
        fig.line(left + width + 15, ly - 4, left + width + 40, ly - 4, stroke=color, width=2)
        fig.text(left + width + 46, ly, name, 11)
    for s, t in points:
        x, y = xy(s, t)
        fig.rect(x - 3, y - 3, 6, 6, fill="#222222")
    ly = top + 20 + len(curves) * 20
    fig.rect(left + width + 24, ly - 7, 6, 6, fill="#222222")
    fig.text(left + width + 46, ly, "measured, NCCL, %d GPUs" % fitted, 11)
    if source != RECORD and n != fitted:  # the larger run, beside its prediction
        for s, t in alpha_beta.measured_points(RECORD):
            x, y = xy(s, t)
            fig.rect(x - 3, y - 3, 6, 6, fill="#ffffff", stroke="#2b7bba" if n == 4 else "#1a9850", width=1.5)
        ly += 20
        fig.rect(left + width + 24, ly - 7, 6, 6, fill="#ffffff", stroke="#2b7bba" if n == 4 else "#1a9850", width=1.5)
        fig.text(left + width + 46, ly, "measured, NCCL, %d GPUs" % n, 11)
    fig.text(left + width + 15, ly + 24, "Solid: all of alpha paid per step;", 10)
    fig.text(left + width + 15, ly + 38, "dashed: alpha paid once per call.", 10)
    fig.text(left + width + 15, ly + 58, "Two hosts assume one 400 Gb/s", 10)
    fig.text(left + width + 15, ly + 72, "NIC per GPU, 5 us per network step", 10)
    return fig


KERNEL_COLORS = {"ll": "#7b3294", "one_shot": "#2b7bba", "two_stage": "#1a9850", "ce_gather": "#e08214"}
KERNEL_SMALLEST = {"ce_gather": 16 << 20}  # the copy-engine gather runs from 16 MiB up


def draw_pick():
    """Our kernels on the record's n GPUs: measured times, the model's lines, its pick; NCCL."""
    figures = alpha_beta.record_figures(RECORD)
    n = figures.get("gpus", 2)
    fits = alpha_beta.kernel_fits(figures)
    measured = alpha_beta.measured_kernel_times(RECORD, fits, n)
    two = alpha_beta.kernel_fits(alpha_beta.record_figures(TWO_GPU_RECORD)) if TWO_GPU_RECORD.exists() else {}
    left, top, width, height = 80, 56, 500, 320
    fig = Svg(left + width + 270, top + height + 70, "All-reduce on %d GPUs: measured, and the model that picks" % n)
    fig.text(10, 20, "Our all-reduce kernels on %d GPUs (fp32, eager): measured times, the model's line for each, "
             "and its pick; NCCL's times" % n, 12, weight="bold")
    fig.text(10, 36, "data: %s%s" % (RECORD.relative_to(CHAPTER.parent), ", dashed: predicted from %s"
                                     % TWO_GPU_RECORD.relative_to(CHAPTER.parent) if two else ""), 10)
    smin, smax = 4 << 10, 1 << 30
    xy = log_axes(fig, left, top, width, height, smin, smax, 1e-6, 1e-2)
    sizes = [smin * 2 ** (i / 4) for i in range(0, 4 * 18 + 1)]
    legend = []
    for k, name in alpha_beta.KERNEL_NAMES.items():
        if k not in fits:
            continue
        color = KERNEL_COLORS[k]
        runs = [s for s in sizes if alpha_beta.takes(k, s) and s >= KERNEL_SMALLEST.get(k, 0)]
        polyline(fig, [xy(s, alpha_beta.kernel_time(k, fits[k], n, s)) for s in runs], color)
        if k in two:
            polyline(fig, [xy(s, alpha_beta.kernel_time(k, two[k], n, s)) for s in runs], color, dash="5,4", width=1)
        for s, seconds in sorted(measured.get(k, {}).items()):
            x, y = xy(s, seconds)
            fig.rect(x - 2.5, y - 2.5, 5, 5, fill=color, stroke=color)
        legend.append((name, color))
    picked = [(alpha_beta.size_of(key[len("mine_us_"):]), v * 1e-6) for key, v in figures.items()
              if key.startswith("mine_us_") and v]
    for s, seconds in picked:
        x, y = xy(s, seconds)
        fig.rect(x - 6, y - 6, 12, 12, fill="none", stroke="#000000", width=1.5)
    nccl = alpha_beta.measured_points(RECORD)
    polyline(fig, [xy(s, t) for s, t in nccl], "#d73027", width=1.5)
    for s, seconds in nccl:
        x, y = xy(s, seconds)
        fig.rect(x - 2.5, y - 2.5, 5, 5, fill="#d73027", stroke="#d73027")
    legend.append(("NCCL, measured", "#d73027"))
    for i, (name, color) in enumerate(legend):
        ly = top + 20 + i * 20
        fig.line(left + width + 15, ly - 4, left + width + 40, ly - 4, stroke=color, width=2)
        fig.text(left + width + 46, ly, name, 11)
    ly = top + 20 + len(legend) * 20
    fig.rect(left + width + 22, ly - 9, 10, 10, fill="none", stroke="#000000", width=1.5)
    fig.text(left + width + 46, ly, "the model's pick, measured", 11)
    fig.text(left + width + 15, ly + 24, "Squares: measured; solid: the model", 10)
    fig.text(left + width + 15, ly + 38, "fitted on %d GPUs before the timed sizes." % n, 10)
    if two:
        fig.text(left + width + 15, ly + 58, "Dashed: the same kernels on %d GPUs" % n, 10)
        fig.text(left + width + 15, ly + 72, "predicted from the fits on %d." % alpha_beta.record_figures(
            TWO_GPU_RECORD).get("gpus", 2), 10)
    return fig


PROTOCOL_COLORS = {"Ring LL": "#d73027", "Ring LL128": "#fc8d59", "Ring Simple": "#7f2704",
                   "Tree LL": "#4575b4", "Tree LL128": "#74add1", "Tree Simple": "#08306b"}


def draw_protocols():
    rows = list(csv.DictReader(PROTOCOLS_CSV.open(encoding="utf-8")))
    fits = alpha_beta.protocol_fits(alpha_beta.protocol_points(PROTOCOLS_RECORD)) if PROTOCOLS_RECORD.exists() else {}
    left, top, width, height = 80, 56, 520, 320
    fig = Svg(left + width + 230, top + height + 70, "NCCL all-reduce: each algorithm and protocol forced")
    run = json.loads(PROTOCOLS_RECORD.read_text()).get("run", {}) if PROTOCOLS_RECORD.exists() else {}
    gpus = run.get("gpus", 2)  # the sweep runs on every GPU of the machine
    fig.text(10, 20, "NCCL all-reduce (fp32, %d GPUs, CUDA graphs): each algorithm and protocol forced; "
             "squares: what NCCL picks itself" % gpus, 12, weight="bold")
    fig.text(10, 36, "data: %s; dashed: the model's fit per protocol (from 64 KiB up)"
             % PROTOCOLS_CSV.relative_to(CHAPTER.parent), 10)
    xy = log_axes(fig, left, top, width, height, 4 << 10, 1 << 30, 1e-6, 1e-1)
    names = [n for n in PROTOCOL_COLORS if any("%s %s" % (r["algo"], r["proto"]) == n for r in rows)]
    for i, name in enumerate(names):
        color = PROTOCOL_COLORS[name]
        mine = sorted((int(r["size_bytes"]), float(r["us"]) * 1e-6) for r in rows
                      if "%s %s" % (r["algo"], r["proto"]) == name)
        polyline(fig, [xy(s, t) for s, t in mine], color)
        for (s, t), r in zip(mine, sorted((r for r in rows if "%s %s" % (r["algo"], r["proto"]) == name),
                                          key=lambda r: int(r["size_bytes"]))):
            if r["chosen"] == "1":
                x, y = xy(s, t)
                fig.rect(x - 5, y - 5, 10, 10, fill="none", stroke="#000000", width=1.5)
        if name in fits:
            f = fits[name][0]
            sizes = [(64 << 10) * 2 ** (j / 4) for j in range(0, 4 * 14 + 1)]
            polyline(fig, [xy(s, f.time(s)) for s in sizes], color, dash="4,3", width=1)
        ly = top + 20 + i * 20
        fig.line(left + width + 15, ly - 4, left + width + 40, ly - 4, stroke=color, width=2)
        fig.text(left + width + 46, ly, name + ("  (fit within %.0f%%)" % (100 * fits[name][1]) if name in fits else ""), 11)
    ly = top + 20 + len(names) * 20
    fig.rect(left + width + 22, ly - 9, 10, 10, fill="none", stroke="#000000", width=1.5)
    fig.text(left + width + 46, ly, "NCCL's own choice at that size", 11)
    return fig


def draw_graphs():
    figures = alpha_beta.record_figures(RECORD)
    labels = [k[len("mine_graph_us_"):] for k in figures if k.startswith("mine_graph_us_")]
    series = (("empty kernel", "floor_eager_us_", "floor_graph_us_", "#999999"),
              ("NCCL", "nccl_us_", "nccl_graph_us_", "#d73027"),
              ("ours (picked by size)", "mine_us_", "mine_graph_us_", "#2b7bba"))
    sizes = sorted(alpha_beta.size_of(label) for label in labels)
    left, top, width, height = 80, 56, 460, 300
    fig = Svg(left + width + 250, top + height + 70, "Eager calls against CUDA graphs")
    fig.text(10, 20, "Time per call on %d GPUs: launched one by one from one thread (solid) or replayed "
                     "from a CUDA graph (dashed)" % figures.get("gpus", 2), 12, weight="bold")
    fig.text(10, 36, "data: %s" % RECORD.relative_to(CHAPTER.parent), 10)
    xy = log_axes(fig, left, top, width, height, sizes[0], sizes[-1], 1e-7, 1e-4)
    for i, (name, eager, graph, color) in enumerate(series):
        for prefix, dash in ((eager, None), (graph, "5,4")):
            points = [(s, figures.get(prefix + label_of(s))) for s in sizes]
            points = [xy(s, t * 1e-6) for s, t in points if t]
            polyline(fig, points, color, dash)
            for x, y in points:
                fig.rect(x - 2.5, y - 2.5, 5, 5, fill=color, stroke=color)
        ly = top + 20 + i * 20
        fig.line(left + width + 15, ly - 4, left + width + 40, ly - 4, stroke=color, width=2)
        fig.text(left + width + 46, ly, name, 11)
    ly = top + 20 + len(series) * 20 + 10
    fig.text(left + width + 15, ly, "Solid: eager, one launch per GPU per call;", 10)
    fig.text(left + width + 15, ly + 14, "dashed: the same calls in a CUDA graph.", 10)
    fig.text(left + width + 15, ly + 34, "The gap between an empty kernel's two", 10)
    fig.text(left + width + 15, ly + 48, "lines is the host's launch cost.", 10)
    return fig


def label_of(size):
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit and size % unit == 0:
            return "%d%s" % (size // unit, name)
    return "%dB" % size


def figures():
    """Every figure whose data exist: the ones drawn from new kinds of runs appear after the GPU
    check has recorded those runs."""
    drawn = {"topology.svg": draw_topology, "allreduce.svg": draw_allreduce, "timeline.svg": draw_timeline,
             "model.svg": draw_model}
    if PROTOCOLS_CSV.exists():
        drawn["protocols.svg"] = draw_protocols
    if any(k.startswith("mine_graph_us_") for k in alpha_beta.record_figures(RECORD)):
        drawn["graphs.svg"] = draw_graphs
    if alpha_beta.kernel_fits(alpha_beta.record_figures(RECORD)):
        drawn["pick.svg"] = draw_pick
    else:
        print("pick.svg: %s holds no fits of our kernels yet (a run from before the model's pick): not drawn"
              % RECORD.relative_to(CHAPTER.parent))
    return drawn


if __name__ == "__main__":
    sys.exit(redraw_or_check(figures(), HERE, "python3 08_multi_gpu/figures/draw_figures.py"))
