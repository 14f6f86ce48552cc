"""Part 1, going deeper: the lectures' profiling examples: CS336 lecture 6's profile() helper, with Python
stacks and a flame graph of a training step, and its matmul observation; GPU MODE lecture 1's mean
three ways (its squares are profile_squares.py).

    python3 06_torch_extension/part1/profile_lectures.py --out-dir profiles

Writes the exported stacks and the flame graph (stacks_mlp.txt, stacks_mlp.svg) into --out-dir.
"""

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "demos"))  # the chapter's helpers
import flamegraph  # noqa: E402
from summary import Summary  # noqa: E402
from timing import describe_gpu, kernel_names, markdown_table, require_gpu  # noqa: E402

MATMUL_DIMS = [128, 1024, 4096]


def profile(description: str, run, out_dir: Path, num_warmups: int = 1, with_stack: bool = False):
    """CS336's profile(): warm up, profile one run, return the table (and, here, the profile itself).
    with_stack=True also records the Python stack of every operator call and writes them to
    stacks_<description>.txt in the folded format of flame graph tools."""
    for _ in range(num_warmups):
        run()
    torch.cuda.synchronize()  # the warm-up must be done before the profile starts
    with torch.profiler.profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            with_stack=with_stack,  # Python stacks, for the visualization
            experimental_config=torch._C._profiler._ExperimentalConfig(verbose=True)) as prof:  # needed for stacks
        run()
        torch.cuda.synchronize()
    if with_stack:
        prof.export_stacks(str(out_dir / f"stacks_{description}.txt"), "self_cuda_time_total")
    # "device_time_total" is the lecture's "cuda_time_total" under its current name.
    return prof.key_averages().table(sort_by="device_time_total", max_name_column_width=80, row_limit=10), prof


def time_pytorch_function(func, x, warmup: int = 5, runs: int = 100) -> float:
    """GPU MODE's helper: CUDA events around each call after a warm-up; the mean of the runs, in ms."""
    for _ in range(warmup):
        func(x)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        func(x)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sum(times) / len(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=Path("profiles"),
                        help="where the stacks and the flame graph go (default: ./profiles)")
    args = parser.parse_args()

    require_gpu()

    args.out_dir.mkdir(parents=True, exist_ok=True)
    summary = Summary()
    torch.manual_seed(0)
    print(f"The lectures' profiling examples on {describe_gpu()}")

    # The first profiling session of a process sets up the profiler's buffers and also files a kernel
    # under "Activity Buffer Request": a throwaway session first keeps that out of the flame graph.
    with torch.profiler.profile(activities=[ProfilerActivity.CUDA]):
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()

    # --- CS336: profile() with stacks, on a training step of a small MLP ---
    print("\n## CS336 lecture 6: profile() with with_stack=True, on one training step of a two-layer MLP")
    print("loss = mean(square(gelu(x @ w1) @ w2)); x: 8192 x 1024, w1: 1024 x 4096, w2: 4096 x 1024 (float32)\n")
    x = torch.randn(8192, 1024, device="cuda")
    w1 = (torch.randn(1024, 4096, device="cuda") / 32).requires_grad_()
    w2 = (torch.randn(4096, 1024, device="cuda") / 64).requires_grad_()

    def mlp_forward():
        hidden = F.gelu(x @ w1, approximate="tanh")
        return hidden @ w2

    def mlp_step():
        loss = torch.mean(torch.square(mlp_forward()))
        loss.backward()

    table, prof = profile("mlp", mlp_step, args.out_dir, with_stack=True)
    print(table)
    exported = flamegraph.read_folded((args.out_dir / "stacks_mlp.txt").read_text().splitlines())
    kernels = flamegraph.folded_from_profile(prof)
    root = flamegraph.read_folded(kernels)
    (args.out_dir / "stacks_mlp_kernels.txt").write_text("\n".join(kernels) + "\n")
    kernel_us = sum(e.self_device_time_total for e in prof.key_averages()
                    if e.device_type == torch.autograd.DeviceType.CUDA)
    print(f"export_stacks (stacks_mlp.txt) adds up to {exported.total:.0f} us of GPU time; the kernels took "
          f"{kernel_us:.0f} us: it writes every event's own time, and some kernels count more than once.")
    print(f"flamegraph.folded_from_profile counts each kernel once (stacks_mlp_kernels.txt, {root.total:.0f} us).")
    print("\nWhere the GPU time goes, by Python stack, then operator, then kernel: each frame's share of the "
          "step's GPU time\nwith everything it called, and its own share (frames of at least 1%):\n")
    print(flamegraph.text_tree(root, min_share=1.0))
    (args.out_dir / "stacks_mlp.svg").write_text(flamegraph.svg(root, "one MLP training step: GPU time by Python stack"))
    print(f"\nFlame graph: {args.out_dir / 'stacks_mlp.svg'} (open it in a browser)")
    summary.figure("export_stacks_us", round(exported.total))
    summary.figure("kernels_us", round(kernel_us))
    summary.expect("export_stacks wrote stacks with GPU time", exported.total > 0)
    summary.expect("folded_from_profile found the kernels' stacks", root.total > 0)

    # --- CS336: the kernel cuBLAS picks depends on the size ---
    print("\n## CS336 lecture 6: matmul(dim) for a few sizes (float32): each size, its own kernel\n")
    names = {}
    for dim in MATMUL_DIMS:
        a, b = torch.randn(dim, dim, device="cuda"), torch.randn(dim, dim, device="cuda")
        print(f"### matmul(dim={dim})")
        print(profile(f"matmul_{dim}", lambda: a @ b, args.out_dir)[0])
        names[dim] = kernel_names(lambda: a @ b)
    print(markdown_table(["dim", "kernel(s) launched by a @ b"], [[str(d), ", ".join(k)] for d, k in names.items()]))
    distinct = len({tuple(k) for k in names.values()})
    summary.expect(f"different sizes ran different kernels ({distinct} distinct for {len(MATMUL_DIMS)} sizes)",
                   distinct > 1)
    summary.figure("distinct_matmul_kernels", distinct)

    # --- GPU MODE lecture 1: mean three ways ---
    print("\n## GPU MODE lecture 1: torch.mean(x), x.mean(), torch.sum(x) / x.numel() on 10000 x 10000")
    a = torch.randn(10000, 10000, device="cuda")
    means = {"torch.mean(x)": torch.mean, "x.mean()": lambda t: t.mean(),
             "torch.sum(x) / x.numel()": lambda t: torch.sum(t) / t.numel()}
    values = {name: fn(a).item() for name, fn in means.items()}
    summary.expect("the three means agree to 1e-6", max(values.values()) - min(values.values()) <= 1e-6)
    mean_ms = {name: time_pytorch_function(fn, a) for name, fn in means.items()}
    print(markdown_table(["expression", "ms (CUDA events, mean of 100)", "kernels"],
                         [[name, f"{mean_ms[name]:.3f}", ", ".join(kernel_names(lambda: fn(a)))]
                          for name, fn in means.items()]))
    for name, fn in means.items():
        print(f"\n### torch.profiler: {name}")
        with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn(a)
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="device_time_total", row_limit=10, max_name_column_width=60))

    summary.figure("mean_ms", round(mean_ms["torch.mean(x)"], 3))
    summary.figure("sum_div_ms", round(mean_ms["torch.sum(x) / x.numel()"], 3))
    return summary.finish("06_torch_extension_lectures")


if __name__ == "__main__":
    sys.exit(main())
