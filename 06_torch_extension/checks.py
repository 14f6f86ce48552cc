"""The chapter's references and stated tolerances, shared by verify.py and the tests.

add and square must match PyTorch exactly: each output element is one correctly rounded float32
operation (a + b, x * x) in both implementations. GELU and mean are compared with a tolerance:
  - GELU: |ours - F.gelu(x, approximate="tanh")| <= 1e-6 + 1e-5 * |F.gelu(x)|. tanhf and the order of
    the operations may differ in the last bit or two; 1e-5 relative is ~80 float32 ulps of headroom.
  - mean: |ours - mean in float64| <= 1e-5 * mean(|x|). Float32 partial sums carry a rounding error
    that grows with the number of terms each one adds; the bound scales with the size of the terms,
    because a mean near 0 (randn input) has no meaningful *relative* error.
NaN compares false with everything, so a NaN anywhere fails every check.
"""

import torch
import torch.nn.functional as F

GELU_ATOL, GELU_RTOL = 1e-6, 1e-5
MEAN_RTOL = 1e-5


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


def mean_check(got: torch.Tensor, x: torch.Tensor) -> tuple[float, float, bool]:
    """(|got - float64 mean|, the bound, within it?)"""
    ref = x.double().mean()
    error = (got.double() - ref).abs().item()
    bound = MEAN_RTOL * x.double().abs().mean().item()
    return error, bound, error <= bound
