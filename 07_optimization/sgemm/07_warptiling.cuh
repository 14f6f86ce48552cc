// SGEMM step 7: warp tiling (SGEMM_CUDA's kernel 10).
// Change: one more level in the hierarchy block tile -> WARP TILE -> thread tile. Each warp owns
// a WM x WN piece of the block's tile and computes it as WMITER x WNITER sub-tiles; within a
// sub-tile its 32 lanes form an 8 x 4 grid of TM x TN thread tiles. So the values a warp reads
// from shared memory at one k are a few contiguous runs (few, conflict-free LDS.128), the warp's
// results are adjacent, and each thread keeps (WMITER*TM) x (WNITER*TN) = 8 x 16 results.
// BK = 16 halves the number of __syncthreads() per FMA compared with step 6.
// Prediction: SGEMM_CUDA gained 78% -> 94% of cuBLAS with kernels 7-10 on an A6000; on an H100
// expect ~80-90%.
#pragma once

#include "06_vectorized.cuh"

namespace sgemm {

/// Tile sizes (SGEMM_CUDA's tuned kernel-10 values): 128 x 128 block tile, 4 warps of 64 x 64.
struct WarptileConfig {
  // Block tile: BM x BN results, walking K in steps of BK.
  static constexpr int BM = 128, BN = 128, BK = 16;
  // Warp tile: WM x WN results, computed as WNITER columns of sub-tiles (and WMITER rows).
  static constexpr int WM = 64, WN = 64, WNITER = 4;
  // Thread tile within a sub-tile.
  static constexpr int TM = 8, TN = 4;
  // Blocks that must fit on one SM together: __launch_bounds__'s second argument, which makes
  // ptxas keep registers per thread <= 65536 / (threads * MIN_BLOCKS), spilling if it must.
  // 0: no such demand (the same as leaving the argument out). How many registers ptxas then
  // chose: `cuobjdump --dump-resource-usage build/bin/07_sgemm` (REG: of each sgemm_warptiling),
  // or the README's table of compiled kernels, which 07_optimization/sass_table.py writes.
  static constexpr int MIN_BLOCKS = 0;
};

/// One thread's share of a warp tile: its results, and the shared-memory reads that feed them.
template <typename Cfg>
struct WarpTile {
  static constexpr int kWarps = (Cfg::BM / Cfg::WM) * (Cfg::BN / Cfg::WN);
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int WMITER = (Cfg::WM * Cfg::WN) / (32 * Cfg::TM * Cfg::TN * Cfg::WNITER);
  static constexpr int WSUBM = Cfg::WM / WMITER, WSUBN = Cfg::WN / Cfg::WNITER;  // sub-tile size
  static constexpr int RM = WMITER * Cfg::TM, RN = Cfg::WNITER * Cfg::TN;        // results per thread
  static_assert((WSUBM / Cfg::TM) * (WSUBN / Cfg::TN) == 32, "32 lanes must cover a sub-tile");
  static_assert(Cfg::TM % 4 == 0 && Cfg::TN % 4 == 0, "thread tiles are read and written as float4");

  float acc[RM][RN] = {};
  int m0, n0;  // this thread's first row and column in the block tile

  __device__ WarpTile() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    m0 = warp / (Cfg::BN / Cfg::WN) * Cfg::WM + lane / (WSUBN / Cfg::TN) * Cfg::TM;
    n0 = warp % (Cfg::BN / Cfg::WN) * Cfg::WN + lane % (WSUBN / Cfg::TN) * Cfg::TN;
  }

  // [excerpt:compute]
  /// acc += this thread's part of As^T * Bs for one BK-deep pair of tiles.
  __device__ void compute(const float* As, const float* Bs) {
    // [excerpt:k-loop]
#pragma unroll
    for (int k = 0; k < Cfg::BK; ++k) {
      float a[RM], b[RN];
#pragma unroll
      for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < Cfg::TM; i += 4) {
          const float4 v = as_float4(&As[k * Cfg::BM + m0 + wm * WSUBM + i]);
          float* d = &a[wm * Cfg::TM + i];
          d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
        }
#pragma unroll
      for (int wn = 0; wn < Cfg::WNITER; ++wn)
#pragma unroll
        for (int j = 0; j < Cfg::TN; j += 4) {
          const float4 v = as_float4(&Bs[k * Cfg::BN + n0 + wn * WSUBN + j]);
          float* d = &b[wn * Cfg::TN + j];
          d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
        }
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) acc[i][j] += a[i] * b[j];
    }
    // [/excerpt:k-loop]
  }
  // [/excerpt:compute]

  /// C = alpha * acc + beta * C for this thread's results; the block tile starts at (row0, col0).
  template <bool kChecked>
  __device__ void store(float* C, int M, int N, int row0, int col0, float alpha, float beta) const {
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
      for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
        for (int wn = 0; wn < Cfg::WNITER; ++wn)
#pragma unroll
          for (int j = 0; j < Cfg::TN; j += 4) {
            const float* r = &acc[wm * Cfg::TM + i][wn * Cfg::TN + j];
            store4<kChecked>(C, M, N, row0 + m0 + wm * WSUBM + i, col0 + n0 + wn * WSUBN + j,
                             make_float4(r[0], r[1], r[2], r[3]), alpha, beta);
          }
  }
};

template <typename Cfg, bool kChecked>
__global__ void __launch_bounds__(WarpTile<Cfg>::kThreads, Cfg::MIN_BLOCKS)
    sgemm_warptiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                     float* C) {
  using Tile = WarpTile<Cfg>;
  __shared__ alignas(16) float As[Cfg::BK * Cfg::BM];  // transposed
  __shared__ alignas(16) float Bs[Cfg::BK * Cfg::BN];
  const int row0 = blockIdx.y * Cfg::BM, col0 = blockIdx.x * Cfg::BN;
  TileLoader<Cfg::BM, Cfg::BN, Cfg::BK, Tile::kThreads, kChecked> loader;
  Tile tile;
  // [excerpt:main-loop]
  for (int k0 = 0; k0 < K; k0 += Cfg::BK) {
    loader.fetch(A, B, M, N, K, row0, col0, k0);
    loader.stash(As, Bs);
    __syncthreads();
    tile.compute(As, Bs);
    __syncthreads();
  }
  // [/excerpt:main-loop]
  tile.template store<kChecked>(C, M, N, row0, col0, alpha, beta);
}

inline void launch_warptiling(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C) {
  using Cfg = WarptileConfig;
  constexpr int kThreads = WarpTile<Cfg>::kThreads;
  const dim3 grid(ceil_div(N, Cfg::BN), ceil_div(M, Cfg::BM));
  if (whole_tiles(M, N, K, Cfg::BM, Cfg::BN, Cfg::BK, A, B, C))
    sgemm_warptiling<Cfg, false><<<grid, kThreads>>>(M, N, K, alpha, A, B, beta, C);
  else
    sgemm_warptiling<Cfg, true><<<grid, kThreads>>>(M, N, K, alpha, A, B, beta, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace sgemm
