// Reduction step 5 (Harris's kernels 5 and 6, done the modern way): warp shuffles.
// Change: inside a warp, __shfl_down_sync passes values register to register, so the last five
// rounds need no shared memory and no __syncthreads(). Each warp sums its 32 values; the 8 warp
// sums go through shared memory once; warp 0 sums those.
// Harris unrolled the last warp with a `volatile` shared array and no synchronisation
// ("warp-synchronous" code). Since Volta (independent thread scheduling) that is a data race:
// the threads of a warp are not guaranteed to run in lockstep. Shuffles with a mask are the
// correct form. Full unrolling (Harris's kernel 6) comes free: kBlock is a compile-time constant.
// Prediction: fewer barriers and shared-memory round trips; better than step 4, but each
// thread still adds only two elements before the tree, and the passes remain.
#pragma once

#include "00_passes.cuh"

namespace reduction {

// [excerpt:kernel]
/// The sum of \p v over the 32 lanes of the calling warp, in lane 0.
// [excerpt:block-sum]
// [excerpt:warp-sum]
__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
// [/excerpt:warp-sum]

/// The sum of \p v over the block (of kBlock threads), in thread 0. Two calls in one kernel must
/// be separated by __syncthreads(): the second would overwrite warp_sums while warp 0 reads it.
__device__ inline float block_sum(float v) {
  __shared__ float warp_sums[kBlock / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp != 0) return 0.0f;
  return warp_sum(lane < kBlock / 32 ? warp_sums[lane] : 0.0f);
}
// [/excerpt:block-sum]

__global__ void sum_warp_shuffle(const float* in, float* out, int n) {
  const int i = blockIdx.x * (2 * kBlock) + threadIdx.x;
  const float v = (i < n ? in[i] : 0.0f) + (i + kBlock < n ? in[i + kBlock] : 0.0f);
  const float total = block_sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}
// [/excerpt:kernel]

inline void launch_warp_shuffle(const float* in, int n, float* out, Scratch& scratch) {
  reduce_in_passes(sum_warp_shuffle, 2 * kBlock, in, n, out, scratch.a.data(), scratch.b.data());
}

}  // namespace reduction
