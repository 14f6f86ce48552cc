"""Side by side, in one run: custom CUDA vs PyTorch built-in vs plain PyTorch expressions vs
torch.compile vs Triton, for add, square, GELU and mean, at a size that fills the GPU.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/bench.py [--log2n 28]

All four operations are memory-bound: a few flops per 4-byte float, so the time is the bytes moved
divided by the memory bandwidth. GB/s counts the bytes the operation must move at least (inputs read
once, output written once), the same count for every implementation, so an implementation that moves
more (an unfused chain of kernels writing temporaries) shows up as a lower GB/s. The ceiling is a
device-to-device copy measured in the same run.
"""

import argparse
import sys
import time

import torch
import torch.nn.functional as F

import checks
from timing import benchmark, describe_gpu, gb_per_s, markdown_table, require_device_memory, require_gpu


def gelu_unfused(x: torch.Tensor) -> torch.Tensor:
    """GELU from separate PyTorch operations: each one a kernel that reads and writes all of x."""
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def mean_unfused(x: torch.Tensor) -> torch.Tensor:
    return x.sum() / x.numel()


# Correctness checks, one per operation: (result, built-in result, input) -> bool.
def same(got: torch.Tensor, ref: torch.Tensor, x: torch.Tensor) -> bool:
    return checks.max_abs_error(got, ref) == 0


def gelu_close(got: torch.Tensor, ref: torch.Tensor, x: torch.Tensor) -> bool:
    return checks.gelu_check(got, x)[1]


def mean_close(got: torch.Tensor, ref: torch.Tensor, x: torch.Tensor) -> bool:
    return checks.mean_check(got, x)[2]


def log2_size(text: str) -> int:
    value = int(text)
    if not 10 <= value <= 30:
        raise argparse.ArgumentTypeError(f"must be between 10 and 30, got {value}")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=log2_size, default=28,
                        help="elements per tensor = 2^LOG2N (default 28: 1 GiB of float32, 20x the L2 cache)")
    parser.add_argument("--trials", type=int, default=20, help="timed runs per implementation (median)")
    args = parser.parse_args()  # bad options exit 2 here, before the GPU is touched
    if args.trials < 1:
        parser.error("--trials must be at least 1")

    require_gpu()
    import cuda_course  # noqa: E402  (needs the built package on PYTHONPATH)
    import triton_kernels

    n = 2**args.log2n
    require_device_memory(10 * 4 * n, f"the benchmark at n = 2^{args.log2n}")  # inputs + unfused temporaries
    started = time.perf_counter()
    torch.manual_seed(0)
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    copy_target = torch.empty_like(a)
    copy_ms = benchmark(lambda: copy_target.copy_(a), trials=args.trials)
    copy_gbs = gb_per_s(2 * 4 * n, copy_ms)

    # op: (bytes it must move, arguments, correctness check, [(name, function)], built-in first)
    cases = {
        "add": (3 * 4 * n, (a, b), same, [
            ("torch.add (built-in)", torch.add),
            ("custom CUDA: torch.ops.cuda_course.add", cuda_course.add),
            ("torch.compile(a + b)", torch.compile(lambda x, y: x + y)),
            ("Triton", triton_kernels.add)]),
        "square": (2 * 4 * n, (a,), same, [
            ("torch.square (built-in)", torch.square),
            ("custom CUDA: torch.ops.cuda_course.square", cuda_course.square),
            ("PyTorch expression x * x", lambda x: x * x),
            ("torch.compile(x * x)", torch.compile(lambda x: x * x)),
            ("Triton", triton_kernels.square)]),
        "gelu": (2 * 4 * n, (a,), gelu_close, [
            ("F.gelu(approximate='tanh') (built-in)", lambda x: F.gelu(x, approximate="tanh")),
            ("custom CUDA: torch.ops.cuda_course.gelu", cuda_course.gelu),
            ("unfused PyTorch ops (the formula)", gelu_unfused),
            ("torch.compile(the formula)", torch.compile(gelu_unfused)),
            ("Triton", triton_kernels.gelu)]),
        "mean": (4 * n, (a,), mean_close, [
            ("torch.mean (built-in)", torch.mean),
            ("custom CUDA: torch.ops.cuda_course.mean", cuda_course.mean),
            ("PyTorch expression x.sum() / x.numel()", mean_unfused),
            ("torch.compile(x.sum() / x.numel())", torch.compile(mean_unfused)),
            ("Triton, two passes of tl.sum", triton_kernels.mean),
            ("Triton, the notes' serial loop", triton_kernels.notes_mean)]),
    }

    rows, ratio = [], {}
    for op, (bytes_moved, inputs, correct, implementations) in cases.items():
        reference = implementations[0][1](*inputs)
        builtin_ms = None
        for name, fn in implementations:
            ok = correct(fn(*inputs), reference, inputs[0])  # first call: also compiles, if it must
            ms = benchmark(lambda: fn(*inputs), trials=args.trials)
            builtin_ms = builtin_ms or ms
            ratio[(op, name)] = builtin_ms / ms
            gbs = gb_per_s(bytes_moved, ms)
            rows.append([op, name, f"{ms:.3f}", f"{gbs:.0f}", f"{100 * builtin_ms / ms:.0f}%",
                         f"{100 * gbs / copy_gbs:.0f}%", "yes" if ok else "NO"])

    print(f"# Chapter 06 side by side: {describe_gpu()}, Triton {triton_kernels.triton.__version__}")
    print(f"n = 2^{args.log2n} float32 per tensor ({4 * n / 2**30:.2f} GiB), median of {args.trials} runs "
          f"(CUDA events) after warm-up; device-to-device copy: {copy_gbs:.0f} GB/s ({copy_ms:.3f} ms)\n")
    print(markdown_table(["op", "implementation", "time (ms)", "GB/s", "% of built-in", "% of copy",
                          "correct"], rows))

    custom = "custom CUDA: torch.ops.cuda_course."
    print("\nGoals (throughput as a share of the built-in's):")
    for op, goal in [("add", 0.95), ("gelu", 0.95), ("mean", 0.90)]:
        r = ratio[(op, custom + op)]
        verdict = "met" if r >= goal else "MISSED"
        print(f"- {op}: custom CUDA at {100 * r:.0f}% (goal >= {100 * goal:.0f}%): {verdict}")
    slowdown = 1 / ratio[("gelu", "unfused PyTorch ops (the formula)")]
    print(f"- unfused GELU: {slowdown:.1f}x slower than F.gelu (expected about 10x: ~9 kernels, "
          f"each reading and writing a whole tensor)")
    print(f"\nWall time of this benchmark, compilation included: {time.perf_counter() - started:.0f} s")
    return 0 if all(row[-1] == "yes" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
