"""Verifies the package's operators (torch.ops.cuda_course.*) and their gradients against PyTorch.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/demos/verify.py

Results: "Max error: 0" for the exactly checked ones (add, square, and the gradients of add, square
and mean); GELU, its gradient and mean within their stated tolerances (checks.py). Gradients are
compared with PyTorch's own autograd of the same expression. Exit 0 if all pass, 1 if any fails,
77 without a GPU. The tests (tests/) cover the same and more, for all three build routes.
"""

import argparse
import sys
import warnings

import torch

import checks
from summary import Summary
from timing import describe_gpu, require_gpu

SIZES = [1, 1023, 1025, 2**24 + 1]  # odd sizes: partial float4s, partial blocks, > 2^24


def variants(n: int) -> list[torch.Tensor]:
    """A fresh tensor, and contiguous views starting 4, 8 and 12 bytes in (x[1:], x[2:], x[3:])."""
    return [torch.randn(n, device="cuda")] + [torch.randn(n + k, device="cuda")[k:] for k in (1, 2, 3)]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, nothing else
    require_gpu()
    import cuda_course  # after require_gpu: without a GPU the script stops above with 77

    # Deterministic mode makes torch.empty fill new tensors with NaN, including the ones our
    # operators allocate for their results: an element a kernel forgets to write stays NaN and fails.
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    print("Chapter 06: the chapter's CUDA operators (torch.ops.cuda_course) against PyTorch")
    print(f"GPU: {describe_gpu()}")
    print(f"Sizes {SIZES}, each as a fresh tensor and as views x[1:], x[2:], x[3:] (unaligned)")

    exact = {"add": 0.0, "square": 0.0, "add backward": 0.0, "square backward": 0.0, "mean backward": 0.0}
    gelu_error = gelu_grad_error = mean_worst = 0.0  # mean: the largest error as a share of its bound
    gelu_ok = gelu_grad_ok = mean_ok = True
    for n in SIZES:
        for a, b in zip(variants(n), variants(n)):
            grad = torch.randn(n, device="cuda")
            exact["add"] = max(exact["add"], checks.max_abs_error(cuda_course.add(a, b), torch.add(a, b)))
            exact["square"] = max(exact["square"], checks.max_abs_error(cuda_course.square(a), torch.square(a)))
            error, ok = checks.gelu_check(cuda_course.gelu(a), a)
            gelu_error, gelu_ok = max(gelu_error, error), gelu_ok and ok
            error, bound, ok = checks.mean_check(cuda_course.mean(a), a)
            mean_ok, mean_worst = mean_ok and ok, max(mean_worst, error / bound) if ok else mean_worst

            # Gradients: ours (through the registered backward) against PyTorch's autograd.
            for op, args, g in [("add", (a, b), grad), ("square", (a,), grad), ("gelu", (a,), grad),
                                ("mean", (a,), grad[0])]:
                ours = checks.gradients(getattr(cuda_course, op), args, g)
                theirs = checks.gradients(checks.PYTORCH[op], args, g)
                for got, ref in zip(ours, theirs):
                    if op == "gelu":
                        error, ok = checks.gelu_grad_check(got, ref, g)
                        gelu_grad_error, gelu_grad_ok = max(gelu_grad_error, error), gelu_grad_ok and ok
                    else:
                        key = f"{op} backward"
                        exact[key] = max(exact[key], checks.max_abs_error(got, ref))
    torch.cuda.synchronize()

    summary = Summary()
    summary.exact("add vs torch.add, random floats", exact["add"])
    summary.exact("square vs torch.square, random floats", exact["square"])
    summary.within(f"gelu vs F.gelu(approximate='tanh'), largest difference, tolerance "
                   f"{checks.GELU_ATOL:g} + {checks.GELU_RTOL:g}*|ref|", gelu_error if gelu_ok else float("nan"),
                   checks.GELU_ATOL + checks.GELU_RTOL * 4)  # |gelu| <= 4 for these inputs
    summary.within(f"mean vs float64 mean, largest error as a share of the bound {checks.MEAN_RTOL:g}*mean|x|",
                   mean_worst if mean_ok else float("nan"), 1.0)
    summary.exact("add's gradient vs PyTorch autograd (both inputs)", exact["add backward"])
    summary.exact("square's gradient vs PyTorch autograd", exact["square backward"])
    summary.within(f"gelu's gradient vs PyTorch autograd, largest difference, tolerance "
                   f"{checks.GELU_ATOL:g}*|grad| + {checks.GELU_RTOL:g}*|ref|",
                   gelu_grad_error if gelu_grad_ok else float("nan"), checks.GELU_ATOL * 6 + checks.GELU_RTOL * 8)
    summary.exact("mean's gradient vs PyTorch autograd", exact["mean backward"])

    # The defect this chapter once had: without a registered backward, backward() only warns.
    x = torch.randn(1000, device="cuda", requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda_course.square(x).sum().backward()
    summary.expect("square(x).sum().backward() gives 2x, with no autograd warning",
                   torch.equal(x.grad, 2 * x.detach()) and not caught)

    empty = torch.empty(0, device="cuda")
    summary.expect("empty input: empty results, mean is NaN like torch.mean",
                   cuda_course.add(empty, empty).shape == (0,) and cuda_course.gelu(empty).shape == (0,)
                   and cuda_course.mean(empty).isnan().item())
    return summary.finish("06_torch_extension_verify")


if __name__ == "__main__":
    sys.exit(main())
