// SGEMM step 8: double buffering.
// Change: two pairs of tiles in shared memory. While the warps compute on one pair, the next
// pair's global loads are already in flight (fetch() into registers before compute(), stash()
// into the other buffer after it). One __syncthreads() per tile instead of two, and the
// latency of the global loads hides behind 16 x 128 FMAs per thread.
// Prediction (step 7's tiles): a few percent over step 7 when the load latency was exposed; costs
// 32 more registers per thread (the fetched float4s stay live during compute) and twice the shared
// memory. Whether it pays is what the measurement says.
// The kernel is a template on the tile configuration: 08_tile_sweep.cuh times five of them.
#pragma once

#include "07_warptiling.cuh"

namespace sgemm {

template <typename Cfg, bool kChecked>
__global__ void __launch_bounds__(WarpTile<Cfg>::kThreads, Cfg::MIN_BLOCKS)
    sgemm_double_buffered(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                          float* C) {
  using Tile = WarpTile<Cfg>;
  __shared__ alignas(16) float As[2][Cfg::BK * Cfg::BM];  // transposed
  __shared__ alignas(16) float Bs[2][Cfg::BK * Cfg::BN];
  const int row0 = blockIdx.y * Cfg::BM, col0 = blockIdx.x * Cfg::BN;
  TileLoader<Cfg::BM, Cfg::BN, Cfg::BK, Tile::kThreads, kChecked> loader;
  Tile tile;

  // [excerpt:main-loop]
  loader.fetch(A, B, M, N, K, row0, col0, 0);
  loader.stash(As[0], Bs[0]);
  __syncthreads();
  int current = 0;
  for (int k0 = 0; k0 < K; k0 += Cfg::BK) {
    const bool more = k0 + Cfg::BK < K;
    if (more) loader.fetch(A, B, M, N, K, row0, col0, k0 + Cfg::BK);  // in flight during compute
    tile.compute(As[current], Bs[current]);
    // The other buffer was last read in the previous iteration, before its __syncthreads().
    if (more) loader.stash(As[current ^ 1], Bs[current ^ 1]);
    __syncthreads();  // the next tile is complete, and everyone is done reading this one
    current ^= 1;
  }
  // [/excerpt:main-loop]
  tile.template store<kChecked>(C, M, N, row0, col0, alpha, beta);
}

template <typename Cfg>
void launch_double_buffered(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C) {
  constexpr int kThreads = WarpTile<Cfg>::kThreads;
  const dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  if (whole_tiles(M, N, K, Cfg::BM, Cfg::BN, Cfg::BK, A, B, C))
    sgemm_double_buffered<Cfg, false><<<grid, kThreads>>>(M, N, K, alpha, A, B, beta, C);
  else
    sgemm_double_buffered<Cfg, true><<<grid, kThreads>>>(M, N, K, alpha, A, B, beta, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace sgemm
