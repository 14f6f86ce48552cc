"""Verifies the package's operators (torch.ops.cuda_course.*) against PyTorch, in the course's format.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/verify.py

One "Max error: 0" line per exactly checked operator (add, square); GELU and mean against their stated
tolerances (checks.py). Exit 0 if all pass, 1 if any fails, 77 without a GPU. The tests (tests/) cover
the same and more, for all three build routes; this is the short version CTest runs through
cmake/verify_output.sh.
"""

import sys

import torch

import checks
from timing import describe_gpu, require_gpu

SIZES = [1, 1023, 1025, 2**24 + 1]  # odd sizes: partial float4s, partial blocks, > 2^24


def variants(n: int, device: str = "cuda") -> list[torch.Tensor]:
    """A fresh tensor, and a contiguous view starting 4 bytes in: the unaligned, float-by-float path."""
    return [torch.randn(n, device=device), torch.randn(n + 1, device=device)[1:]]


def main() -> int:
    require_gpu()
    import cuda_course  # after require_gpu: the package needs nothing else, but its tests do

    # Deterministic mode makes torch.empty fill new tensors with NaN, including the ones our
    # operators allocate for their results: an element a kernel forgets to write stays NaN and fails.
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    print("Chapter 06: the chapter's CUDA operators (torch.ops.cuda_course) against PyTorch")
    print(f"GPU: {describe_gpu()}")
    print(f"Sizes {SIZES}, each as a fresh tensor and as an unaligned view x[1:]")

    add_error = square_error = gelu_error = 0.0
    gelu_ok = mean_ok = True
    mean_worst = 0.0  # the largest error as a fraction of its bound
    for n in SIZES:
        for a, b in zip(variants(n), variants(n)):
            add_error = max(add_error, checks.max_abs_error(cuda_course.add(a, b), torch.add(a, b)))
            square_error = max(square_error, checks.max_abs_error(cuda_course.square(a), torch.square(a)))
            error, ok = checks.gelu_check(cuda_course.gelu(a), a)
            gelu_error, gelu_ok = max(gelu_error, error), gelu_ok and ok
            error, bound, ok = checks.mean_check(cuda_course.mean(a), a)
            mean_ok = mean_ok and ok
            mean_worst = max(mean_worst, error / bound) if ok else mean_worst
    torch.cuda.synchronize()

    empty = torch.empty(0, device="cuda")
    empty_ok = (cuda_course.add(empty, empty).shape == (0,) and cuda_course.gelu(empty).shape == (0,)
                and cuda_course.mean(empty).isnan().item())

    print(f"Max error: {add_error:g}  (add vs torch.add, random floats)")
    print(f"Max error: {square_error:g}  (square vs torch.square, random floats)")
    print(f"gelu vs F.gelu(approximate='tanh'): largest difference {gelu_error:.3g} "
          f"(tolerance {checks.GELU_ATOL:g} + {checks.GELU_RTOL:g}*|ref|): {'ok' if gelu_ok else 'FAILED'}")
    print(f"mean vs float64 mean: largest error {mean_worst:.2g} of the bound "
          f"{checks.MEAN_RTOL:g}*mean|x|: {'ok' if mean_ok else 'FAILED'}")
    print(f"empty input: empty results, mean is NaN like torch.mean: {'ok' if empty_ok else 'FAILED'}")
    exact = add_error == 0 and square_error == 0
    return 0 if exact and gelu_ok and mean_ok and empty_ok else 1


if __name__ == "__main__":
    sys.exit(main())
