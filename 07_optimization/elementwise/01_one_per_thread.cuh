// Elementwise step 1: one thread per element.
// Change: the baseline. n threads in ceil(n / 256) blocks, each adds one pair and exits.
// Prediction: loads are coalesced (thread i reads element i), so it already runs within about
// a tenth of the copy bandwidth. What holds it back is how many bytes are on their way from
// memory at once (Little's law, chapter 03): each thread has two 4-byte loads in flight, and an
// SM holds at most 2048 threads. More blocks cannot add more; wider loads can (step 3).
// The index is an int, which chapter 03's big_index.cu shows going negative past 2^31 threads.
// Here it cannot: the runner caps --n at lab::kMaxElements = 2^30 (lab.cuh), so i stays below
// 2^30 + 256. A kernel without such a cap needs a 64-bit index.
#pragma once

#include "../lab.cuh"

namespace elementwise {

// [excerpt:add]
__global__ void add_one_per_thread(const float* x, const float* y, float* z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];  // the last block may reach past n
}

inline void launch_one_per_thread(const float* x, const float* y, float* z, int n) {
  constexpr int kBlock = 256;
  add_one_per_thread<<<(n + kBlock - 1) / kBlock, kBlock>>>(x, y, z, n);
  CUDA_CHECK_LAUNCH();
}
// [/excerpt:add]

}  // namespace elementwise
