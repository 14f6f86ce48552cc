"""The chapter's references and stated tolerances, shared by the demos and the tests.

add and square, and the gradients of add, square and mean, must match PyTorch exactly: each output
element is one or two correctly rounded float32 operations in the same order in both
implementations (a + b; x * x; grad * (2 * x); grad * (1 / n)). GELU, its gradient and mean are
compared with a tolerance:
  - GELU: |ours - F.gelu(x, approximate="tanh")| <= 1e-6 + 1e-5 * |F.gelu(x)|. tanhf and the order of
    the operations may differ in the last bit or two; 1e-5 relative is ~80 float32 ulps of headroom.
  - GELU's gradient: |ours - PyTorch's| <= 1e-6 * |grad| + 1e-5 * |PyTorch's|: the same, for a result
    that scales with the incoming gradient.
  - mean: |ours - mean in float64| <= 1e-5 * mean(|x|). Float32 partial sums carry a rounding error
    that grows with the number of terms each one adds; the bound scales with the size of the terms,
    because a mean near 0 (randn input) has no meaningful *relative* error.
NaN compares false with everything, so a NaN anywhere fails every check.
"""

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

GELU_ATOL, GELU_RTOL = 1e-6, 1e-5
MEAN_RTOL = 1e-5

# Each operator's expression in PyTorch: the reference for its result and, through PyTorch's own
# autograd, for its gradient.
PYTORCH = {
    "add": torch.add,
    "square": torch.square,
    "gelu": lambda x: F.gelu(x, approximate="tanh"),
    "mean": torch.mean,
}


def max_abs_error(got: torch.Tensor, ref: torch.Tensor) -> float:
    """Largest |got - ref| (NaN if either has a NaN); 0 for empty tensors."""
    if got.shape != ref.shape:
        return float("nan")
    if got.numel() == 0:
        return 0.0
    return (got.double() - ref.double()).abs().max().item()


def gelu_check(got: torch.Tensor, x: torch.Tensor) -> tuple[float, bool]:
    """(largest difference from F.gelu, within tolerance?)"""
    ref = F.gelu(x, approximate="tanh")
    ok = got.shape == ref.shape and bool(((got - ref).abs() <= GELU_ATOL + GELU_RTOL * ref.abs()).all())
    return max_abs_error(got, ref), ok


def gelu_grad_check(got: torch.Tensor, ref: torch.Tensor, grad: torch.Tensor) -> tuple[float, bool]:
    """(largest difference from PyTorch's GELU gradient, within tolerance?)"""
    bound = GELU_ATOL * grad.abs() + GELU_RTOL * ref.abs()
    ok = got.shape == ref.shape and bool(((got - ref).abs() <= bound).all())
    return max_abs_error(got, ref), ok


def mean_check(got: torch.Tensor, x: torch.Tensor) -> tuple[float, float, bool]:
    """(|got - float64 mean|, the bound, within it?)"""
    ref = x.double().mean()
    error = (got.double() - ref).abs().item()
    bound = MEAN_RTOL * x.double().abs().mean().item()
    return error, bound, error <= bound


def gradients(fn: Callable, inputs: Sequence[torch.Tensor], grad: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """dL/d(input) for each input, where dL/d(fn(*inputs)) = grad, by autograd.

    The inputs are detached copies *of the same memory* (same pointers, so a view x[1:] stays
    unaligned), made leaves that require a gradient."""
    leaves = [t.detach().requires_grad_() for t in inputs]
    return torch.autograd.grad(fn(*leaves), leaves, grad)
