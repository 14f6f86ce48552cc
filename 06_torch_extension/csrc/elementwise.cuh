// The elementwise kernels of every operator of the chapter: y[i] = op(x_0[i], ..., x_{N-1}[i]).
//
// All the operators are memory-bound, so this is about moving bytes at full speed whatever the
// alignment of the tensors. When every pointer is equally far from a 16-byte boundary, vector_kernel
// splits the range in three (see split()):
//
//   [0, head)          one float at a time, until every pointer is 16-byte aligned (at most 3);
//   [head, body_end)   float4s (16-byte loads and stores), whole chunks only;
//   [body_end, n)      one float at a time: the rest, fewer than a chunk.
//
// Peeling the head works for tensors misaligned alike (mean of x[1:] has one pointer). It cannot
// help a view such as x[1:] with a fresh output: the output starts on a 16-byte boundary and the
// input 4 bytes past one, and no head aligns both. scalar_kernel then moves every element one float
// at a time, several loads in flight per thread. PyTorch's own kernels make the same choice: float4s
// when all pointers are aligned, unrolled float loads otherwise.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cuda_course {

constexpr int kThreads = 256;                               // per block, a multiple of the warp
constexpr int kUnroll = 4;                                  // float4s per thread per trip
constexpr int kScalarUnroll = 4;                            // floats per thread, scalar_kernel
constexpr int64_t kChunk = int64_t{kThreads} * kUnroll * 4;  // floats per block per trip: 4096

// Where the float4 loop starts and ends (see the top of this file).
struct Split {
  bool aligned_alike;  // all pointers equally far from a 16-byte boundary: the float4 loop can run
  int64_t head;
  int64_t body_end;
};

// The pointers and ranges of one launch of vector_kernel or scalar_kernel.
template <int N>
struct Operands {
  const float* x[N];
  float* y;
  int64_t n;
  Split split;
};

inline int misalignment(const void* p) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(p) % 16); }

// The three ranges for pointers p[0..count) to float arrays of n elements.
inline Split split(const void* const* p, int count, int64_t n) {
  const int m = misalignment(p[0]);
  for (int i = 1; i < count; ++i) {
    if (misalignment(p[i]) != m) return {false, 0, 0};  // no common alignment: one float at a time
  }
  const int64_t head = std::min<int64_t>(n, (16 - m) % 16 / 4);
  return {true, head, head + (n - head) / kChunk * kChunk};
}

template <typename Op, int N>
__device__ float apply(Op op, const float (&v)[N]) {
  static_assert(N == 1 || N == 2, "elementwise ops take one or two tensors");
  if constexpr (N == 1) {
    return op(v[0]);
  } else {
    return op(v[0], v[1]);
  }
}

template <typename Op, int N>
__device__ float4 apply(Op op, const float4 (&v)[N]) {
  float x[N], y[N], z[N], w[N];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    x[j] = v[j].x;
    y[j] = v[j].y;
    z[j] = v[j].z;
    w[j] = v[j].w;
  }
  return make_float4(apply(op, x), apply(op, y), apply(op, z), apply(op, w));
}

// [begin, end) one float at a time, grid-stride: the head and the rest of the float4 kernel.
template <typename Op, int N>
__device__ void one_by_one(Op op, const Operands<N>& t, int64_t begin, int64_t end) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = begin + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < end; i += stride) {
    float v[N];
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = t.x[j][i];
    t.y[i] = apply(op, v);
  }
}

// The float4 kernel: in each of the kUnroll steps a block's threads touch consecutive float4s
// (coalesced), and a thread issues all its loads before it needs any of them. That keeps enough
// bytes in flight to saturate HBM. Whole chunks only, so no bounds check between the loads.
template <typename Op, int N>
__global__ void __launch_bounds__(kThreads) vector_kernel(Op op, Operands<N> t) {
  const int64_t n4 = (t.split.body_end - t.split.head) / 4;
  auto* y4 = reinterpret_cast<float4*>(t.y + t.split.head);
  const int64_t trip = int64_t{gridDim.x} * blockDim.x * kUnroll;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} * kUnroll + threadIdx.x; i < n4; i += trip) {
    float4 v[kUnroll][N];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < N; ++j) v[u][j] = reinterpret_cast<const float4*>(t.x[j] + t.split.head)[i + u * blockDim.x];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) y4[i + u * blockDim.x] = apply(op, v[u]);
  }
  one_by_one(op, t, 0, t.split.head);
  one_by_one(op, t, t.split.body_end, t.n);
}

// The kernel for pointers without a common alignment: every element one float at a time, but each
// thread loads kScalarUnroll floats of every input before it computes any (a warp's loads are
// consecutive addresses: coalesced). The index is clamped to n - 1 instead of checked, so that every
// load is unconditional: with `if (i < n)` around each load, nvcc pairs each load with its store and
// issues them one at a time. The duplicate loads of element n - 1 are never stored.
// A separate kernel, because registers are allocated per kernel: the unrolled loop needs more of
// them, which in the float4 kernel would leave room for fewer threads per SM.
template <typename Op, int N>
__global__ void __launch_bounds__(kThreads) scalar_kernel(Op op, Operands<N> t) {
  const int64_t trip = int64_t{gridDim.x} * blockDim.x * kScalarUnroll;
  for (int64_t base = blockIdx.x * int64_t{blockDim.x} * kScalarUnroll + threadIdx.x; base < t.n; base += trip) {
    float v[kScalarUnroll][N];
#pragma unroll
    for (int u = 0; u < kScalarUnroll; ++u) {
      const int64_t i = min(base + u * int64_t{blockDim.x}, t.n - 1);
#pragma unroll
      for (int j = 0; j < N; ++j) v[u][j] = t.x[j][i];
    }
#pragma unroll
    for (int u = 0; u < kScalarUnroll; ++u) {
      const int64_t i = base + u * int64_t{blockDim.x};
      if (i < t.n) t.y[i] = apply(op, v[u]);
    }
  }
}

}  // namespace cuda_course
