"""The package's four kernels on a few small tensors, to run under compute-sanitizer.

    PYTHONPATH=build/06_torch_extension/pkg compute-sanitizer --tool memcheck \\
        python3 06_torch_extension/sanitizer_check.py

The course's GPU check (scripts/gpu-check.sh) runs it under memcheck, racecheck, initcheck and
synccheck. Two choices keep those runs about the chapter's kernels:
  - PyTorch's caching allocator is switched off, so every tensor is its own cudaMalloc. With the
    cache on, tensors are cut out of larger blocks, and a read past a tensor's end lands in memory
    the sanitizer counts as valid (PyTorch's allocator source says the cache "foils cuda-memcheck").
  - Inputs are made on the CPU and copied over, and the references are computed on the CPU, so the
    only kernels on the GPU are the chapter's own.
Sizes: 4099 floats is one whole float4 chunk (4096) plus 3 for the scalar loop, and two blocks for
mean's first pass; each size runs on a fresh tensor and on the unaligned view x[1:], which ends
exactly where its allocation ends. Exit 0 if every result is right, 1 if not, 77 without a GPU.
"""

import os

# Read once, when PyTorch first allocates GPU memory: set it before anything does.
os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"

import sys  # noqa: E402

import torch  # noqa: E402

import checks  # noqa: E402
from timing import require_gpu  # noqa: E402

SIZES = [1, 4099]


def inputs(n: int) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """(CPU copy, GPU tensor) of n random floats: a fresh tensor, and an unaligned view x[1:]."""
    fresh, padded = torch.randn(n), torch.randn(n + 1)
    return {"fresh": (fresh, fresh.cuda()), "x[1:]": (padded[1:], padded.cuda()[1:])}


def main() -> int:
    require_gpu()
    import cuda_course

    torch.manual_seed(0)
    print(f"The chapter's operators at sizes {SIZES} (fresh and x[1:]) and 0, checked on the CPU")
    failures = []
    for n in SIZES:
        a_inputs, b_inputs = inputs(n), inputs(n)
        for view in a_inputs:
            (a, a_gpu), (b, b_gpu) = a_inputs[view], b_inputs[view]
            if checks.max_abs_error(cuda_course.add(a_gpu, b_gpu).cpu(), a + b) != 0:
                failures.append(f"add, n={n}, {view}")
            if checks.max_abs_error(cuda_course.square(a_gpu).cpu(), a * a) != 0:
                failures.append(f"square, n={n}, {view}")
            if not checks.gelu_check(cuda_course.gelu(a_gpu).cpu(), a)[1]:
                failures.append(f"gelu, n={n}, {view}")
            if not checks.mean_check(cuda_course.mean(a_gpu).cpu(), a)[2]:
                failures.append(f"mean, n={n}, {view}")

    empty = torch.empty(0, device="cuda")
    if cuda_course.add(empty, empty).shape != (0,) or not cuda_course.mean(empty).cpu().isnan():
        failures.append("empty input")

    for failure in failures:
        print(f"WRONG: {failure}")
    print("add and square exact, gelu and mean within tolerance, empty input handled:",
          "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
