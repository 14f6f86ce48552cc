"""Part 1, step 1: square a tensor with your own CUDA kernel, compiled from Python by load_inline."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "demos"))  # the chapter's helpers
from summary import Summary  # noqa: E402
from timing import require_gpu  # noqa: E402

CUDA_SOURCE = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

__global__ void square_kernel(const float* x, float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // n may pass 2^31
  if (i < n) y[i] = x[i] * x[i];
}

torch::Tensor square(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.dtype() == torch::kFloat32 && x.is_contiguous(),
              "square: x must be a contiguous float32 CUDA tensor");
  c10::cuda::CUDAGuard on_the_device_of_x(x.device());
  torch::Tensor y = torch::empty_like(x);
  int64_t n = x.numel();
  if (n > 0)  // on PyTorch's current stream: in order with its own work
    square_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""


def build(verbose: bool = False):
    from torch.utils.cpp_extension import load_inline  # here: without a GPU, importing it warns

    return load_inline(name="part1_square", cpp_sources="torch::Tensor square(torch::Tensor x);",
                       cuda_sources=CUDA_SOURCE, functions=["square"], verbose=verbose,
                       extra_cuda_cflags=["-O3", "-lineinfo"],  # capital O: nvcc refuses -o2
                       # PyTorch's shared C++ runtime, not the static copy a GCC with a broken libstdc++.so link takes (docs/pitfalls.md)
                       extra_ldflags=["-l:libstdc++.so.6"])


if __name__ == "__main__":
    require_gpu()
    square = build(verbose=True).square
    summary = Summary()
    a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="cuda")
    known = torch.tensor([[1.0, 4.0, 9.0], [16.0, 25.0, 36.0]], device="cuda")
    summary.exact("square(a) vs [[1, 4, 9], [16, 25, 36]]", (square(a) - known).abs().max().item())
    x = torch.randn(10_000_001, device="cuda")
    summary.exact("square(x) vs torch.square(x), 10000001 random floats", (square(x) - torch.square(x)).abs().max().item())
    sys.exit(summary.finish("06_torch_extension_part1_inline"))
