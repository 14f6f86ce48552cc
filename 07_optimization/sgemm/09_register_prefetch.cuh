// SGEMM, going deeper (07_sgemm --register-prefetch): step 8d with its fragments double-buffered in
// registers. In step 8 each k-step's shared-memory reads (LDS.128) must land before its FMAs can start,
// and the first k-step of a tile waits for the barrier too. Here the next k-step's fragments are loaded
// while this one's FMAs run, and across tiles: the barrier comes before the tile's last k-step, whose
// FMAs then run while the next tile's first fragments arrive.
// Prediction: a few percent over 8d where LDS latency after the barrier is exposed (ncu: "short
// scoreboard" and "barrier" stalls); costs 16 more registers (a second set of fragments) under 8d's
// 128-register cap.
#pragma once

#include "08_tile_sweep.cuh"

namespace sgemm {

/// One k-step's values of a thread: RM of A's tile, RN of B's, read as float4.
template <typename Cfg>
struct Fragments {
  using Tile = WarpTile<Cfg>;
  float a[Tile::RM], b[Tile::RN];

  __device__ void load(const Tile& tile, const float* As, const float* Bs, int k) {
#pragma unroll
    for (int wm = 0; wm < Tile::WMITER; ++wm)
#pragma unroll
      for (int i = 0; i < Cfg::TM; i += 4) {
        const float4 v = as_float4(&As[k * Cfg::BM + tile.m0 + wm * Tile::WSUBM + i]);
        float* d = &a[wm * Cfg::TM + i];
        d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
      }
#pragma unroll
    for (int wn = 0; wn < Cfg::WNITER; ++wn)
#pragma unroll
      for (int j = 0; j < Cfg::TN; j += 4) {
        const float4 v = as_float4(&Bs[k * Cfg::BN + tile.n0 + wn * Tile::WSUBN + j]);
        float* d = &b[wn * Cfg::TN + j];
        d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
      }
  }
  __device__ void multiply_into(Tile& tile) const {
#pragma unroll
    for (int i = 0; i < Tile::RM; ++i)
#pragma unroll
      for (int j = 0; j < Tile::RN; ++j) tile.acc[i][j] += a[i] * b[j];
  }
};

template <typename Cfg, bool kChecked>
__global__ void __launch_bounds__(WarpTile<Cfg>::kThreads, Cfg::MIN_BLOCKS)
    sgemm_register_prefetch(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C) {
  using Tile = WarpTile<Cfg>;
  static_assert(Cfg::BK % 2 == 0, "the next tile's first fragments go where the loop expects them: f[0]");
  __shared__ alignas(16) float As[2][Cfg::BK * Cfg::BM];  // transposed
  __shared__ alignas(16) float Bs[2][Cfg::BK * Cfg::BN];
  const int row0 = blockIdx.y * Cfg::BM, col0 = blockIdx.x * Cfg::BN;
  TileLoader<Cfg::BM, Cfg::BN, Cfg::BK, Tile::kThreads, kChecked> loader;
  Tile tile;
  Fragments<Cfg> f[2];

  // [excerpt:main-loop]
  loader.fetch(A, B, M, N, K, row0, col0, 0);
  loader.stash(As[0], Bs[0]);
  __syncthreads();
  f[0].load(tile, As[0], Bs[0], 0);
  int current = 0;
  for (int k0 = 0; k0 < K; k0 += Cfg::BK) {
    const bool more = k0 + Cfg::BK < K;
    if (more) loader.fetch(A, B, M, N, K, row0, col0, k0 + Cfg::BK);  // in flight during the FMAs
#pragma unroll
    for (int k = 0; k < Cfg::BK - 1; ++k) {
      f[(k + 1) % 2].load(tile, As[current], Bs[current], k + 1);  // the next k-step's, in flight...
      f[k % 2].multiply_into(tile);                                 // ...while this one's FMAs run
    }
    if (more) {  // the other buffer was last read before the previous barrier
      loader.stash(As[current ^ 1], Bs[current ^ 1]);
      __syncthreads();
      f[Cfg::BK % 2].load(tile, As[current ^ 1], Bs[current ^ 1], 0);  // the next tile's first
    }
    f[(Cfg::BK - 1) % 2].multiply_into(tile);
    current ^= 1;
  }
  // [/excerpt:main-loop]
  tile.template store<kChecked>(C, M, N, row0, col0, alpha, beta);
}

/// 8d's tiles (128 x 128 x 8, 256 threads of 8 x 8 results, 2 blocks an SM), fragments prefetched.
inline void launch_register_prefetch(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                     float* C) {
  using Cfg = Tiles8d;
  constexpr int kThreads = WarpTile<Cfg>::kThreads;
  const dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  if (whole_tiles(M, N, K, Cfg::BM, Cfg::BN, Cfg::BK, A, B, C))
    sgemm_register_prefetch<Cfg, false><<<grid, kThreads>>>(M, N, K, alpha, A, B, beta, C);
  else
    sgemm_register_prefetch<Cfg, true><<<grid, kThreads>>>(M, N, K, alpha, A, B, beta, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace sgemm
