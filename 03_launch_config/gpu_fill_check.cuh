/// \file gpu_fill_check.cuh
/// \brief Filling an array and checking it, both on the GPU.
///
/// At 2^28 floats (1 GiB) a download to the host and a CPU loop take longer than
/// the whole benchmark (at 65536 x 65536 a transpose's check took minutes that way), so
/// this chapter fills its inputs and checks its outputs where they are. The check still follows the course's rule: it returns the
/// largest |got - want|, and NaN if any element is NaN (a poisoned element that
/// was never written).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>

#include "add_kernels.cuh"

namespace chapter03 {

// Any grid works with a grid-stride loop; this one is enough to fill any GPU.
constexpr unsigned kHelperBlock = 256;
constexpr size_t kHelperMaxBlocks = 4096;

__global__ void fill_kernel(float* p, size_t n, float value) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = value;
}

// For floats that are not negative (and |d| never is), the order of the bit
// patterns read as unsigned integers is the order of the values, and every NaN
// sorts above infinity. So an integer atomicMax finds the largest error and
// lets a NaN win, where fmaxf would silently drop it.
__global__ void max_abs_error_kernel(const float* got, size_t n, float want, unsigned* worst_bits) {
  unsigned worst = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    worst = max(worst, __float_as_uint(fabsf(got[i] - want)));
  if (worst != 0) atomicMax(worst_bits, worst);  // no atomics at all when everything is right
}

__global__ void iota_kernel(unsigned* p, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = static_cast<unsigned>(i);  // n <= 2^32: every value exact
}

// out (cols x rows) must be the transpose of in (rows x cols) with in[i] = i, so
// out[c * rows + r] = r * cols + c. A block per row of `out` (grid-stride over rows), its
// threads along the row: reads coalesced, no division.
__global__ void transpose_error_kernel(const unsigned* out, int rows, int cols, unsigned* worst_error) {
  unsigned worst = 0;
  for (size_t c = blockIdx.x; c < static_cast<size_t>(cols); c += gridDim.x)
    for (size_t r = threadIdx.x; r < static_cast<size_t>(rows); r += blockDim.x) {
      const unsigned got = out[c * rows + r], want = static_cast<unsigned>(r * cols + c);
      worst = max(worst, got > want ? got - want : want - got);
    }
  if (worst != 0) atomicMax(worst_error, worst);
}

/// Sets p[0..n) to \p value.
inline void fill_on_gpu(float* p, size_t n, float value) {
  const size_t blocks = std::min(blocks_to_cover(n, kHelperBlock), kHelperMaxBlocks);
  fill_kernel<<<static_cast<unsigned>(blocks), kHelperBlock>>>(p, n, value);
  CUDA_CHECK_LAUNCH();
}

/// Sets p[i] = i for i in [0, n), n <= 2^32.
inline void iota_on_gpu(unsigned* p, size_t n) {
  const size_t blocks = std::min(blocks_to_cover(n, kHelperBlock), kHelperMaxBlocks);
  iota_kernel<<<static_cast<unsigned>(blocks), kHelperBlock>>>(p, n);
  CUDA_CHECK_LAUNCH();
}

/// Largest |out[c * rows + r] - (r * cols + c)|, the error of a transpose of iota_on_gpu()'s
/// matrix, computed on the GPU. The poison 0xFFFFFFFF differs from every answer except, at
/// exactly 2^32 elements, the last one's: there one unwritten element could pass.
inline double transpose_max_error_on_gpu(const unsigned* out, int rows, int cols) {
  tutorial::DeviceBuffer<unsigned> worst(1);
  CUDA_CHECK(cudaMemset(worst.data(), 0, worst.bytes()));
  const unsigned blocks = static_cast<unsigned>(std::min(static_cast<size_t>(cols), kHelperMaxBlocks));
  transpose_error_kernel<<<blocks, kHelperBlock>>>(out, rows, cols, worst.data());
  CUDA_CHECK_LAUNCH();
  return worst.download()[0];
}

/// Largest |got[i] - want| over p[0..n), computed on the GPU; NaN if any element is NaN.
inline double max_abs_error_on_gpu(const float* got, size_t n, float want) {
  tutorial::DeviceBuffer<unsigned> worst(1);
  CUDA_CHECK(cudaMemset(worst.data(), 0, worst.bytes()));
  const size_t blocks = std::min(blocks_to_cover(n, kHelperBlock), kHelperMaxBlocks);
  max_abs_error_kernel<<<static_cast<unsigned>(blocks), kHelperBlock>>>(got, n, want, worst.data());
  CUDA_CHECK_LAUNCH();
  const unsigned bits = worst.download()[0];
  float value = 0.0f;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace chapter03
