// Reduction step 2 (Harris's kernel 2): interleaved addressing without divergence.
// Change: thread t works on index 2 * stride * t, so the active threads are t = 0, 1, 2, ...:
// whole warps drop out together instead of every warp keeping a few busy threads, and the `%`
// is gone.
// Prediction: faster, but a new problem: thread t touches s[2 * stride * t], so with stride 1
// threads 0 and 16 hit s[0] and s[32], the same shared-memory bank (32 banks of 4 bytes), and
// the accesses serialize (bank conflicts): 2-way at stride 1, 4-way at 2, 8-way at 4, 8 and 16
// (at 16 only threads 0-7 are active, all on bank 0).
#pragma once

#include "00_passes.cuh"

namespace reduction {

// [excerpt:kernel]
__global__ void sum_interleaved_strided(const float* in, float* out, int n) {
  __shared__ float s[kBlock];
  const int t = threadIdx.x;
  const int i = blockIdx.x * kBlock + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  // [excerpt:tree]
  for (int stride = 1; stride < kBlock; stride *= 2) {
    const int index = 2 * stride * t;
    if (index < kBlock) s[index] += s[index + stride];
    __syncthreads();
  }
  // [/excerpt:tree]
  if (t == 0) out[blockIdx.x] = s[0];
}
// [/excerpt:kernel]

inline void launch_interleaved_strided(const float* in, int n, float* out, Scratch& scratch) {
  reduce_in_passes(sum_interleaved_strided, kBlock, in, n, out, scratch.a.data(), scratch.b.data());
}

}  // namespace reduction
