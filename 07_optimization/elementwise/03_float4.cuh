// Elementwise step 3: 16-byte loads and stores (float4), with alignment and tail handling.
// Change: each thread moves a float4 (LDG.E.128 / STG.E.128) per array per iteration, so a
// warp instruction moves 512 bytes instead of 128: a quarter of the load/store instructions.
// A float4 access must be 16-byte aligned. cudaMalloc returns 256-byte aligned memory, but a
// caller may pass x + 1: then a scalar head runs up to the first aligned element, the body
// uses float4, and a scalar tail takes the last n % 4 elements. If x, y and z are misaligned
// by different amounts, no single split aligns all three: fall back to step 2.
// Prediction: close to the copy bandwidth (within a few percent).
#pragma once

#include <cstdint>

#include "../lab.cuh"
#include "02_grid_stride.cuh"

namespace elementwise {

// [excerpt:kernel]
// Elements [0, head) and the tail are done one at a time; [head, head + 4 * n4) as float4.
__global__ void add_float4(const float* x, const float* y, float* z, int n, int head) {
  const int first = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = blockDim.x * gridDim.x;
  if (first < head) z[first] = x[first] + y[first];  // head < 4 <= threads in the grid

  const int n4 = (n - head) / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x + head);
  const auto* y4 = reinterpret_cast<const float4*>(y + head);
  auto* z4 = reinterpret_cast<float4*>(z + head);
  for (int i = first; i < n4; i += stride) {
    const float4 a = x4[i], b = y4[i];
    z4[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }

  for (int i = head + 4 * n4 + first; i < n; i += stride) z[i] = x[i] + y[i];
}
// [/excerpt:kernel]

// How many floats p lies past the last 16-byte boundary (0..3).
inline int floats_past_alignment(const float* p) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(p) % 16 / sizeof(float));
}

inline void launch_float4(const float* x, const float* y, float* z, int n) {
  const int offset = floats_past_alignment(x);
  if (floats_past_alignment(y) != offset || floats_past_alignment(z) != offset) {
    launch_grid_stride(x, y, z, n);  // no common alignment: float4 is impossible
    return;
  }
  const int head = std::min(n, (4 - offset) % 4);
  constexpr int kBlock = 256;
  const int resident = lab::resident_blocks(add_float4, kBlock);
  add_float4<<<lab::grid_for((n + 3) / 4, kBlock, resident), kBlock>>>(x, y, z, n, head);
  CUDA_CHECK_LAUNCH();
}

}  // namespace elementwise
