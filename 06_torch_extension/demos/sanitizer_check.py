"""The package's kernels, forward and backward, on a few small tensors, to run under compute-sanitizer.

    PYTHONPATH=build/06_torch_extension/pkg compute-sanitizer --tool memcheck \\
        python3 06_torch_extension/demos/sanitizer_check.py

The course's GPU check (scripts/gpu-check.sh) runs it under memcheck, racecheck, initcheck and
synccheck. Two choices keep those runs about the chapter's kernels:
  - PyTorch's caching allocator is switched off, so every tensor is its own cudaMalloc. With the
    cache on, tensors are cut out of larger blocks, and a read past a tensor's end lands in memory
    the sanitizer counts as valid (PyTorch's allocator source says the cache "foils cuda-memcheck").
  - Inputs and incoming gradients are made on the CPU and copied over, and the references are
    computed on the CPU, so the only kernels on the GPU are the chapter's own.
Sizes: 4099 floats is one whole float4 chunk (4096) plus 3 for the one-by-one loop, and two blocks for
mean's first pass. Each size runs on a fresh tensor and on the views x[1:] and x[2:], which end exactly
where their allocations end: in the elementwise kernels x[1:] takes the one-float-at-a-time kernel and
x[2:] the float2 loop (two chunks of 2048 floats, then 1), and in mean's sum a head of 3 or 2 floats,
the float4 loop, then the rest. The gradients go through autograd
(torch.autograd.grad), so the registered backward formulas call the backward kernels.
Exit 0 if every result is right, 1 if not, 77 without a GPU.
"""

import os

# Read once, when PyTorch first allocates GPU memory: set it before anything does.
os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402

import checks  # noqa: E402
from summary import Summary  # noqa: E402
from timing import require_gpu  # noqa: E402

SIZES = [1, 4099]
OFFSETS = {"fresh": 0, "x[1:]": 1, "x[2:]": 2}


def inputs(n: int) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """(CPU copy, GPU tensor) of n random floats for each view in OFFSETS."""
    made = {}
    for view, k in OFFSETS.items():
        padded = torch.randn(n + k)
        made[view] = (padded[k:], padded.cuda()[k:])
    return made


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, nothing else
    require_gpu()
    import cuda_course

    torch.manual_seed(0)
    print(f"The chapter's operators and gradients at sizes {SIZES} ({', '.join(OFFSETS)}) and 0, "
          "checked on the CPU")
    failures = []
    for n in SIZES:
        a_inputs, b_inputs = inputs(n), inputs(n)
        for view in OFFSETS:
            (a, a_gpu), (b, b_gpu) = a_inputs[view], b_inputs[view]
            grad = torch.randn(n)
            grad_gpu = grad.cuda()
            if checks.max_abs_error(cuda_course.add(a_gpu, b_gpu).cpu(), a + b) != 0:
                failures.append(f"add, n={n}, {view}")
            if checks.max_abs_error(cuda_course.square(a_gpu).cpu(), a * a) != 0:
                failures.append(f"square, n={n}, {view}")
            if not checks.gelu_check(cuda_course.gelu(a_gpu).cpu(), a)[1]:
                failures.append(f"gelu, n={n}, {view}")
            if not checks.mean_check(cuda_course.mean(a_gpu).cpu(), a)[2]:
                failures.append(f"mean, n={n}, {view}")

            # Gradients through autograd: ours on the GPU, PyTorch's on the CPU.
            for op, args, g, g_gpu in [("square", (a,), grad, grad_gpu), ("gelu", (a,), grad, grad_gpu),
                                       ("mean", (a,), grad[0], grad[0].cuda())]:
                (ours,) = checks.gradients(getattr(cuda_course, op), (a_gpu,), g_gpu)
                (theirs,) = checks.gradients(checks.PYTORCH[op], args, g)
                ok = (checks.gelu_grad_check(ours.cpu(), theirs, g)[1] if op == "gelu"
                      else torch.allclose(ours.cpu(), theirs, rtol=1e-6, atol=0))
                if not ok:
                    failures.append(f"{op} backward, n={n}, {view}")

    empty = torch.empty(0, device="cuda")
    if cuda_course.add(empty, empty).shape != (0,) or not cuda_course.mean(empty).cpu().isnan():
        failures.append("empty input")
    if cuda_course.mean_backward(torch.ones(()).cuda(), [0]).shape != (0,):
        failures.append("mean_backward of an empty input")

    summary = Summary()
    for failure in failures:
        print(f"WRONG: {failure}")
    summary.expect("add and square exact, gelu and mean within tolerance, gradients match the CPU's, "
                   "empty input handled", not failures)
    return summary.finish("06_torch_extension_sanitizer")


if __name__ == "__main__":
    sys.exit(main())
