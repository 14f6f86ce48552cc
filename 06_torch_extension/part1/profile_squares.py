"""Part 1, step 3: one square, six ways, timed and profiled in one run: PyTorch's torch.square, a * a and
a ** 2 (GPU MODE lecture 1), your CUDA kernel (square_inline.py), a Triton kernel and torch.compile.

    python3 06_torch_extension/part1/profile_squares.py [--log2n 28]

Prints torch.profiler's table of one call of each, then a table of the kernel each launches, its time
(median of CUDA events after a warm-up) and its share of torch.square's speed, all on the same tensor.
"""

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "demos"))  # the chapter's helpers
from summary import Summary  # noqa: E402
from timing import (benchmark, describe_gpu, gb_per_s, kernel_names, markdown_table, require_gpu,  # noqa: E402
                    require_triton, short_kernel_name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, choices=range(10, 31), default=28, metavar="10..30",
                        help="floats in the tensor = 2^LOG2N (default 28: 1 GiB, 20x the L2 cache)")
    args = parser.parse_args()
    require_gpu()
    require_triton()
    import square_inline
    import triton_kernels

    your_square = square_inline.build().square
    ways = {
        "torch.square(a)": torch.square,
        "a * a": lambda t: t * t,
        "a ** 2": lambda t: t**2,
        "your CUDA kernel (square_inline.py)": your_square,
        "Triton (triton_kernels.square)": triton_kernels.square,
        "torch.compile(lambda a: a * a)": torch.compile(lambda t: t * t),
    }
    summary = Summary()
    n = 2**args.log2n
    a = torch.randn(n, device="cuda")
    expected = torch.square(a)
    for name, square in ways.items():
        summary.exact(f"{name} vs torch.square(a)", (square(a) - expected).abs().max().item())  # compiles, too

    print(f"\n## torch.profiler: one call of each, on {n:,} floats ({describe_gpu()})\n")
    # The notes' schedule: one warm-up step, whose records are dropped (the profiler's own start-up
    # shows up in the first step it records), then one recorded step.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                schedule=torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1)) as prof:
        for _ in range(2):
            for square in ways.values():
                square(a)
            torch.cuda.synchronize()
            prof.step()
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=16, max_name_column_width=70))

    print("\n## Each way's kernel and speed (median of 50 runs, CUDA events; GB/s counts 4 bytes read and 4 written a float)\n")
    ms = {name: benchmark(lambda: square(a), trials=50) for name, square in ways.items()}
    share = {name: 100 * ms["torch.square(a)"] / ms[name] for name in ways}
    print(markdown_table(
        ["way", "kernel(s) the profiler shows", "time (ms)", "GB/s", "% of torch.square"],
        [[name, ", ".join(short_kernel_name(k) for k in kernel_names(lambda: square(a))), f"{ms[name]:.3f}",
          f"{gb_per_s(8 * n, ms[name]):.0f}", f"{share[name]:.1f}%"] for name, square in ways.items()]))
    summary.figure("square_ms", round(ms["torch.square(a)"], 3))
    for key, name in [("mul_pct", "a * a"), ("pow_pct", "a ** 2"), ("inline_pct", "your CUDA kernel (square_inline.py)"),
                      ("triton_pct", "Triton (triton_kernels.square)"), ("compile_pct", "torch.compile(lambda a: a * a)")]:
        summary.figure(key, round(share[name], 1))
    return summary.finish("06_torch_extension_part1_profile")


if __name__ == "__main__":
    sys.exit(main())
