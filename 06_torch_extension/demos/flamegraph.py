"""Where the time goes, from the stacks torch.profiler exports: a text tree and an SVG flame graph.

    python3 06_torch_extension/demos/flamegraph.py stacks.txt [--svg stacks.svg] [--min-share 1]

prof.export_stacks(path, "self_cuda_time_total") writes one line per recorded operator call in the
"folded" format of Brendan Gregg's flame graph tools: the Python call stack, outermost first, frames
separated by ';', then a space and the time in microseconds:

    train.py(40):_<module>;train.py(31):step;torch/nn/functional.py(1700):gelu 1234

CS336's lecture rendered such files with flamegraph.pl. This script needs no download: it merges the
stacks into a tree and prints it (each frame's share of the total, including its callees), and writes
an SVG flame graph (width = time; hover a box to see the frame and its time).
"""

import argparse
import html
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from summary import Summary


@dataclass
class Node:
    name: str
    total: float = 0.0  # this frame and everything it called
    children: dict[str, "Node"] = field(default_factory=dict)


def read_folded(lines) -> Node:
    """Merges folded stack lines into one tree rooted at "all"."""
    root = Node("all")
    for line in lines:
        stack, _, value = line.rstrip("\n").rpartition(" ")
        if not stack or not value.replace(".", "", 1).isdigit():
            continue  # not a "frames value" line
        root.total += float(value)
        node = root
        for frame in stack.split(";"):
            node = node.children.setdefault(frame, Node(frame))
            node.total += float(value)
    return root


def _frame(text: str, limit: int = 80) -> str:
    """A frame as one word of the folded format (no spaces or semicolons), cut to a readable length."""
    text = text.translate(str.maketrans(" ;\t\n", "____"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _backward_function(event):
    """The autograd node (e.g. MmBackward0) an event ran under, or None for forward work."""
    while event is not None:
        if event.scope == 1:  # RecordScope::BACKWARD_FUNCTION
            return event
        event = event.cpu_parent
    return None


def folded_from_profile(prof) -> list[str]:
    """One folded line per GPU kernel of a torch.profiler profile taken with with_stack=True: the Python
    stack of the operator that launched it, the operator, the kernel, and the kernel's time in us.

    Backward work runs in autograd's engine, not under a Python line; the profiler gives it the stack
    of the forward operator it differentiates, and the line here names the autograd node as well.
    Each kernel is counted once, under the one event the profiler attached it to; export_stacks, which
    writes every event's own ("self") time, can count a kernel several times under the same stack."""
    prof.key_averages()  # builds the event tree, which gives backward events their forward stacks
    lines = []
    for event in prof.events():
        for kernel in event.kernels:
            frames = [_frame(f) for f in reversed(event.stack)] or ["(no_Python_stack)"]
            node = _backward_function(event)
            if node is not None:
                frames.append(_frame(f"backward:{node.name.split(': ')[-1]}"))
            lines.append(";".join(frames + [_frame(event.name), _frame(kernel.name)]) + f" {kernel.duration:.0f}")
    return lines


def text_tree(root: Node, min_share: float = 1.0) -> str:
    """One line per frame with at least min_share percent of the total, callees indented: the frame's
    share of the total, including its callees, and its self share (time spent in the frame itself,
    e.g. in an operator it called directly from that line)."""
    lines = ["total   self  frame"]

    def walk(node: Node, depth: int) -> None:
        share = 100 * node.total / root.total
        self_share = 100 * (node.total - sum(c.total for c in node.children.values())) / root.total
        lines.append(f"{share:5.1f}% {self_share:5.1f}%  {'  ' * depth}{node.name}")
        for child in sorted(node.children.values(), key=lambda c: -c.total):
            if 100 * child.total / root.total >= min_share:
                walk(child, depth + 1)

    if root.total > 0:
        walk(root, 0)
    return "\n".join(lines)


def svg(root: Node, title: str, width: int = 1200, row: int = 18) -> str:
    """A flame graph: the root at the bottom, each callee on top of its caller, width = time."""
    boxes = []

    def depth_of(node: Node) -> int:
        return 1 + max((depth_of(c) for c in node.children.values()), default=0)

    height = depth_of(root) * row + 40

    def place(node: Node, x: float, depth: int) -> None:
        w = width * node.total / root.total
        if w < 0.5:
            return  # too narrow to see
        y = height - (depth + 1) * row
        hue = 20 + zlib.crc32(node.name.encode()) % 40  # warm colours, the same in every drawing
        label = html.escape(node.name if len(node.name) * 7 < w else node.name[: max(0, int(w / 7) - 2)] + "..")
        tip = html.escape(f"{node.name}: {node.total:.0f} us ({100 * node.total / root.total:.1f}%)")
        boxes.append(f'<g><title>{tip}</title><rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" '
                     f'fill="hsl({hue},90%,60%)"/>'
                     + (f'<text x="{x + 3:.1f}" y="{y + row - 5}">{label}</text>' if w > 21 else "") + "</g>")
        for child in sorted(node.children.values(), key=lambda c: c.name):
            place(child, x, depth + 1)
            x += width * child.total / root.total

    if root.total > 0:
        place(root, 0.0, 0)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="monospace" font-size="11">\n'
            f'<text x="4" y="16" font-size="14">{html.escape(title)}</text>\n' + "\n".join(boxes) + "\n</svg>\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stacks", type=Path, help="a file written by prof.export_stacks(...)")
    parser.add_argument("--svg", type=Path, help="also write an SVG flame graph here")
    parser.add_argument("--min-share", type=float, default=1.0, help="hide frames below this percentage")
    args = parser.parse_args()
    if not args.stacks.is_file():
        parser.error(f"no such file: {args.stacks}")
    root = read_folded(args.stacks.read_text().splitlines())
    summary = Summary()
    if summary.expect(f"{args.stacks} holds stacks with a time above 0 (profiled with with_stack=True?)",
                      root.total > 0):
        print(text_tree(root, args.min_share))
        if args.svg:
            args.svg.write_text(svg(root, f"{args.stacks.name}: {root.total:.0f} us"))
            print(f"Flame graph written to {args.svg}")
    return summary.finish("flamegraph")


if __name__ == "__main__":
    sys.exit(main())
