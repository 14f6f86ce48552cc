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
// input 4 bytes past one, and no head aligns both. Where every pointer is equally far from an 8-byte
// boundary (x[2:] with a fresh output: both on one), the same kernel runs with float2s; else
// scalar_kernel moves every element one float at a time, several loads in flight per thread.
// PyTorch's own kernels make the same choice: the widest vector (4, 2 or 1 floats) that every
// pointer's alignment allows. (On an H200, GELU of x[2:] one float at a time fell short of PyTorch's
// float2 kernel: GELU's tanhf makes the scalar loop's extra instructions per element show.)
#pragma once

#include <algorithm>
#include <cstdint>

namespace cuda_course {

constexpr int kThreads = 256;                               // per block, a multiple of the warp
constexpr int kUnroll = 4;                                  // float4s per thread per trip
constexpr int kScalarUnroll = 4;                            // floats per thread, scalar_kernel
// Floats per block per trip of the vector loop, with vectors of `width` floats: 4096 for float4s.
constexpr int64_t chunk(int width) { return int64_t{kThreads} * kUnroll * width; }
constexpr int64_t kChunk = chunk(4);

// Where the vector loop starts and ends (see the top of this file).
struct Split {
  bool aligned_alike;  // all pointers equally far from a (4 * width)-byte boundary: the loop can run
  int64_t head;
  int64_t body_end;
};

// The vector of `width` floats that one load or store moves: float4 (16 bytes) or float2 (8 bytes).
template <int width>
struct VectorOf;
template <>
struct VectorOf<4> {
  using type = float4;
};
template <>
struct VectorOf<2> {
  using type = float2;
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

// The three ranges for pointers p[0..count) to float arrays of n elements, for vectors of `width`
// floats (4 or 2).
inline Split split(const void* const* p, int count, int64_t n, int width = 4) {
  const int bytes = 4 * width;
  const int m = misalignment(p[0]) % bytes;
  for (int i = 1; i < count; ++i) {
    if (misalignment(p[i]) % bytes != m) return {false, 0, 0};  // no common alignment at this width
  }
  const int64_t head = std::min<int64_t>(n, (bytes - m) % bytes / 4);
  return {true, head, head + (n - head) / chunk(width) * chunk(width)};
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

template <typename Op, int N>
__device__ float2 apply(Op op, const float2 (&v)[N]) {
  float x[N], y[N];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    x[j] = v[j].x;
    y[j] = v[j].y;
  }
  return make_float2(apply(op, x), apply(op, y));
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

// The vector kernel (float4s, or float2s: `width` floats each): in each of the kUnroll steps a
// block's threads touch consecutive vectors (coalesced), and a thread issues all its loads before it
// needs any of them. That keeps enough bytes in flight to saturate HBM. Whole chunks only, so no
// bounds check between the loads.
template <int width, typename Op, int N>
__global__ void __launch_bounds__(kThreads) vector_kernel(Op op, Operands<N> t) {
  using Vector = typename VectorOf<width>::type;
  const int64_t vectors = (t.split.body_end - t.split.head) / width;
  auto* y = reinterpret_cast<Vector*>(t.y + t.split.head);
  const int64_t trip = int64_t{gridDim.x} * blockDim.x * kUnroll;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} * kUnroll + threadIdx.x; i < vectors; i += trip) {
    Vector v[kUnroll][N];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < N; ++j) v[u][j] = reinterpret_cast<const Vector*>(t.x[j] + t.split.head)[i + u * blockDim.x];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) y[i + u * blockDim.x] = apply(op, v[u]);
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
// Index is int32_t where every index fits (kMaxInt32Elements), as in PyTorch's kernels: 64-bit
// index arithmetic costs instructions per element, and GELU's tanhf leaves few to spare.
constexpr int64_t kMaxInt32Elements = INT32_MAX / 2 - int64_t{kThreads} * kScalarUnroll;  // base + trip fits

template <typename Index, typename Op, int N>
__global__ void __launch_bounds__(kThreads) scalar_kernel(Op op, Operands<N> t) {
  const Index n = static_cast<Index>(t.n), threads = static_cast<Index>(blockDim.x);
  const Index trip = static_cast<Index>(gridDim.x) * threads * kScalarUnroll;
  for (Index base = static_cast<Index>(blockIdx.x) * threads * kScalarUnroll + static_cast<Index>(threadIdx.x);
       base < n; base += trip) {
    float v[kScalarUnroll][N];
#pragma unroll
    for (int u = 0; u < kScalarUnroll; ++u) {
      const Index i = min(base + u * threads, n - 1);
#pragma unroll
      for (int j = 0; j < N; ++j) v[u][j] = t.x[j][i];
    }
#pragma unroll
    for (int u = 0; u < kScalarUnroll; ++u) {
      const Index i = base + u * threads;
      if (i < n) t.y[i] = apply(op, v[u]);
    }
  }
}

}  // namespace cuda_course
