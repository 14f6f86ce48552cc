// Tensor cores step 2: shared-memory tiles filled by asynchronous copies, double buffered.
// Change: a block of 8 warps computes a 128 x 128 tile of C; each warp a 64 x 32 piece of it
// (4 x 2 WMMA accumulators). The block stages 128 x 32 tiles of A and B in shared memory, so each
// element loaded from global memory feeds 128 multiply-adds instead of 16. The copies are
// cp.async (sm_80+): global -> shared without a trip through registers, and without the thread
// waiting for them. Two buffers: while the warps multiply tile t, tile t+1 is on its way; a
// thread waits for its copies only when it needs the tile (cp.async.wait_group).
// Each tile row is padded from 32 to 40 elements (80 bytes), so the 8 rows a fragment load reads
// at once start in 8 different groups of banks: no bank conflicts.
// Prediction: ~50% of cuBLAS BF16 (the goal). Global traffic drops 8x against step 1; what is left
// is WMMA's limits: loads from shared memory through a fixed API, only 2 tiles in flight, and a
// __syncthreads() twice per 32-deep k-step with nothing to hide it (about two blocks per SM).
#pragma once

#include "01_wmma.cuh"

namespace tc {

struct CpAsyncTiles {
  static constexpr int BM = 128, BN = 128, BK = 32;  // block tile of C, and its depth along K
  static constexpr int WM = 64, WN = 32;             // warp tile
  static constexpr int kWarps = (BM / WM) * (BN / WN), kThreads = 32 * kWarps;
  static constexpr int kPitch = BK + 8;  // shared tile row: 32 elements + 8 of padding (80 bytes)
};

__global__ void __launch_bounds__(CpAsyncTiles::kThreads) tc_cp_async_wmma(Gemm g) {
  using T = CpAsyncTiles;
  __shared__ alignas(128) bf16 As[2][T::BM * T::kPitch];
  __shared__ alignas(128) bf16 Bs[2][T::BN * T::kPitch];
  const int row0 = blockIdx.y * T::BM, col0 = blockIdx.x * T::BN;
  const int warp = threadIdx.x / 32;
  const int wm = warp / (T::BN / T::WN) * T::WM, wn = warp % (T::BN / T::WN) * T::WN;
  const auto padded = [](int r, int c) { return r * T::kPitch + c * 8; };
  const auto load = [&](int buffer, int k0) {
    load_tile_async<T::BM, T::BK, T::kThreads>(As[buffer], g.A, g.M, g.K, g.ld, row0, k0, padded);
    load_tile_async<T::BN, T::BK, T::kThreads>(Bs[buffer], g.B, g.N, g.K, g.ld, col0, k0, padded);
  };

  FragC acc[T::WM / 16][T::WN / 16];
#pragma unroll
  for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
    for (int j = 0; j < T::WN / 16; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int tiles = ceil_div(g.K, T::BK);
  load(0, 0);
  cp_async_commit();
  for (int t = 0; t < tiles; ++t) {
    const int buffer = t % 2;
    // The other buffer was last read in iteration t-1, before its closing __syncthreads().
    if (t + 1 < tiles) load(buffer ^ 1, (t + 1) * T::BK);
    cp_async_commit();    // (an empty group on the last tile keeps the counting uniform)
    cp_async_wait<1>();   // all but the newest group have landed: this thread's part of tile t
    __syncthreads();      // ... and every other thread's
#pragma unroll
    for (int k = 0; k < T::BK; k += 16) {
      FragA a[T::WM / 16];
      FragB b[T::WN / 16];
#pragma unroll
      for (int i = 0; i < T::WM / 16; ++i)
        wmma::load_matrix_sync(a[i], &As[buffer][(wm + 16 * i) * T::kPitch + k], T::kPitch);
#pragma unroll
      for (int j = 0; j < T::WN / 16; ++j)
        wmma::load_matrix_sync(b[j], &Bs[buffer][(wn + 16 * j) * T::kPitch + k], T::kPitch);
#pragma unroll
      for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < T::WN / 16; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // everyone is done reading this buffer before it is refilled
  }

  // The tiles are no longer needed: their memory holds each warp's edge scratch (256 floats).
  float* scratch = reinterpret_cast<float*>(As) + warp * 256;
#pragma unroll
  for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
    for (int j = 0; j < T::WN / 16; ++j)
      store_fragment(acc[i][j], g.C, g.M, g.N, row0 + wm + 16 * i, col0 + wn + 16 * j, scratch);
}

inline void launch_cp_async_wmma(const Gemm& g) {
  using T = CpAsyncTiles;
  const dim3 grid(ceil_div(g.N, T::BN), ceil_div(g.M, T::BM));
  tc_cp_async_wmma<<<grid, T::kThreads>>>(g);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
