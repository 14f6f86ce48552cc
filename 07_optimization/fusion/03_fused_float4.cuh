// Fusion step 3: the fused kernel with 16-byte loads and stores (elementwise step 3's lesson).
// Change: each thread reads a float4 of x and writes a float4 of y; the last n % 4 elements
// one at a time. x and y come from cudaMalloc (256-byte aligned); other pointers fall back to
// step 2.
// Prediction: within a few percent of the copy bandwidth, like chapter 06's F.gelu.
#pragma once

#include <cstdint>

#include "02_fused.cuh"

namespace fusion {

// [excerpt:kernel]
__global__ void gelu_fused_float4(const float* x, float* y, int n) {
  const int first = blockIdx.x * blockDim.x + threadIdx.x, stride = blockDim.x * gridDim.x;
  const int n4 = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  auto* y4 = reinterpret_cast<float4*>(y);
  for (int i = first; i < n4; i += stride) {
    const float4 v = x4[i];
    y4[i] = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
  }
  for (int i = 4 * n4 + first; i < n; i += stride) y[i] = gelu(x[i]);
}
// [/excerpt:kernel]

inline void launch_fused_float4(const float* x, float* y, int n, float* t, float* u) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (!aligned(x) || !aligned(y)) return launch_fused(x, y, n, t, u);
  constexpr int kBlock = 256;
  const int resident = lab::resident_blocks(gelu_fused_float4, kBlock);
  gelu_fused_float4<<<lab::grid_for((n + 3) / 4, kBlock, resident), kBlock>>>(x, y, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace fusion
