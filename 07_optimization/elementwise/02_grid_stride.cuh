// Elementwise step 2: a grid-stride loop.
// Change: launch just enough blocks to fill every SM once; each thread walks the array in
// steps of the whole grid (i, i + gridDim.x * blockDim.x, ...).
// Prediction: fewer blocks to schedule and index math amortised over many elements, so a few
// percent better, if that overhead were the limit. It is not: each thread still has two 4-byte
// loads in flight, as in step 1, so the bytes in flight per SM, and the time, stay the same.
#pragma once

#include "../lab.cuh"

namespace elementwise {

// [excerpt:add]
__global__ void add_grid_stride(const float* x, const float* y, float* z, int n) {
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) z[i] = x[i] + y[i];
}

inline void launch_grid_stride(const float* x, const float* y, float* z, int n) {
  constexpr int kBlock = 256;
  const int resident = lab::resident_blocks(add_grid_stride, kBlock);
  add_grid_stride<<<lab::grid_for(n, kBlock, resident), kBlock>>>(x, y, z, n);
  CUDA_CHECK_LAUNCH();
}
// [/excerpt:add]

}  // namespace elementwise
