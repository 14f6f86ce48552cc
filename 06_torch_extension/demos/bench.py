"""Side by side, in one run: custom CUDA vs PyTorch built-in vs plain PyTorch expressions vs
torch.compile vs Triton, for add, square, GELU and mean, their backward kernels, and unaligned views.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/demos/bench.py [--log2n 28]

All the operations are memory-bound: a few flops per 4-byte float, so the time is the bytes moved
divided by the memory bandwidth. GB/s counts the bytes the operation must move at least (inputs read
once, output written once), the same count for every implementation, so an implementation that moves
more (an unfused chain of kernels writing temporaries) shows up as a lower GB/s. The ceiling is a
device-to-device copy measured in the same run.
"""

import argparse
import sys
import time

import torch

import checks
from summary import Summary
from timing import (benchmark, describe_gpu, gb_per_s, kernel_names, markdown_table, require_device_memory,
                    require_gpu, short_kernel_name)

BETA, KAPPA = 0.7978845608028654, 0.044715  # sqrt(2/pi) and the cubic coefficient of GELU's tanh form


def gelu_unfused(x: torch.Tensor) -> torch.Tensor:
    """GELU from separate PyTorch operations: each one a kernel that reads and writes all of x."""
    return 0.5 * x * (1.0 + torch.tanh(BETA * (x + KAPPA * x * x * x)))


def gelu_backward_unfused(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """GELU's derivative times grad, from separate PyTorch operations (what ops.cu fuses)."""
    t = torch.tanh(BETA * (x + KAPPA * x * x * x))
    return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * BETA * (1 + 3 * KAPPA * x * x))


def mean_unfused(x: torch.Tensor) -> torch.Tensor:
    return x.sum() / x.numel()


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
    # Inputs, unfused temporaries, and the four square graphs that autograd_backward keeps.
    require_device_memory(20 * 4 * n, f"the benchmark at n = 2^{args.log2n}")
    started = time.perf_counter()
    torch.manual_seed(0)
    a, b, g = (torch.randn(n, device="cuda") for _ in range(3))
    g0 = g[0].clone()  # the gradient of a mean: one number, on the GPU
    copy_target = torch.empty_like(a)
    copy_ms = benchmark(lambda: copy_target.copy_(a), trials=args.trials)
    copy_gbs = gb_per_s(2 * 4 * n, copy_ms)

    def exact(got, ref):
        return checks.max_abs_error(got, ref) == 0

    def autograd_backward(forward):
        """PyTorch's autograd of forward(x), backward pass only: the graph is built once, and each call
        runs its backward for the incoming gradient (retain_graph keeps the graph, and autograd.grad
        returns dL/dx without accumulating it into x.grad)."""
        x = a.detach().requires_grad_()
        y = forward(x)
        return lambda grad, _: torch.autograd.grad(y, x, grad, retain_graph=True)[0]

    # op: (bytes it must move, arguments, check(result, first row's result), [(name, function)]);
    # the first row is PyTorch's own kernel, which the others are measured against.
    cases = {
        "add": (3 * 4 * n, (a, b), exact, [
            ("torch.add (built-in)", torch.add),
            ("custom CUDA: torch.ops.cuda_course.add", cuda_course.add),
            ("torch.compile(a + b)", torch.compile(lambda x, y: x + y)),
            ("Triton", triton_kernels.add)]),
        "square": (2 * 4 * n, (a,), exact, [
            ("torch.square (built-in)", torch.square),
            ("custom CUDA: torch.ops.cuda_course.square", cuda_course.square),
            ("PyTorch expression x * x", lambda x: x * x),
            ("torch.compile(x * x)", torch.compile(lambda x: x * x)),
            ("Triton", triton_kernels.square)]),
        "gelu": (2 * 4 * n, (a,), lambda got, ref: checks.gelu_check(got, a)[1], [
            ("F.gelu(approximate='tanh') (built-in)", checks.PYTORCH["gelu"]),
            ("custom CUDA: torch.ops.cuda_course.gelu", cuda_course.gelu),
            ("unfused PyTorch ops (the formula)", gelu_unfused),
            ("torch.compile(the formula)", torch.compile(gelu_unfused)),
            ("Triton", triton_kernels.gelu)]),
        "mean": (4 * n, (a,), lambda got, ref: checks.mean_check(got, a)[2], [
            ("torch.mean (built-in)", torch.mean),
            ("custom CUDA: torch.ops.cuda_course.mean", cuda_course.mean),
            ("PyTorch expression x.sum() / x.numel()", mean_unfused),
            ("torch.compile(x.sum() / x.numel())", torch.compile(mean_unfused)),
            ("Triton, two passes of tl.sum", triton_kernels.mean),
            ("Triton, the notes' serial loop", triton_kernels.notes_mean)]),
        # Backward kernels: dL/dx from dL/dy = g, as autograd calls them.
        "gelu backward": (3 * 4 * n, (g, a), lambda got, ref: checks.gelu_grad_check(got, ref, g)[1], [
            ("PyTorch's gelu_backward (built-in)",
             lambda grad, x: torch.ops.aten.gelu_backward(grad, x, approximate="tanh")),
            ("custom CUDA: cuda_course.gelu_backward (fused)", cuda_course.gelu_backward),
            ("unfused PyTorch ops (the derivative's formula)", gelu_backward_unfused)]),
        # dL/dx of a square, from the same incoming gradient g: PyTorch's own backward of its three
        # spellings (each the kernels its autograd node launches), and ours.
        "square backward": (3 * 4 * n, (g, a), exact, [
            ("PyTorch's autograd of torch.square(x) (built-in)", autograd_backward(torch.square)),
            ("custom CUDA: cuda_course.square_backward", cuda_course.square_backward),
            ("custom CUDA through autograd: cuda_course.square(x)", autograd_backward(cuda_course.square)),
            ("PyTorch's autograd of x * x", autograd_backward(lambda x: x * x)),
            ("PyTorch's autograd of x ** 2", autograd_backward(lambda x: x**2))]),
        "mean backward": (4 * n, (g0, (n,)), exact, [
            ("PyTorch's autograd of torch.mean(x) (built-in)", autograd_backward(torch.mean)),
            ("custom CUDA: cuda_course.mean_backward", cuda_course.mean_backward)]),
    }

    summary = Summary()
    rows, share = [], {}
    for op, (bytes_moved, inputs, correct, implementations) in cases.items():
        reference = implementations[0][1](*inputs)
        builtin_ms = None
        for name, fn in implementations:
            ok = correct(fn(*inputs), reference)  # first call: also compiles, if it must
            ms = benchmark(lambda: fn(*inputs), trials=args.trials)
            builtin_ms = builtin_ms or ms
            share[(op, name.split(":")[0])] = 100 * builtin_ms / ms
            gbs = gb_per_s(bytes_moved, ms)
            rows.append([op, name, f"{ms:.3f}", f"{gbs:.0f}", f"{100 * builtin_ms / ms:.0f}%",
                         f"{100 * gbs / copy_gbs:.0f}%", "yes" if ok else "NO"])
            summary.tally(ok)

    # Unaligned views: x[k:] starts 4k bytes past a 16-byte boundary, the output does not.
    view_rows, view_share = [], {}
    view_cases = {
        "add": (lambda k: (a[k:], b[k:]), torch.add, cuda_course.add, exact),
        "square": (lambda k: (a[k:],), torch.square, cuda_course.square, exact),
        "gelu": (lambda k: (a[k:],), checks.PYTORCH["gelu"], cuda_course.gelu,
                 lambda got, ref: checks.gelu_check(got, a[-got.numel():])[1]),
        "mean": (lambda k: (a[k:],), torch.mean, cuda_course.mean,
                 lambda got, ref: abs(got.item() - ref.item()) <= checks.MEAN_RTOL * a.abs().mean().item()),
    }
    for op, (views, theirs, ours, correct) in view_cases.items():
        for k in (1, 2, 3):
            inputs = views(k)
            ok = correct(ours(*inputs), theirs(*inputs))
            theirs_ms = benchmark(lambda: theirs(*inputs), trials=args.trials)
            ours_ms = benchmark(lambda: ours(*inputs), trials=args.trials)
            view_share[(op, k)] = 100 * theirs_ms / ours_ms
            view_rows.append([op, f"x[{k}:]", f"{theirs_ms:.3f}", f"{ours_ms:.3f}",
                              f"{view_share[(op, k)]:.0f}%", "yes" if ok else "NO"])
            summary.tally(ok)

    print(f"# Chapter 06 side by side: {describe_gpu()}, Triton {triton_kernels.triton.__version__}")
    print(f"n = 2^{args.log2n} float32 per tensor ({4 * n / 2**30:.2f} GiB), median of {args.trials} runs "
          f"(CUDA events) after warm-up; device-to-device copy: {copy_gbs:.0f} GB/s ({copy_ms:.3f} ms)\n")
    print(markdown_table(["op", "implementation", "time (ms)", "GB/s", "% of built-in", "% of copy",
                          "correct"], rows))
    print("\nThe kernels each square backward launches (torch.profiler):\n")
    print(markdown_table(["backward", "kernels"], [
        [name, ", ".join(short_kernel_name(k) for k in kernel_names(lambda: fn(g, a)))]
        for name, fn in cases["square backward"][3]]))
    print("\nUnaligned views (the same tensors from element k on): custom CUDA against PyTorch on the same view\n")
    print(markdown_table(["op", "view", "PyTorch (ms)", "custom CUDA (ms)", "% of PyTorch", "correct"], view_rows))

    print("\nGoals (throughput as a share of PyTorch's own kernel, measured above):")
    custom = "custom CUDA"
    summary.goal("add, custom CUDA vs torch.add", share[("add", custom)], 95, "%")
    summary.goal("gelu, custom CUDA vs F.gelu", share[("gelu", custom)], 95, "%")
    summary.goal("mean, custom CUDA vs torch.mean", share[("mean", custom)], 90, "%")
    worst_view = min(view_share, key=view_share.get)
    summary.goal(f"unaligned views x[1:], x[2:], x[3:], worst case ({worst_view[0]} of x[{worst_view[1]}:])",
                 view_share[worst_view], 90, "%")
    summary.goal("gelu backward, fused custom CUDA vs PyTorch's gelu_backward",
                 share[("gelu backward", custom)], 90, "%")
    slowdown = 100 / share[("gelu", "unfused PyTorch ops (the formula)")]
    backward_slowdown = 100 / share[("gelu backward", "unfused PyTorch ops (the derivative's formula)")]
    print(f"Unfused GELU: {slowdown:.1f}x slower than F.gelu (about 9 kernels, each reading and writing a "
          f"whole tensor); its unfused derivative: {backward_slowdown:.1f}x slower than gelu_backward")
    print(f"Wall time of this benchmark, compilation included: {time.perf_counter() - started:.0f} s")

    for op in ("add", "square", "gelu", "mean", "gelu backward", "square backward", "mean backward"):
        summary.figure(f"{op.replace(' ', '_')}_pct", round(share[(op, custom)], 1))
    summary.figure("square_backward_autograd_pct",
                   round(share[("square backward", "custom CUDA through autograd")], 1))
    summary.figure("views_worst_pct", round(view_share[worst_view], 1))
    summary.figure("square_view1_pct", round(view_share[("square", 1)], 1))
    summary.figure("mean_view1_pct", round(view_share[("mean", 1)], 1))
    summary.figure("unfused_gelu_slowdown", round(slowdown, 1))
    summary.figure("unfused_gelu_backward_slowdown", round(backward_slowdown, 1))
    summary.figure("notes_triton_mean_pct", round(share[("mean", "Triton, the notes' serial loop")], 1))
    summary.figure("copy_gbs", round(copy_gbs))
    return summary.finish("06_torch_extension")


if __name__ == "__main__":
    sys.exit(main())
