#!/usr/bin/env python3
"""Draws chapter 07's step figures as SVG: which thread touches which element, each step's
addition tree, each SGEMM tiling, the bytes fusion saves. Python's standard library only.

    python3 07_optimization/diagrams/draw_figures.py           # (re)write the .svg files here
    python3 07_optimization/diagrams/draw_figures.py --check   # exit 1 if one differs (CTest)

The shapes come from the code where the code states them: the tile configurations are read
from sgemm/07_warptiling.cuh and sgemm/08_tile_sweep.cuh, fusion's passes from
fusion/01_unfused.cuh, and bank conflicts and busy threads are computed, not typed. Small
sizes stand in for large ones (16 threads for a block of 256, 8 lanes for a warp of 32);
each figure says so.
"""
import re
import sys
from pathlib import Path

from svg import INK, PAPER as MEMORY, Svg, redraw_or_check

HERE = Path(__file__).resolve().parent
CHAPTER = HERE.parent

# Colours: one per thread (or lane, or warp), then roles.
THREAD = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"]
IDLE, MUTED = "#e6e6e6", "#777777"
READ, WRITE, HIGHLIGHT, SHARED_READ = "#9ecae1", "#fdae6b", "#fce5cd", "#08306b"


# --- Reading the code ------------------------------------------------------------------------

def tile_configs():
    """{struct name: {constant: value}} of the SGEMM tile configurations, inheritance applied."""
    text = (CHAPTER / "sgemm" / "07_warptiling.cuh").read_text() + (CHAPTER / "sgemm" / "08_tile_sweep.cuh").read_text()
    configs = {}
    for name, base, body in re.findall(r"struct (\w+)(?: : (\w+))? \{(.*?)\};", text, re.S):
        if name != "WarptileConfig" and not name.startswith("Tiles"):
            continue
        values = dict(configs.get(base, {}))
        for decl in re.findall(r"static constexpr int ([^;]+);", body):
            for item in decl.split(","):
                key, value = item.split("=")
                values[key.strip()] = int(value)
        configs[name] = values
    for values in configs.values():  # WarpTile<Cfg>'s derived sizes
        values["WMITER"] = values["WM"] * values["WN"] // (32 * values["TM"] * values["TN"] * values["WNITER"])
        values["WSUBM"], values["WSUBN"] = values["WM"] // values["WMITER"], values["WN"] // values["WNITER"]
        values["threads"] = 32 * (values["BM"] // values["WM"]) * (values["BN"] // values["WN"])
    return configs


def unfused_passes():
    """[(what the kernel computes, arrays read, arrays written)] of fusion step 1, from its launcher."""
    text = (CHAPTER / "fusion" / "01_unfused.cuh").read_text()
    return [(what.strip(), int(reads), int(writes))
            for what, reads, writes in re.findall(r"run[12]\(.*?\);\s*// (.*?)\s+read (\d), write (\d)", text)]


# --- Elementwise -----------------------------------------------------------------------------

def elementwise_step1():
    n, block, cw = 20, 8, 26
    s = Svg(110 + 24 * cw, 190, "Elementwise step 1: one thread per element")
    s.text(20, 22, "Step 1: thread i = blockIdx.x * blockDim.x + threadIdx.x adds element i (blocks of 8 here, 256 in the code)", 12, weight="bold")
    s.text(82, 59, "thread i", 10, "end", fill=MUTED)
    s.text(82, 115, "x, y, z[i]", 10, "end", fill=MUTED)
    for i in range(24):
        x, b = 90 + i * cw, i // block
        s.cell(x, 44, cw - 2, 22, i, THREAD[b] if i < n else IDLE, 9, "white" if i < n else MUTED)
        if i % block == 0:
            s.text(x, 40, "block %d" % b, 10, fill=MUTED)
        if i < n:
            s.line(x + cw / 2 - 1, 66, x + cw / 2 - 1, 98, arrow=True)
            s.cell(x, 100, cw - 2, 22, "", READ)
    s.text(90 + 20 * cw, 84, "i >= n: returns", 10, fill=MUTED)
    s.text(20, 140, "x, y, z: element i at byte 4i. Neighbouring threads read neighbouring floats, so a warp's load is one", 11)
    s.text(20, 156, "128-byte piece of memory (coalesced). The last block reaches past n; the check i < n stops it.", 11)
    s.text(20, 176, "At n = 2^28: 2^20 blocks of 256 threads, each thread doing one add and exiting.", 11, fill=MUTED)
    return s


def elementwise_step2():
    threads, n, cw = 8, 20, 34
    s = Svg(700, 220, "Elementwise step 2: a grid-stride loop")
    s.text(20, 22, "Step 2: a grid of 2 blocks x 4 threads walks 20 elements; each row is one trip of the loop", 12, weight="bold")
    for t in range(threads):
        x = 110 + t * cw
        s.cell(x, 36, cw - 2, 20, "t%d" % t, THREAD[t], 10, "white")
    s.text(100, 50, "thread", 10, "end", fill=MUTED)
    for trip in range(3):
        y = 70 + trip * 30
        s.text(100, y + 15, "i += %d:" % (trip * threads) if trip else "first i:", 10, "end", fill=MUTED)
        for t in range(threads):
            i = trip * threads + t
            s.cell(110 + t * cw, y, cw - 2, 22, i if i < n else "", THREAD[t] if i < n else IDLE, 10,
                   "white" if i < n else MUTED)
    s.text(110 + 4 * cw, 176, "i >= n: the loop ends", 10, fill=MUTED)
    s.text(20, 200, "stride = blockDim.x * gridDim.x: just enough blocks to fill every SM once, each thread adds several elements.", 11)
    s.text(20, 214, "Each trip, the whole grid covers adjacent elements: still coalesced, 4 bytes a thread per load.", 11, fill=MUTED)
    return s


def elementwise_step3():
    head, n4, tail, cw, threads = 3, 6, 2, 20, 4
    n = head + 4 * n4 + tail
    s = Svg(40 + (n + 1) * cw + 150, 210, "Elementwise step 3: float4 with a scalar head and tail")
    s.text(20, 22, "Step 3: x + 1 is not 16-byte aligned: a scalar head, a float4 body (grid of 4 threads), a scalar tail", 12, weight="bold")
    x0 = 20 + cw  # element -1 (before x + 1) sits at x0 - cw
    s.cell(x0 - cw, 50, cw - 2, 22, "", IDLE)
    for i in range(n):
        x = x0 + i * cw
        if i < head:
            owner = i
        elif i < head + 4 * n4:
            owner = (i - head) // 4 % threads
        else:
            owner = i - head - 4 * n4
        s.cell(x, 50, cw - 2, 22, "t%d" % owner, THREAD[owner], 8, "white")
        if (i + 2) % 4 == 0:  # the allocation is 16-byte aligned; x + 1 starts one float in
            s.line(x + cw - 1, 40, x + cw - 1, 82, "#c00", 1.5)
    for j in range(n4):
        x = x0 + (head + 4 * j) * cw
        s.line(x, 88, x + 4 * cw - 2, 88, THREAD[j % threads], 3)
        s.text(x + 2 * cw - 1, 102, "float4 %d" % j, 9, "middle", fill=MUTED)
    s.text(x0, 122, "head", 10)
    s.text(x0 + head * cw, 122, "body: 16 bytes a thread per load (LDG.E.128), grid-stride", 10)
    s.text(x0 + (head + 4 * n4) * cw, 122, "tail", 10)
    s.text(x0 + n * cw + 6, 46, "red: 16-byte", 10, fill="#c00")
    s.text(x0 + n * cw + 6, 60, "boundaries", 10, fill="#c00")
    s.text(20, 156, "A warp instruction now moves 32 x 16 = 512 bytes instead of 128: a quarter of the load and store instructions.", 11)
    s.text(20, 172, "The head runs up to the first boundary, the tail takes the last (n - head) % 4 elements. If x, y and z sit at", 11)
    s.text(20, 188, "different offsets from a boundary, no split aligns all three, and the launcher falls back to step 2.", 11)
    return s


# --- Reduction -------------------------------------------------------------------------------

VALUES = [3, 1, 7, 0, 4, 1, 6, 3, 2, 5, 1, 4, 0, 2, 3, 1]  # the figure's inputs


def bank_ways(indices, banks=32):
    """Largest number of distinct 4-byte words one warp touches in one bank of shared memory."""
    words = {}
    for index in indices:
        words.setdefault(index % banks, set()).add(index)
    return max((len(w) for w in words.values()), default=0)


def tree_rounds(kind, n):
    """[(stride, [(thread, dst, src)])] of one block's tree for the step's addressing."""
    rounds = []
    if kind == "sequential":
        stride = n // 2
        while stride:
            rounds.append((stride, [(t, t, t + stride) for t in range(stride)]))
            stride //= 2
    else:
        stride = 1
        while stride < n:
            if kind == "divergent":
                ops = [(t, t, t + stride) for t in range(n) if t % (2 * stride) == 0]
            else:  # strided: index = 2 * stride * t
                ops = [(t, 2 * stride * t, 2 * stride * t + stride) for t in range(n) if 2 * stride * t < n]
            rounds.append((stride, ops))
            stride *= 2
    return rounds


def round_note(kind, stride):
    """What one round costs at the code's real sizes: 256 threads, warps of 32, 32 banks."""
    block = 256
    ops = [op for st, ops in tree_rounds(kind, block) if st == stride for op in ops]
    busy = sorted({t for t, _, _ in ops})
    warps = sorted({t // 32 for t in busy})
    # s[dst] and s[src] are separate instructions: the worst warp's worst one of the two.
    ways = max(max(bank_ways([d for t, d, _ in ops if t // 32 == w]), bank_ways([r for t, _, r in ops if t // 32 == w]))
               for w in warps)
    conflicts = "no bank conflict" if ways <= 1 else "%d-way bank conflict" % ways
    return "%d threads busy in %d warp%s; %s" % (len(busy), len(warps), "" if len(warps) == 1 else "s", conflicts)


def draw_tree(s, kind, x0, y0, values, cw=30, rh=58):
    n = len(values)
    for i, v in enumerate(values):
        s.cell(x0 + i * cw, y0, cw - 4, 22, v, MEMORY, 10)
    s.text(x0 - 8, y0 + 15, "s[ ]", 10, "end", fill=MUTED)
    y = y0
    for stride, ops in tree_rounds(kind, n):
        y += rh
        new = list(values)
        for t, dst, src in ops:
            new[dst] = values[dst] + values[src]
            s.line(x0 + dst * cw + cw / 2 - 2, y - rh + 22, x0 + dst * cw + cw / 2 - 2, y - 2, MUTED, 1, arrow=True)
            s.line(x0 + src * cw + cw / 2 - 2, y - rh + 22, x0 + dst * cw + cw / 2 - 2, y - 2, MUTED, 1, arrow=True)
        active = {dst: t for t, dst, _ in ops}
        for i, v in enumerate(new):
            if i in active:
                s.cell(x0 + i * cw, y, cw - 4, 22, v, THREAD[0], 10, "white")
                s.text(x0 + i * cw + cw / 2 - 2, y + 33, "t%d" % active[i], 8, "middle", fill=MUTED)
            else:
                s.cell(x0 + i * cw, y, cw - 4, 22, "", "white", stroke="#bbb")
        s.text(x0 + n * cw + 8, y + 10, "stride %d" % stride, 10, weight="bold")
        s.text(x0 + n * cw + 8, y + 24, "at 256 threads: " + round_note(kind, stride), 9, fill=MUTED)
        values = new
    return y + 22


def shared_memory_banks():
    """One warp's shared-memory reads in two steps' first rounds, word by word in the 32 banks."""
    banks, cw, rh = 32, 24, 22
    s = Svg(120 + banks * cw, 330, "Shared memory: 32 banks, and a bank conflict")
    s.text(20, 22, "Shared memory: word w (4 bytes) lives in bank w % 32. One warp reads one word a lane; each bank serves one word a pass", 12, weight="bold")
    x0 = 100
    for b in range(banks):
        s.text(x0 + b * cw + cw / 2 - 1, 48, str(b), 8, "middle", fill=MUTED)
    s.text(x0 - 8, 48, "bank", 9, "end", fill=MUTED)
    panels = [("step 3, round 1 (stride 128): lane t reads s[t]", [t for t in range(32)]),
              ("step 2, round 1 (stride 1): lane t reads s[2 * t]", [2 * t for t in range(32)])]
    y = 58
    for title, words in panels:
        ways = bank_ways(words, banks)
        s.text(x0, y + 14, title, 11, weight="bold")
        y += 22
        lane_of = {w: t for t, w in enumerate(words)}
        for row in range(2):
            s.text(x0 - 8, y + 15, "s[%d..%d]" % (32 * row, 32 * row + 31), 9, "end", fill=MUTED)
            for b in range(banks):
                w = 32 * row + b
                if w in lane_of:
                    s.cell(x0 + b * cw, y, cw - 2, rh - 2, lane_of[w], THREAD[row], 8, "white")
                else:
                    s.cell(x0 + b * cw, y, cw - 2, rh - 2, "", "white", stroke="#bbb")
            y += rh
        verdict = ("every bank serves one word: 1 pass (wavefront)" if ways == 1 else
                   "banks 0, 2, 4, ... each hold %d of the words: %d passes (a %d-way bank conflict); odd banks idle"
                   % (ways, ways, ways))
        s.text(x0, y + 14, verdict, 10, fill=MUTED)
        y += 34
    s.text(20, y + 6, "Numbers in the boxes: the lane that reads that word. A warp's access costs as many passes as the busiest", 11)
    s.text(20, y + 22, "bank has distinct words (lanes reading the same word share it). Counted by ncu as wavefronts and bank conflicts.", 11)
    s.height = y + 36
    return s


def reduction_tree_figure(step, kind, title, lines):
    s = Svg(860, 360 + 16 * len(lines), "Reduction step %d: %s" % (step, title))
    s.text(20, 22, "Step %d: %s (16 elements of one block shown; 256 in the code)" % (step, title), 12, weight="bold")
    bottom = draw_tree(s, kind, 60, 40, VALUES)
    for k, line in enumerate(lines):
        s.text(20, bottom + 40 + 16 * k, line, 11)
    s.height = bottom + 50 + 16 * len(lines)
    return s


def reduction_step1():
    return reduction_tree_figure(1, "divergent", "interleaved addressing, divergent warps", [
        "Thread t adds s[t + stride] into s[t] when t % (2 * stride) == 0. The busy threads are spread over every warp,",
        "so every warp keeps running for a few threads (divergence), and % is slow. The result is s[0]; thread 0 writes it."])


def reduction_step2():
    return reduction_tree_figure(2, "strided", "interleaved addressing, strided index", [
        "Thread t works on index = 2 * stride * t: busy threads are packed into the first warps, which drop out whole.",
        "But the indices of neighbouring threads are 2 * stride apart: they land in the same shared-memory bank (32 banks",
        "of 4 bytes), and the accesses to one bank are served one after another."])


def reduction_step3():
    return reduction_tree_figure(3, "sequential", "sequential addressing", [
        "s[t] += s[t + stride], stride halving from 128: neighbouring threads touch neighbouring words (no bank conflict)",
        "and the busy threads are the first ones (no divergence until fewer than 32 are left). Half are idle from round one."])


def reduction_step4():
    n, cw = 16, 30
    s = Svg(860, 420, "Reduction step 4: first add during load")
    s.text(20, 22, "Step 4: each block covers 2 x 256 elements; thread t stores in[i] + in[i + 256] (2 x 16 shown)", 12, weight="bold")
    g = 14
    for i in range(2 * n):
        s.cell(60 + i * g, 42, g - 2, 18, "", READ if i < n else WRITE)
    s.text(52, 55, "in[ ]", 10, "end", fill=MUTED)
    for t in range(n):
        s.line(60 + t * g + g / 2 - 1, 60, 60 + t * cw + cw / 2 - 2, 98, MUTED, 0.6, arrow=True)
        s.line(60 + (t + n) * g + g / 2 - 1, 60, 60 + t * cw + cw / 2 - 2, 98, MUTED, 0.6, arrow=True)
    s.text(60 + 2 * n * g + 10, 49, "s[t] = first half (blue) + second half (orange):", 10, fill=MUTED)
    s.text(60 + 2 * n * g + 10, 63, "the first round of adds happens while loading", 10, fill=MUTED)
    bottom = draw_tree(s, "sequential", 60, 100, [VALUES[t] + VALUES[(t + 5) % n] for t in range(n)])
    s.text(20, bottom + 30, "No thread is idle while the block loads, and half as many blocks (and partial sums) are needed. The tree is step 3's.", 11)
    s.height = bottom + 44
    return s


def reduction_step5():
    lanes, cw = 16, 34
    s = Svg(860, 430, "Reduction step 5: warp shuffles")
    s.text(20, 22, "Step 5: inside a warp, __shfl_down_sync(mask, v, offset) hands lane l the v of lane l + offset (16 lanes of 32 shown)", 12, weight="bold")
    values = [VALUES[i] + VALUES[(i + 3) % 16] for i in range(lanes)]
    y = 44
    for l, v in enumerate(values):
        s.cell(70 + l * cw, y, cw - 6, 22, v, MEMORY, 10)
    s.text(62, y + 15, "lane v", 10, "end", fill=MUTED)
    offset = lanes // 2
    while offset:
        y += 56
        new = [values[l] + (values[l + offset] if l + offset < lanes else 0) for l in range(lanes)]
        for l in range(offset):
            s.line(70 + l * cw + cw / 2 - 3, y - 34, 70 + l * cw + cw / 2 - 3, y - 2, MUTED, 1, arrow=True)
            s.line(70 + (l + offset) * cw + cw / 2 - 3, y - 34, 70 + l * cw + cw / 2 - 3, y - 2, THREAD[l % 8], 1.2, arrow=True)
        for l in range(lanes):
            if l < offset:
                s.cell(70 + l * cw, y, cw - 6, 22, new[l], THREAD[l % 8], 10, "white")
            else:
                s.cell(70 + l * cw, y, cw - 6, 22, "", "white", stroke="#bbb")
        s.text(70 + lanes * cw + 4, y + 15, "offset %d" % offset, 10, weight="bold")
        values, offset = new, offset // 2
    s.text(70 + lanes * cw + 4, y + 32, "lane 0: the warp's sum", 10, fill=MUTED)
    y += 62
    s.text(20, y, "Register to register: no shared memory and no __syncthreads() inside the warp (offsets 16, 8, 4, 2, 1 in the code).", 11)
    y += 22
    for w in range(8):
        s.cell(70 + w * 56, y, 48, 22, "warp %d" % w, THREAD[w], 10, "white")
        s.line(70 + w * 56 + 24, y + 22, 70 + w * 28 + 240, y + 58, MUTED, 0.8, arrow=True)
    for w in range(8):
        s.cell(70 + w * 28 + 228, y + 60, 26, 20, "", THREAD[w])
    s.text(70 + 8 * 28 + 236, y + 68, "warp_sums[8] in shared memory, one __syncthreads(),", 10)
    s.text(70 + 8 * 28 + 236, y + 82, "then warp 0 adds them with the same shuffles", 10)
    s.height = y + 100
    return s


def reduction_step6():
    blocks, per_block, chunks, cw = 2, 4, 24, 26
    threads = blocks * per_block
    s = Svg(860, 330, "Reduction step 6: grid-stride float4 loop, then one block on the partial sums")
    s.text(20, 22, "Step 6: one wave of blocks (2 x 4 threads shown); thread t adds float4s t, t + 8, t + 16 ... in a register", 12, weight="bold")
    s.text(40, 44, "each box is a float4 (16 bytes); each trip the grid reads 8 adjacent float4s", 10, fill=MUTED)
    for c in range(chunks):
        t = c % threads
        s.cell(40 + c * cw, 52, cw - 3, 22, "t%d" % t, THREAD[t], 9, "white")
    for t in range(threads):
        x = 40 + t * 60
        s.cell(x, 110, 50, 24, "sum t%d" % t, THREAD[t], 10, "white")
        for c in range(t, chunks, threads):
            s.line(40 + c * cw + cw / 2, 74, x + 25, 110, THREAD[t], 0.6)
    s.text(40 + threads * 60, 126, "registers", 10, fill=MUTED)
    for b in range(blocks):
        x = 40 + b * per_block * 60 + 60
        s.line(40 + b * per_block * 60 + 25, 134, x + 40, 170, MUTED, 1, arrow=True)
        s.line(40 + (b * per_block + per_block - 1) * 60 + 25, 134, x + 40, 170, MUTED, 1, arrow=True)
        s.cell(x, 172, 80, 24, "partial %d" % b, HIGHLIGHT, 10)
        s.text(x + 40, 210, "block_sum (step 5)", 9, "middle", fill=MUTED)
    for b in range(blocks):
        s.line(40 + b * per_block * 60 + 140, 196, 560, 243, INK, 1.2, arrow=True)
    s.cell(560, 230, 150, 26, "launch 2: one block", WRITE, 10)
    s.text(720, 248, "-> *out", 11)
    s.text(20, 290, "A tree per thousand loads instead of a tree per load: the ~1000 partial sums of one wave need one more small launch.", 11)
    s.text(20, 306, "The loop keeps four float4 loads in flight per thread (#pragma unroll 4): memory stays busy.", 11, fill=MUTED)
    return s


def reduction_step7():
    order = [2, 0, 3, 1]  # the order in which the figure's blocks finish
    s = Svg(860, 260, "Reduction step 7: single pass, the last block sums the partials")
    s.text(20, 22, "Step 7: one launch. Each block writes its partial, then counts itself done; the block that sees gridDim.x - 1 is last", 12, weight="bold")
    for k, b in enumerate(order):
        x = 40 + k * 150
        s.cell(x, 44, 120, 24, "block %d finishes" % b, THREAD[b], 10, "white")
        s.line(x + 60, 68, x + 60, 96, THREAD[b], 1.2, arrow=True)
        s.cell(x, 98, 120, 24, "fetch_add -> %d" % k, HIGHLIGHT if k == len(order) - 1 else MEMORY, 10)
        s.line(x + 60, 122, 100 + b * 40 + 15, 164, MUTED, 0.8, arrow=True)
    s.text(40 + 4 * 150, 60, "in the order", 10, fill=MUTED)
    s.text(40 + 4 * 150, 74, "they happen to end", 10, fill=MUTED)
    s.text(40 + 4 * 150, 114, "the counter in global memory", 10, fill=MUTED)
    for b in range(4):
        s.cell(100 + b * 40, 166, 30, 22, "p%d" % b, THREAD[b], 10, "white")
    s.text(92, 181, "partials", 10, "end", fill=MUTED)
    s.line(20 + 3 * 150 + 80, 122, 256, 177, INK, 1.4, arrow=True, dash="4 3")
    s.text(440, 160, "block 1 saw 3 = gridDim.x - 1: it reads every partial, sums them,", 10)
    s.text(440, 174, "writes *out and resets the counter to 0 for the next launch", 10)
    s.text(20, 224, "fetch_add(1, acq_rel): the release makes a block's partial visible before its count; the acquire lets the last block", 11)
    s.text(20, 240, "read them all. The order of the final sum is fixed, so the result is the same every run (a float atomicAdd's is not).", 11)
    return s


# --- SGEMM -----------------------------------------------------------------------------------

def matrix(s, x, y, rows, cols, cw, name, marks=None, label_below=None):
    """A rows x cols grid; marks = {(r, c): colour}."""
    marks = marks or {}
    for r in range(rows):
        for c in range(cols):
            s.rect(x + c * cw, y + r * cw, cw, cw, marks.get((r, c), "white"), "#bbb", 0.5)
    s.rect(x, y, cols * cw, rows * cw, "none", INK, 1.2)
    s.text(x + cols * cw / 2, y - 6, name, 11, "middle", weight="bold")
    if label_below:
        s.text(x + cols * cw / 2, y + rows * cw + 14, label_below, 10, "middle", fill=MUTED)


def sgemm_access(step):
    n, cw, k = 8, 20, 3
    warp = range(n)
    coalesced = step == 2
    title = "coalesced: threadIdx.x picks the column" if coalesced else "naive: threadIdx.x picks the row"
    s = Svg(860, 330, "SGEMM step %d: %s" % (step, title))
    s.text(20, 22, "Step %d, %s. One warp (8 threads of 32 shown), at one k = %d:" % (step, title, k), 12, weight="bold")
    if coalesced:
        c_marks = {(2, t): THREAD[t] for t in warp}
        a_marks = {(2, k): INK}
        b_marks = {(k, t): THREAD[t] for t in warp}
    else:
        c_marks = {(t, 2): THREAD[t] for t in warp}
        a_marks = {(t, k): THREAD[t] for t in warp}
        b_marks = {(k, 2): INK}
    matrix(s, 40, 60, n, n, cw, "A (M x K)", a_marks)
    matrix(s, 260, 60, n, n, cw, "B (K x N)", b_marks)
    matrix(s, 480, 60, n, n, cw, "C (M x N)", c_marks)
    s.text(470, 145, "=", 20, "middle")
    s.text(250, 145, "x", 16, "middle")
    if coalesced:
        notes = ["A[row][k]: one address for the whole warp (one broadcast).",
                 "B[k][col .. col+31]: 32 neighbouring floats, 128 contiguous bytes: one coalesced load.",
                 "The stores to C are contiguous too. Every FMA still waits on a load from global memory (mostly L1/L2 hits)."]
    else:
        notes = ["A[row][k] for 32 different rows, K floats apart: 32 separate memory transactions for 128 useful bytes,",
                 "most of each 32-byte sector fetched is thrown away. B[k][col] is one address for the warp (a broadcast).",
                 "C is stored 32 rows apart as well. The work per thread is step 2's; only the mapping of threads differs."]
    s.text(40, 236, "coloured: the warp's 8 threads and what each reads or writes; black: one value for the whole warp", 10, fill=MUTED)
    name, marks = ("B", b_marks) if coalesced else ("A", a_marks)
    s.text(40, 262, "%s in memory, row after row (row-major): the warp's addresses at this k" % name, 10, weight="bold")
    for i in range(n * n):
        s.rect(40 + i * 10, 270, 10, 14, marks.get((i // n, i % n), "white"), "#bbb", 0.5)
    for r in range(1, n):
        s.line(40 + r * n * 10, 266, 40 + r * n * 10, 288, INK, 1)
    for i, line in enumerate(notes):
        s.text(40, 310 + 16 * i, line, 11)
    s.height = 310 + 16 * len(notes)
    return s


def sgemm_register_tiling(step):
    """Steps 4 and 5: a block tile of C, the tiles of A and B in shared memory, one thread's results."""
    if step == 4:
        u, BM, BN, BK, TM, TN, threads = 4, 64, 64, 8, 8, 1, 512
        title = "1-D register tiling: a column of 8 results a thread"
    else:
        u, BM, BN, BK, TM, TN, threads = 2, 128, 128, 8, 8, 8, 256
        title = "2-D register tiling: 8 x 8 results a thread"
    s = Svg(860, 140 + BM * u + 110, "SGEMM step %d: %s" % (step, title))
    s.text(20, 22, "Step %d: %s (block tile %d x %d, BK = %d, %d threads)" % (step, title, BM, BN, BK, threads), 12, weight="bold")
    ax, ay = 40, 60 + BK * u + 30
    bx, by = ax + BK * u + 30, 60
    # A's tile (BM x BK) left of C, B's tile (BK x BN) above C, as in the product.
    s.rect(ax, ay, BK * u, BM * u, READ)
    s.text(ax + BK * u / 2, ay - 6, "As", 11, "middle", weight="bold")
    s.rect(bx, by, BN * u, BK * u, READ)
    s.text(bx - 6, by + BK * u - 4, "Bs", 11, "end", weight="bold")
    s.rect(bx, ay, BN * u, BM * u, "white")
    for r in range(TM, BM, TM):  # the threads' tiles
        s.line(bx, ay + r * u, bx + BN * u, ay + r * u, "#ddd", 0.5)
    for c in range(TN, BN, TN if TN > 1 else BN):
        s.line(bx + c * u, ay, bx + c * u, ay + BM * u, "#ddd", 0.5)
    s.text(bx + BN * u / 2, ay + BM * u + 16, "block tile of C: one block's results", 10, "middle", fill=MUTED)
    r0, c0, k = 3 * TM, 5 * TN if TN > 1 else 21, 3
    s.rect(bx + c0 * u, ay + r0 * u, TN * u, TM * u, THREAD[1], THREAD[1])
    s.rect(ax + k * u, ay + r0 * u, u, TM * u, SHARED_READ, SHARED_READ)
    s.rect(bx + c0 * u, by + k * u, TN * u, u, SHARED_READ, SHARED_READ)
    s.line(ax + k * u + u, ay + r0 * u + TM * u / 2, bx + c0 * u - 2, ay + r0 * u + TM * u / 2, SHARED_READ, 1, arrow=True, dash="3 2")
    s.line(bx + c0 * u + TN * u / 2, by + k * u + u, bx + c0 * u + TN * u / 2, ay + r0 * u - 2, SHARED_READ, 1, arrow=True, dash="3 2")
    tx = bx + BN * u + 30
    if step == 4:
        lines = ["One thread (orange): 8 results, rows", "r .. r+7 of one column, in registers.",
                 "At each k it reads one value of Bs", "into a register and multiplies it by",
                 "8 values of As (the same 8 for a", "whole warp: broadcasts): 8 FMAs for",
                 "9 shared-memory loads instead of 16.", "",
                 "Global memory: every value loaded", "feeds 64 FMAs of the block."]
    else:
        lines = ["One thread (orange): 8 x 8 results", "in registers. At each k it reads 8",
                 "values of As and 8 of Bs (blue) and", "does their outer product: 64 FMAs",
                 "for 16 shared loads (0.25 a FMA).", "",
                 "Per (BM + BN) x 4 bytes loaded at", "each k the block does 2 BM BN FLOP:",
                 "%d FLOP per byte from global memory." % (2 * BM * BN // ((BM + BN) * 4))]
    for i, line in enumerate(lines):
        s.text(tx, ay + 10 + 16 * i, line, 11)
    s.text(20, ay + BM * u + 50, "Dark blue: what the thread reads from shared memory at one k; dashed: where it goes; grey grid: the threads' tiles.", 10, fill=MUTED)
    s.text(20, ay + BM * u + 64, "Drawn to scale, %d pixels an element." % u, 10, fill=MUTED)
    s.height = ay + BM * u + 74
    return s


def sgemm_step6():
    cw, BM, BK = 16, 16, 8
    s = Svg(860, 330, "SGEMM step 6: float4 loads, A's tile stored transposed")
    s.text(20, 22, "Step 6: each thread fetches float4s (16 bytes) from global memory; A's tile goes to shared memory transposed", 12, weight="bold")
    ax, ay = 40, 60
    marks = {(5, c): THREAD[0] for c in range(4)}
    marks.update({(5, c): THREAD[2] for c in range(4, 8)})
    matrix(s, ax, ay, BM, BK, cw, "A's tile in global memory", marks, "row m, columns k .. k+7: two float4s")
    tx = 360
    tmarks = {(c, 5): THREAD[0] for c in range(4)}
    tmarks.update({(c, 5): THREAD[2] for c in range(4, 8)})
    tmarks.update({(3, m): THREAD[1] for m in range(8, 16)})
    matrix(s, tx, ay, BK, BM, cw, "As[k][m] in shared memory (transposed)", tmarks)
    s.line(ax + BK * cw + 6, ay + 5 * cw + 8, tx - 6, ay + 2 * cw, INK, 1.2, arrow=True)
    s.text(ax + BK * cw + 14, ay + 5 * cw + 30, "stash(): one float4", 10)
    s.text(ax + BK * cw + 14, ay + 5 * cw + 44, "becomes a column", 10)
    s.text(tx + BM * cw + 10, ay + 3 * cw + 12, "<- at k = 3, a thread's 8 rows", 10)
    s.text(tx + BM * cw + 10, ay + 3 * cw + 26, "are contiguous: 2 LDS.128", 10)
    notes = ["Global memory: one LDG.E.128 per float4 instead of four 4-byte loads (fetch()).",
             "Shared memory: in step 5 a thread's 8 values of A at one k lay in 8 rows of As; transposed, they are 8 neighbouring",
             "floats, read like B's as two float4s. C is read and written as float4 too. Fewer instructions per FMA; the tiles are",
             "step 5's (16 of 128 rows shown). A float4 needs whole tiles and 16-byte alignment: other sizes run the checked kernel."]
    for i, line in enumerate(notes):
        s.text(40, 370 + 16 * i, line, 11)
    s.height = 370 + 16 * len(notes)
    return s


def draw_warp_tiles(s, cfg, x, y, u, lane_grid=True, label=True):
    """cfg's block tile at u pixels an element: warps, the first warp's sub-tiles, lane 0's results."""
    BM, BN, WM, WN = cfg["BM"], cfg["BN"], cfg["WM"], cfg["WN"]
    WSUBM, WSUBN, TM, TN = cfg["WSUBM"], cfg["WSUBN"], cfg["TM"], cfg["TN"]
    s.rect(x, y, BN * u, BM * u, "white", INK, 1.5)
    for w in range((BM // WM) * (BN // WN)):
        wy, wx = w // (BN // WN) * WM, w % (BN // WN) * WN
        s.rect(x + wx * u, y + wy * u, WN * u, WM * u, HIGHLIGHT if w == 0 else "white", INK, 1)
        if label:
            s.text(x + wx * u + WN * u - 4, y + wy * u + WM * u - 5, "warp %d" % w, 10, "end", fill=MUTED)
    for i in range(cfg["WMITER"]):
        for j in range(cfg["WNITER"]):
            sx, sy = x + j * WSUBN * u, y + i * WSUBM * u
            s.rect(sx, sy, WSUBN * u, WSUBM * u, "none", THREAD[0], 1, dash="4 2")
            if lane_grid and i == 0 and j == 0:
                for lane in range(32):
                    ly, lx = lane // (WSUBN // TN) * TM, lane % (WSUBN // TN) * TN
                    s.rect(sx + lx * u, sy + ly * u, TN * u, TM * u, "none", "#999", 0.4)
            s.rect(sx, sy, TN * u, TM * u, THREAD[1], THREAD[1])


def sgemm_step7():
    cfg = tile_configs()["WarptileConfig"]
    u = 3
    s = Svg(860, 120 + cfg["BM"] * u + 70, "SGEMM step 7: warp tiling")
    s.text(20, 22, "Step 7: block tile %d x %d -> %d warps of %d x %d -> sub-tiles of %d x %d -> thread tiles of %d x %d"
           % (cfg["BM"], cfg["BN"], cfg["threads"] // 32, cfg["WM"], cfg["WN"], cfg["WSUBM"], cfg["WSUBN"], cfg["TM"], cfg["TN"]),
           12, weight="bold")
    draw_warp_tiles(s, cfg, 40, 50, u)
    tx = 40 + cfg["BN"] * u + 30
    results = (cfg["WMITER"] * cfg["TM"], cfg["WNITER"] * cfg["TN"])
    lines = ["Warp 0 (shaded) computes its %d x %d piece" % (cfg["WM"], cfg["WN"]),
             "as %d x %d sub-tiles (dashed). In each," % (cfg["WMITER"], cfg["WNITER"]),
             "its 32 lanes form a %d x %d grid of" % (cfg["WSUBM"] // cfg["TM"], cfg["WSUBN"] // cfg["TN"]),
             "%d x %d thread tiles (grey, first sub-tile)." % (cfg["TM"], cfg["TN"]),
             "",
             "Lane 0 owns the orange tile of every",
             "sub-tile: %d x %d results in registers." % results,
             "",
             "At each k a warp reads from shared",
             "memory a few contiguous runs: few,",
             "conflict-free LDS.128. BK = %d halves" % cfg["BK"],
             "the barriers per FMA against step 6."]
    for i, line in enumerate(lines):
        s.text(tx, 66 + 16 * i, line, 11)
    s.text(20, 50 + cfg["BM"] * u + 30, "Drawn to scale from WarptileConfig in sgemm/07_warptiling.cuh, 3 pixels an element.", 10, fill=MUTED)
    return s


def sgemm_step8():
    s = Svg(860, 300, "SGEMM step 8: double buffering")
    s.text(20, 22, "Step 8: two buffers of tiles in shared memory; the next tile's loads are in flight while the warps compute", 12, weight="bold")
    unit = 24

    def lane(y, label, boxes):
        s.text(150, y + 15, label, 10, "end")
        for start, length, text, fill in boxes:
            s.cell(160 + start * unit, y, length * unit - 2, 20, text, fill, 9)

    s.text(20, 52, "step 7, one tile after another:", 11, weight="bold")
    boxes_f, boxes_s, boxes_c = [], [], []
    for t in range(3):
        base = t * 9
        boxes_f.append((base, 3, "fetch %d" % t, READ))
        boxes_s.append((base + 3, 1, "st", WRITE))
        boxes_c.append((base + 4, 5, "compute %d" % t, HIGHLIGHT))
    lane(62, "global -> registers", boxes_f)
    lane(86, "registers -> shared", boxes_s)
    lane(110, "FFMA from shared", boxes_c)
    s.text(20, 158, "step 8, compute on buffer i while tile i + 1 is fetched, then stash it in buffer i ^ 1:", 11, weight="bold")
    boxes_f, boxes_s, boxes_c = [(0, 3, "fetch 0", READ)], [(3, 1, "st", WRITE)], []
    for t in range(3):
        base = 4 + t * 6
        if t < 2:
            boxes_f.append((base, 3, "fetch %d" % (t + 1), READ))
            boxes_s.append((base + 5, 1, "st", WRITE))
        boxes_c.append((base, 5, "compute %d (buf %d)" % (t, t % 2), HIGHLIGHT))
    lane(168, "global -> registers", boxes_f)
    lane(192, "registers -> shared", boxes_s)
    lane(216, "FFMA from shared", boxes_c)
    s.text(20, 256, "One __syncthreads() a tile instead of two, and a global load's latency hides behind a tile of FMAs. It costs registers", 11)
    s.text(20, 272, "(the fetched float4s stay live during compute) and twice the shared memory. Widths are illustrative, not measured.", 11)
    return s


def sgemm_sweep():
    configs = tile_configs()
    names = ["Tiles8a", "Tiles8b", "Tiles8c", "Tiles8d", "Tiles8e"]
    u = 1.1
    s = Svg(860, 346, "SGEMM step 8's tile sweep: configurations 8a-8e")
    s.text(20, 22, "Step 8's sweep: five tile configurations of one kernel (from sgemm/08_tile_sweep.cuh), drawn to scale", 12, weight="bold")
    x = 20
    for name in names:
        cfg = configs[name]
        draw_warp_tiles(s, cfg, x, 60, u, lane_grid=False, label=False)
        cx = x + cfg["BN"] * u / 2
        s.text(cx, 50, name[-2:], 13, "middle", weight="bold")
        facts = ["%d x %d x %d block" % (cfg["BM"], cfg["BN"], cfg["BK"]),
                 "%d warps of %d x %d" % (cfg["threads"] // 32, cfg["WM"], cfg["WN"]),
                 "%d x %d results a thread" % (cfg["WMITER"] * cfg["TM"], cfg["WNITER"] * cfg["TN"]),
                 "min blocks/SM: %s" % (cfg["MIN_BLOCKS"] or "not set")]
        for i, line in enumerate(facts):
            s.text(cx, 60 + 128 * u + 18 + 14 * i, line, 10, "middle")
        x += cfg["BN"] * u + 12
    s.text(20, 316, "Shaded: warp 0; dashed: its sub-tiles; orange: lane 0's results. 8b splits 8a's 8 rows into 2 runs of 4; 8c-8e hold", 11)
    s.text(20, 332, "half the results a thread so that ptxas fits 16 warps on an SM; 8d halves BK; 8e halves the block tile's height.", 11)
    return s


# --- Fusion ----------------------------------------------------------------------------------

def fusion_bytes():
    passes = unfused_passes()
    unit = 24
    s = Svg(860, 150 + 24 * len(passes) + 120, "Fusion: the bytes each step moves")
    s.text(20, 22, "Fusion: every box is one pass over n floats (4n bytes) through memory; blue read, orange written", 12, weight="bold")
    y = 44
    s.text(20, y + 10, "step 1, eight kernels (fusion/01_unfused.cuh):", 11, weight="bold")
    total = 0
    for what, reads, writes in passes:
        y += 24
        s.text(250, y + 14, what, 10, "end", fill=MUTED)
        for r in range(reads):
            s.cell(260 + (total + r) * unit, y, unit - 2, 18, "", READ)
        for w in range(writes):
            s.cell(260 + (total + reads + w) * unit, y, unit - 2, 18, "", WRITE)
        total += reads + writes
    s.text(260 + total * unit + 8, y + 14, "%d passes" % total, 11, weight="bold")
    y += 44
    s.text(20, y + 10, "steps 2 and 3, one kernel: read x, keep every intermediate in registers, write y:", 11, weight="bold")
    y += 20
    s.text(250, y + 14, "y = gelu(x)", 10, "end", fill=MUTED)
    s.cell(260, y, unit - 2, 18, "", READ)
    s.cell(260 + unit, y, unit - 2, 18, "", WRITE)
    s.text(260 + 2 * unit + 8, y + 14, "2 passes (step 3 moves them as float4)", 11, weight="bold")
    y += 44
    s.text(20, y, "If every kernel moved bytes at the same rate, step 1 would take %d / 2 = %g times as long as step 2." % (total, total / 2), 11)
    s.height = y + 20
    return s


FIGURES = {
    "elementwise_1_one_per_thread.svg": elementwise_step1,
    "elementwise_2_grid_stride.svg": elementwise_step2,
    "elementwise_3_float4.svg": elementwise_step3,
    "shared_memory_banks.svg": shared_memory_banks,
    "reduction_1_interleaved_divergent.svg": reduction_step1,
    "reduction_2_interleaved_strided.svg": reduction_step2,
    "reduction_3_sequential.svg": reduction_step3,
    "reduction_4_first_add_during_load.svg": reduction_step4,
    "reduction_5_warp_shuffle.svg": reduction_step5,
    "reduction_6_grid_stride.svg": reduction_step6,
    "reduction_7_single_pass.svg": reduction_step7,
    "sgemm_1_naive.svg": lambda: sgemm_access(1),
    "sgemm_2_coalesced.svg": lambda: sgemm_access(2),
    "sgemm_4_1d_blocktiling.svg": lambda: sgemm_register_tiling(4),
    "sgemm_5_2d_blocktiling.svg": lambda: sgemm_register_tiling(5),
    "sgemm_6_vectorized.svg": sgemm_step6,
    "sgemm_7_warptiling.svg": sgemm_step7,
    "sgemm_8_double_buffering.svg": sgemm_step8,
    "sgemm_8_tile_sweep.svg": sgemm_sweep,
    "fusion_bytes.svg": fusion_bytes,
}


if __name__ == "__main__":
    sys.exit(redraw_or_check(FIGURES, HERE, "python3 07_optimization/diagrams/draw_figures.py"))
