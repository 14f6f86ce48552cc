// SGEMM step 5: 2-D register tiling (an 8 x 8 block of results per thread).
// Change: a block of 256 threads computes a 128 x 128 tile of C (BK = 8). Each thread keeps
// 8 x 8 = 64 results in registers; per k it loads 8 values of A's tile and 8 of B's into
// registers and does their 64 FMAs (an outer product).
// Prediction: another large step (SGEMM_CUDA: 36.5% -> 68.7%): 16 shared loads feed 64 FMAs
// (0.25 a FMA), and each global element is reused by 128 results of the tile.
#pragma once

#include "00_common.cuh"

namespace sgemm {

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_2d_blocktiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                         float* C) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(kThreads % BK == 0 && kThreads % BN == 0, "the tile loads must split evenly");
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int t = threadIdx.x;
  const int thread_row = t / (BN / TN), thread_col = t % (BN / TN);

  float acc[TM][TN] = {};
  // [excerpt:main-loop]
  for (int k0 = 0; k0 < K; k0 += BK) {
    // BM * BK elements of A and BK * BN of B, kThreads at a time (4 of each per thread here).
    for (int r = t / BK; r < BM; r += kThreads / BK)
      As[r * BK + t % BK] = load_or_zero(A, M, K, row0 + r, k0 + t % BK);
    for (int r = t / BN; r < BK; r += kThreads / BN)
      Bs[r * BN + t % BN] = load_or_zero(B, K, N, k0 + r, col0 + t % BN);
    __syncthreads();
    // [excerpt:k-loop]
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[(thread_row * TM + i) * BK + k];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k * BN + thread_col * TN + j];
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
    for (int j = 0; j < TN; ++j) {
      const int row = row0 + thread_row * TM + i, col = col0 + thread_col * TN + j;
      if (row < M && col < N) C[row * N + col] = scale_add(alpha, acc[i][j], beta, C[row * N + col]);
    }
}

inline void launch_2d_blocktiling(int M, int N, int K, float alpha, const float* A, const float* B,
                                  float beta, float* C) {
  constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  const dim3 grid(ceil_div(N, BN), ceil_div(M, BM));
  sgemm_2d_blocktiling<BM, BN, BK, TM, TN>
      <<<grid, (BM / TM) * (BN / TN)>>>(M, N, K, alpha, A, B, beta, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace sgemm
