// Reduction step 1 (Harris's kernel 1): a tree in shared memory, interleaved addressing.
// Each block loads 256 elements into shared memory, then in log2(256) = 8 rounds thread t adds
// s[t + stride] into s[t] when t is a multiple of 2 * stride.
// Prediction: slow. `t % (2 * stride) == 0` picks every second, fourth, eighth... thread, so
// every warp stays busy (divergent) while fewer and fewer of its threads do work, and `%` is
// expensive. Each pass also reads all its input from memory for one add per element.
#pragma once

#include "00_passes.cuh"

namespace reduction {

// [excerpt:kernel]
__global__ void sum_interleaved_divergent(const float* in, float* out, int n) {
  __shared__ float s[kBlock];
  const int t = threadIdx.x;
  const int i = blockIdx.x * kBlock + t;
  s[t] = i < n ? in[i] : 0.0f;  // past the end: 0, the identity of +
  __syncthreads();
  // [excerpt:tree]
  for (int stride = 1; stride < kBlock; stride *= 2) {
    if (t % (2 * stride) == 0) s[t] += s[t + stride];
    __syncthreads();
  }
  // [/excerpt:tree]
  if (t == 0) out[blockIdx.x] = s[0];
}
// [/excerpt:kernel]

inline void launch_interleaved_divergent(const float* in, int n, float* out, Scratch& scratch) {
  reduce_in_passes(sum_interleaved_divergent, kBlock, in, n, out, scratch.a.data(), scratch.b.data());
}

}  // namespace reduction
