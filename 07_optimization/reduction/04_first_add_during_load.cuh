// Reduction step 4 (Harris's kernel 4): first add during the load.
// Change: each block covers 2 * 256 elements; every thread loads two and stores their sum, so
// no thread is idle in the first round and half as many blocks (and partial sums) are needed.
// Prediction: close to 2x step 3 (Harris: 1.8x), since the tree's cost per element halves.
#pragma once

#include "00_passes.cuh"

namespace reduction {

// [excerpt:kernel]
__global__ void sum_first_add_during_load(const float* in, float* out, int n) {
  __shared__ float s[kBlock];
  const int t = threadIdx.x;
  // [excerpt:load]
  const int i = blockIdx.x * (2 * kBlock) + t;
  s[t] = (i < n ? in[i] : 0.0f) + (i + kBlock < n ? in[i + kBlock] : 0.0f);
  // [/excerpt:load]
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
// [/excerpt:kernel]

inline void launch_first_add_during_load(const float* in, int n, float* out, Scratch& scratch) {
  reduce_in_passes(sum_first_add_during_load, 2 * kBlock, in, n, out, scratch.a.data(), scratch.b.data());
}

}  // namespace reduction
