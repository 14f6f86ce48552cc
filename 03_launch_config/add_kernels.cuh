/// \file add_kernels.cuh
/// \brief z = x + y four ways: from one thread to the whole GPU.
///
/// The same one-line body in every kernel; only the answer to "which elements
/// does this thread handle?" changes. Indices are size_t throughout: an int
/// index overflows past 2^31 elements (big_index.cu shows it), and 64-bit index
/// arithmetic costs nothing measurable in a kernel that waits on memory.
#pragma once

#include <cstddef>

// 1. <<<1, 1>>>: a single thread walks the whole array, as in chapter 01. Each
// iteration waits for its two loads before the next can start, so the time is
// n times the memory latency.
__global__ void add_one_thread(size_t n, const float* x, const float* y, float* z) {
  for (size_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}

// 2. <<<1, B>>>: one block of B threads. Thread t takes elements t, t + B,
// t + 2B, ...: neighbouring threads read neighbouring floats, so the 32 threads
// of a warp are served by one memory transaction. One block runs on one SM,
// so the other SMs of the GPU sit idle.
__global__ void add_one_block(size_t n, const float* x, const float* y, float* z) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) z[i] = x[i] + y[i];
}

// 3. <<<ceil(n / B), B>>>: one thread per element. The grid is rounded up to
// whole blocks, so the last block may have threads past the end: the bounds
// check keeps them from writing. The cast makes the multiplication 64-bit;
// blockIdx.x * blockDim.x alone is a 32-bit unsigned product.
__global__ void add_one_per_element(size_t n, const float* x, const float* y, float* z) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}

// 4. Grid-stride loop: a grid sized to the GPU (a multiple of its SM count),
// whatever n is. Each thread starts at its global index and steps by the number
// of threads in the grid, so any grid covers any n, and a thread's setup cost is
// paid once for many elements.
__global__ void add_grid_stride(size_t n, const float* x, const float* y, float* z) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    z[i] = x[i] + y[i];
}

/// Blocks of \p block threads needed to give each of \p n elements a thread.
inline size_t blocks_to_cover(size_t n, unsigned block) { return (n + block - 1) / block; }
