// SGEMM step 4: 1-D register tiling (a column of 8 results per thread).
// Change: a block of 512 threads computes a 64 x 64 tile of C, walking K in steps of 8. Each
// thread keeps 8 results (8 rows, one column) in registers. Per k it loads one value of B's
// tile into a register and reuses it for 8 FMAs with 8 values of A's tile (the same 8 values
// for every thread of a warp: broadcasts).
// Prediction: a big step (SGEMM_CUDA: 12.8% -> 36.5%): shared-memory loads per FMA drop from
// 2 to about 1.1, so the FMA units are fed better.
#pragma once

#include "00_common.cuh"

namespace sgemm {

template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM* BN / TM)
    sgemm_1d_blocktiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                         float* C) {
  constexpr int kThreads = BM * BN / TM;
  static_assert(BM * BK == kThreads && BK * BN == kThreads,
                "each thread loads one element of each tile");
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int t = threadIdx.x;
  const int thread_row = t / BN,
            thread_col = t % BN;             // results: rows thread_row*TM + i, column thread_col
  const int a_row = t / BK, a_col = t % BK;  // the element of A's tile this thread loads
  const int b_row = t / BN, b_col = t % BN;  // and of B's

  float acc[TM] = {};
  // [excerpt:main-loop]
  for (int k0 = 0; k0 < K; k0 += BK) {
    As[a_row * BK + a_col] = load_or_zero(A, M, K, row0 + a_row, k0 + a_col);
    Bs[b_row * BN + b_col] = load_or_zero(B, K, N, k0 + b_row, col0 + b_col);
    __syncthreads();
    // [excerpt:k-loop]
    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k * BN + thread_col];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[(thread_row * TM + i) * BK + k] * b;
    }
    // [/excerpt:k-loop]
    __syncthreads();
  }
  // [/excerpt:main-loop]
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + thread_row * TM + i, col = col0 + thread_col;
    if (row < M && col < N) C[row * N + col] = scale_add(alpha, acc[i], beta, C[row * N + col]);
  }
}

inline void launch_1d_blocktiling(int M, int N, int K, float alpha, const float* A, const float* B,
                                  float beta, float* C) {
  constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
  const dim3 grid(ceil_div(N, BN), ceil_div(M, BM));
  sgemm_1d_blocktiling<BM, BN, BK, TM><<<grid, BM * BN / TM>>>(M, N, K, alpha, A, B, beta, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace sgemm
