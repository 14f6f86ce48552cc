// Reduction step 6 (Harris's kernel 7): many elements per thread, a grid-stride loop, float4.
// Change: launch only enough blocks to fill the GPU once (e.g. 132 SMs x 8 blocks). Each thread
// sums its share of the array in a register, reading 16 bytes (a float4) per load, then the
// block reduces once. The ~1000 partial sums need one more launch: the same kernel, one block.
// Prediction: this is where the kernel becomes limited by memory bandwidth: a tree per 256
// loads becomes a tree per ~1000 loads a thread, and the 2^20 partial sums of step 5 become
// ~1000. Expect ~90-100% of CUB.
#pragma once

#include "../lab.cuh"
#include "05_warp_shuffle.cuh"

namespace reduction {

// [excerpt:kernel]
/// This thread's share of in[0, n), read as float4 in a grid-stride loop; the last n % 4
/// elements one at a time. \p in must be 16-byte aligned (cudaMalloc memory is 256-byte aligned).
// [excerpt:thread-sum]
__device__ inline float thread_sum(const float* in, int n) {
  const int first = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = blockDim.x * gridDim.x;
  const int n4 = n / 4;
  const auto* in4 = reinterpret_cast<const float4*>(in);
  float sum = 0.0f;
  // [excerpt:float4-loop]
#pragma unroll 4  // four loads in flight per thread before their adds are needed
  for (int i = first; i < n4; i += stride) {
    const float4 v = in4[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  // [/excerpt:float4-loop]
  for (int i = 4 * n4 + first; i < n; i += stride) sum += in[i];
  return sum;
}
// [/excerpt:thread-sum]

__global__ void sum_grid_stride(const float* in, float* out, int n) {
  const float total = block_sum(thread_sum(in, n));
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}
// [/excerpt:kernel]

/// Blocks for the first pass: one wave on the GPU, and no more than there are float4s to read.
inline int first_pass_blocks(int n) {
  const int resident = lab::resident_blocks(sum_grid_stride, kBlock);
  return lab::grid_for((n + 3) / 4, kBlock, resident);
}

// [excerpt:launch]
/// The first pass writes first_pass_blocks(n) partial sums to scratch.a.
inline void launch_grid_stride(const float* in, int n, float* out, Scratch& scratch) {
  const int blocks = first_pass_blocks(n);
  float* partials = scratch.a.data();
  sum_grid_stride<<<blocks, kBlock>>>(in, partials, n);
  CUDA_CHECK_LAUNCH();
  sum_grid_stride<<<1, kBlock>>>(partials, out, blocks);
  CUDA_CHECK_LAUNCH();
}
// [/excerpt:launch]

}  // namespace reduction
