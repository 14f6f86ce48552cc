// Fusion step 2: the whole GELU in one kernel.
// Change: x is read once into a register, every intermediate stays in registers, y is written
// once: 2 passes of 4n bytes instead of 18. The arithmetic (a dozen flops and a tanhf per
// element) is nothing next to the time a byte takes to arrive.
// Prediction: the time of a copy of n floats, 9x faster than step 1; scalar loads, so like
// elementwise step 2 (grid-stride), a little short of the copy bandwidth.
#pragma once

#include "../lab.cuh"

namespace fusion {

// [excerpt:kernel]
__device__ inline float gelu(float x) {
  const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);  // sqrt(2/pi) * (x + 0.044715 x^3)
  return 0.5f * x * (1.0f + tanhf(inner));
}

// [excerpt:fused-kernel]
__global__ void gelu_fused(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = gelu(x[i]);
}
// [/excerpt:fused-kernel]
// [/excerpt:kernel]

inline void launch_fused(const float* x, float* y, int n, float*, float*) {
  constexpr int kBlock = 256;
  const int resident = lab::resident_blocks(gelu_fused, kBlock);
  gelu_fused<<<lab::grid_for(n, kBlock, resident), kBlock>>>(x, y, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace fusion
