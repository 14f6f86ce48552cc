/// \file add_kernels.cuh
/// \brief x + y from one thread to the whole GPU: chapter 01's kernel, then five steps.
///
/// The same one-line body in every kernel; only the answer to "which elements
/// does this thread handle?" changes. Indices are size_t from step 1 on: an int
/// index overflows past 2^31 elements (big_index.cu shows it). In a kernel that
/// waits on memory the wider index costs nothing measurable; for the single
/// thread, part 1 of add_progression measures both index types.
#pragma once

#include <cstddef>

// The kernels are `static`: defined in a header, each program that includes it gets its
// own copy, so two files of one program can include it without a duplicate definition.

// 0. Chapter 01's kernel, unchanged: one thread, an int index, y = x + y in
// place. It is the baseline of the speedup table, so the table answers "how
// much faster than chapter 01's program?".
static __global__ void add_chapter01(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = x[i] + y[i];
}

// 1. <<<1, 1>>>: still one thread, with the size_t index and the separate
// output z of the kernels below. Each element's loads are issued after the
// previous element's store (z might overlap x or y, so the compiler keeps that
// order), and the thread has nothing else to do while it waits: the elements
// are done one after another, each waiting for its own loads.
static __global__ void add_one_thread(size_t n, const float* x, const float* y, float* z) {
  for (size_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}

// 2. <<<1, B>>>: one block of B threads. Thread t takes elements t, t + B,
// t + 2B, ...: neighbouring threads read neighbouring floats, so the 32 threads
// of a warp are served by one memory transaction. One block runs on one SM,
// so the other SMs of the GPU sit idle.
// [excerpt:one-block]
static __global__ void add_one_block(size_t n, const float* x, const float* y, float* z) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) z[i] = x[i] + y[i];
}
// [/excerpt:one-block]

// 3. <<<ceil(n / B), B>>>: one thread per element. The grid is rounded up to
// whole blocks, so the last block may have threads past the end: the bounds
// check keeps them from writing. The cast makes the multiplication 64-bit;
// blockIdx.x * blockDim.x alone is a 32-bit unsigned product.
// [excerpt:one-per-element]
static __global__ void add_one_per_element(size_t n, const float* x, const float* y, float* z) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}
// [/excerpt:one-per-element]

// 4. Grid-stride loop: a grid sized to the GPU (a multiple of its SM count),
// whatever n is. Each thread starts at its global index and steps by the number
// of threads in the grid, so any grid covers any n, and a thread's setup cost is
// paid once for many elements.
// [excerpt:grid-stride]
static __global__ void add_grid_stride(size_t n, const float* x, const float* y, float* z) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    z[i] = x[i] + y[i];
}
// [/excerpt:grid-stride]

// 5. Grid-stride with 16-byte accesses: each thread loads a float4 (four floats,
// one instruction) from x and from y and stores one to z. The same bytes move in
// a quarter of the memory instructions, and each thread has 32 bytes of loads in
// flight instead of 8: more work per thread, fewer and wider memory requests.
// A float4 access must be 16-byte aligned. cudaMalloc returns pointers aligned to
// at least 256 bytes, so this chapter's arrays are; a pointer into the middle of
// an array (x + 1) is not, and chapter 07 handles that case. The float4 loop
// covers the first 4 * (n / 4) elements; the last n % 4 are added one by one.
// [excerpt:grid-stride-float4]
static __global__ void add_grid_stride_float4(size_t n, const float* x, const float* y, float* z) {
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t n4 = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* y4 = reinterpret_cast<const float4*>(y);
  auto* z4 = reinterpret_cast<float4*>(z);
  for (size_t i = first; i < n4; i += stride) {
    const float4 a = x4[i], b = y4[i];
    z4[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
  for (size_t i = 4 * n4 + first; i < n; i += stride) z[i] = x[i] + y[i];  // the tail
}
// [/excerpt:grid-stride-float4]

namespace chapter03 {
/// Blocks of \p block threads needed to give each of \p n elements a thread.
inline size_t blocks_to_cover(size_t n, unsigned block) { return (n + block - 1) / block; }
}  // namespace chapter03
