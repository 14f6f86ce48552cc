// SGEMM step 6: 16-byte loads everywhere, and A's tile stored transposed.
// Change (same tiles as step 5):
//  - global memory: each thread fetches one float4 of A's tile and one of B's (LDG.E.128);
//  - A's tile goes into shared memory transposed, As[k][m], so the 8 values of A a thread needs
//    at one k are contiguous, like B's: both are read as two float4s (LDS.128) instead of 8
//    scalar loads;
//  - C is read and written as float4.
// A float4 must be 16-byte aligned, and a tile must lie inside the matrix. So the kernel comes
// in two instantiations: the fast one (kChecked = false) runs only when M, N, K are multiples
// of the tile sizes and the pointers are aligned; otherwise the checked one does the same work
// with bounds-checked scalar loads and stores. The launcher picks; the inner loop is the same.
// Prediction: fewer instructions per FMA (SGEMM_CUDA: 68.7% -> 78.4%).
#pragma once

#include "00_common.cuh"

namespace sgemm {

__device__ inline float4 as_float4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// [excerpt:load4]
/// X[r][c .. c+3] of a rows x cols row-major matrix. Unchecked: one 16-byte load (the caller
/// guarantees it is inside and aligned). Checked: four loads, zero outside the matrix.
template <bool kChecked>
__device__ inline float4 load4(const float* X, int rows, int cols, int r, int c) {
  if constexpr (kChecked)
    return make_float4(load_or_zero(X, rows, cols, r, c), load_or_zero(X, rows, cols, r, c + 1),
                       load_or_zero(X, rows, cols, r, c + 2), load_or_zero(X, rows, cols, r, c + 3));
  else
    return as_float4(&X[r * cols + c]);
}
// [/excerpt:load4]

/// C[r][c .. c+3] = alpha * v + beta * C[r][c .. c+3], with the same two flavours as load4.
template <bool kChecked>
__device__ inline void store4(float* C, int M, int N, int r, int c, float4 v, float alpha, float beta) {
  if constexpr (kChecked) {
    const float vs[4] = {v.x, v.y, v.z, v.w};
    for (int q = 0; q < 4; ++q)
      if (r < M && c + q < N) C[r * N + c + q] = scale_add(alpha, vs[q], beta, C[r * N + c + q]);
  } else {
    float4 out = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    if (beta != 0.0f) {  // see scale_add: with beta == 0, C is not read
      const float4 old = as_float4(&C[r * N + c]);
      out = make_float4(out.x + beta * old.x, out.y + beta * old.y, out.z + beta * old.z,
                        out.w + beta * old.w);
    }
    *reinterpret_cast<float4*>(&C[r * N + c]) = out;
  }
}

/// Moves one BM x BK tile of A and one BK x BN tile of B from global memory to shared memory in
/// two halves: fetch() loads this thread's float4s into registers, stash() writes them to
/// shared memory (A transposed). Step 8 puts work between the two halves.
template <int BM, int BN, int BK, int kThreads, bool kChecked>
struct TileLoader {
  static constexpr int kA = BM * BK / 4 / kThreads;  // float4s of A per thread
  static constexpr int kB = BK * BN / 4 / kThreads;  // float4s of B per thread
  static_assert(kA * 4 * kThreads == BM * BK && kB * 4 * kThreads == BK * BN,
                "the tiles must split into whole float4s per thread");
  float4 a[kA], b[kB];

  // float4 number f of A's tile is row f / (BK/4), columns f % (BK/4) * 4 + 0..3: consecutive
  // threads read consecutive 16-byte pieces of a row. The same for B with BN.
  __device__ void fetch(const float* A, const float* B, int M, int N, int K, int row0, int col0,
                        int k0) {
#pragma unroll
    for (int i = 0; i < kA; ++i) {
      const int f = threadIdx.x + i * kThreads;
      a[i] = load4<kChecked>(A, M, K, row0 + f / (BK / 4), k0 + f % (BK / 4) * 4);
    }
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      const int f = threadIdx.x + i * kThreads;
      b[i] = load4<kChecked>(B, K, N, k0 + f / (BN / 4), col0 + f % (BN / 4) * 4);
    }
  }

  __device__ void stash(float* As, float* Bs) const {
#pragma unroll
    for (int i = 0; i < kA; ++i) {
      const int f = threadIdx.x + i * kThreads;
      const int m = f / (BK / 4), k = f % (BK / 4) * 4;
      As[(k + 0) * BM + m] = a[i].x;  // transposed: As[k][m]
      As[(k + 1) * BM + m] = a[i].y;
      As[(k + 2) * BM + m] = a[i].z;
      As[(k + 3) * BM + m] = a[i].w;
    }
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      const int f = threadIdx.x + i * kThreads;
      *reinterpret_cast<float4*>(&Bs[f / (BN / 4) * BN + f % (BN / 4) * 4]) = b[i];
    }
  }
};

/// True when every tile is full and every float4 aligned: the unchecked kernel may run.
inline bool whole_tiles(int M, int N, int K, int BM, int BN, int BK, const float* A, const float* B,
                        const float* C) {
  const auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return M % BM == 0 && N % BN == 0 && K % BK == 0 && aligned(A) && aligned(B) && aligned(C);
}

template <bool kChecked>
__global__ void __launch_bounds__(256) sgemm_vectorized(int M, int N, int K, float alpha, const float* A,
                                                        const float* B, float beta, float* C) {
  constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, kThreads = 256;
  __shared__ alignas(16) float As[BK * BM];  // transposed
  __shared__ alignas(16) float Bs[BK * BN];
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int thread_row = threadIdx.x / (BN / TN), thread_col = threadIdx.x % (BN / TN);
  TileLoader<BM, BN, BK, kThreads, kChecked> loader;

  float acc[TM][TN] = {};
  // [excerpt:main-loop]
  for (int k0 = 0; k0 < K; k0 += BK) {
    loader.fetch(A, B, M, N, K, row0, col0, k0);
    loader.stash(As, Bs);
    __syncthreads();
    // [excerpt:k-loop]
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = as_float4(&As[k * BM + thread_row * TM + i]);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = as_float4(&Bs[k * BN + thread_col * TN + j]);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    // [/excerpt:k-loop]
    __syncthreads();
  }
  // [/excerpt:main-loop]
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; j += 4)
      store4<kChecked>(C, M, N, row0 + thread_row * TM + i, col0 + thread_col * TN + j,
                       make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta);
}

inline void launch_vectorized(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C) {
  const dim3 grid(ceil_div(N, 128), ceil_div(M, 128));
  if (whole_tiles(M, N, K, 128, 128, 8, A, B, C))
    sgemm_vectorized<false><<<grid, 256>>>(M, N, K, alpha, A, B, beta, C);
  else
    sgemm_vectorized<true><<<grid, 256>>>(M, N, K, alpha, A, B, beta, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace sgemm
