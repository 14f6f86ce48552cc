// SGEMM step 1: naive. One thread per element of C, a dot product straight from global memory.
// threadIdx.x picks the ROW, so the 32 threads of a warp hold 32 different rows: at each k they
// read A[row][k] 32 rows apart (32 separate memory transactions for 128 useful bytes) and store
// C 32 rows apart. B[k][col] is the same address for the whole warp (one broadcast).
// Prediction: ~1% of cuBLAS (SGEMM_CUDA: 1.3% on an A6000). 2 FLOPs per 8 bytes loaded, and
// most of each 32-byte sector fetched is thrown away.
#pragma once

#include "00_common.cuh"

namespace sgemm {

// [excerpt:kernel]
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = scale_add(alpha, acc, beta, C[row * N + col]);
}
// [/excerpt:kernel]

inline void launch_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                         float* C) {
  const dim3 block(32, 32);
  const dim3 grid(ceil_div(M, 32), ceil_div(N, 32));
  sgemm_naive<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace sgemm
