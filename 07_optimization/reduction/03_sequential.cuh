// Reduction step 3 (Harris's kernel 3): sequential addressing.
// Change: fold the upper half onto the lower half: s[t] += s[t + stride] with stride 128, 64,
// ..., 1. Consecutive threads touch consecutive words: no bank conflicts, no divergence until
// fewer than 32 threads are left.
// Prediction: faster again. Still, half the threads are idle from the first round on, and the
// kernel does one add per element loaded: memory is not yet kept busy.
#pragma once

#include "00_passes.cuh"

namespace reduction {

// [excerpt:kernel]
__global__ void sum_sequential(const float* in, float* out, int n) {
  __shared__ float s[kBlock];
  const int t = threadIdx.x;
  // [excerpt:load]
  const int i = blockIdx.x * kBlock + t;
  s[t] = i < n ? in[i] : 0.0f;
  // [/excerpt:load]
  __syncthreads();
  // [excerpt:tree]
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  // [/excerpt:tree]
  if (t == 0) out[blockIdx.x] = s[0];
}
// [/excerpt:kernel]

inline void launch_sequential(const float* in, int n, float* out, Scratch& scratch) {
  reduce_in_passes(sum_sequential, kBlock, in, n, out, scratch.a.data(), scratch.b.data());
}

}  // namespace reduction
