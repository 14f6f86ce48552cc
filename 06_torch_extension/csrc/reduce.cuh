// The sum behind mean(): block sums with warp shuffles, then a second pass over the partials.
#pragma once

#include "elementwise.cuh"

namespace cuda_course {

// Sum over the 32 lanes of a warp: five shuffle steps, no shared memory.
// Afterwards lane 0 holds the warp's total.
__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over a block of kThreads threads; the total is valid in thread 0.
// Every thread must call it (it contains __syncthreads).
__device__ inline float block_sum(float v) {
  __shared__ float warp_totals[kThreads / 32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < kThreads / 32 ? warp_totals[lane] : 0.0f);
  return v;
}

// Adds x[begin, end) one float at a time, grid-stride; used for the head and the rest.
__device__ inline float sum_one_by_one(const float* __restrict__ x, int64_t begin, int64_t end) {
  float acc = 0.0f;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = begin + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < end; i += stride) acc += x[i];
  return acc;
}

// Block b writes (sum of its grid-stride share of x[0..n)) / divisor to out[b].
// Launched twice by mean(): many blocks over x (divisor 1), then one block over
// their partial sums (divisor n). No atomics, so the result is the same on
// every run: the order of the additions is fixed by n, the alignment and the grid.
// The ranges are those of the elementwise kernel: with one pointer, a view such as
// x[1:] peels 3 floats and then runs the float4 loop.
__global__ void __launch_bounds__(kThreads)
    sum_kernel(const float* __restrict__ x, int64_t n, Split split, double divisor, float* __restrict__ out) {
  const auto* x4 = reinterpret_cast<const float4*>(x + split.head);
  const int64_t n4 = (split.body_end - split.head) / 4;
  const int64_t trip = int64_t{gridDim.x} * blockDim.x * kUnroll;
  float acc = 0.0f;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} * kUnroll + threadIdx.x; i < n4; i += trip) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = x4[i + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  acc += sum_one_by_one(x, 0, split.head) + sum_one_by_one(x, split.body_end, n);
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<float>(acc / divisor);
}

}  // namespace cuda_course
