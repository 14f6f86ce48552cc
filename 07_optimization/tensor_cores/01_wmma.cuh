// Tensor cores step 1: WMMA, reading global memory directly.
// Change: the multiply-adds leave the FMA units for the tensor cores. nvcuda::wmma (CUDA C++,
// sm_70+) shows them as warp-wide operations on "fragments": a warp loads a 16 x 16 tile of A and
// a 16 x 16 tile of B^T into registers (load_matrix_sync, each thread holds 8 of the 256 values),
// and mma_sync adds their product to a 16 x 16 fp32 accumulator: 4096 multiply-adds per
// instruction instead of 32. One warp per 16 x 16 tile of C, walking K in steps of 16 and loading
// every fragment from global memory; L1 and L2 catch the re-reads (the four warps of a block share
// rows of A and of B).
// Prediction: ~10% of cuBLAS BF16. Each k-step loads 1 KB per warp for 8192 FLOPs (8 FLOPs per
// byte): at a few TB/s of L1/L2 bandwidth that is a few tens of TFLOP/s per TB/s, far below the
// tensor cores' ~900 TFLOP/s; still above the best fp32 SIMT kernel of the SGEMM part (~47).
#pragma once

#include <mma.h>

#include "00_common.cuh"

namespace tc {

namespace wmma = nvcuda::wmma;

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
// B^T's column n is B's row n, contiguous along K: a column-major K x N matrix with pitch ld.
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

/// Copies the 16 x 16 tile of X (rows x K, pitch ld) at (r0, k0) into \p tile (pitch 16), zeros
/// outside X. For edge fragments, which a direct load_matrix_sync would read past the matrix.
__device__ inline void stage_fragment(bf16* tile, const bf16* X, int rows, int K, int ld, int r0, int k0) {
  for (int i = threadIdx.x % 32; i < 256; i += 32) {
    const int r = r0 + i / 16, k = k0 + i % 16;
    tile[i] = (r < rows && k < K) ? X[size_t(r) * ld + k] : __float2bfloat16(0.0f);
  }
}

/// Stores a warp's 16 x 16 accumulator at C[row0][col0]: directly when the tile is inside C and
/// each of its rows starts on a 32-byte boundary (store_matrix_sync's rule), else through
/// \p scratch (256 floats of shared memory) with the parts outside C left out.
__device__ inline void store_fragment(const FragC& acc, float* C, int M, int N, int row0, int col0,
                                      float* scratch) {
  if (row0 + 16 <= M && col0 + 16 <= N && N % 8 == 0) {
    wmma::store_matrix_sync(C + size_t(row0) * N + col0, acc, N, wmma::mem_row_major);
    return;
  }
  wmma::store_matrix_sync(scratch, acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = threadIdx.x % 32; i < 256; i += 32) {
    const int r = row0 + i / 16, c = col0 + i % 16;
    if (r < M && c < N) C[size_t(r) * N + c] = scratch[i];
  }
  __syncwarp();
}

constexpr int kWmmaWarps = 4;  // a block is 2 x 2 warps, 32 x 32 of C

__global__ void __launch_bounds__(32 * kWmmaWarps) tc_wmma_naive(Gemm g) {
  __shared__ alignas(32) bf16 staged[kWmmaWarps][2][256];  // edge fragments of A and B, per warp
  __shared__ alignas(32) float scratch[kWmmaWarps][256];   // edge tiles of C, per warp
  const int warp = threadIdx.x / 32;
  const int row0 = (blockIdx.y * 2 + warp / 2) * 16, col0 = (blockIdx.x * 2 + warp % 2) * 16;
  if (row0 >= g.M || col0 >= g.N) return;  // the whole warp; no block-wide barrier follows

  // Direct loads need the fragment inside the matrix and 32-byte aligned rows (ld % 16 == 0).
  const bool inside = row0 + 16 <= g.M && col0 + 16 <= g.N && g.ld % 16 == 0;
  const int k_direct = inside ? g.K / 16 * 16 : 0;
  FragA a;
  FragB b;
  FragC acc;
  wmma::fill_fragment(acc, 0.0f);
  // [excerpt:main-loop]
  for (int k0 = 0; k0 < k_direct; k0 += 16) {
    wmma::load_matrix_sync(a, g.A + size_t(row0) * g.ld + k0, g.ld);
    wmma::load_matrix_sync(b, g.B + size_t(col0) * g.ld + k0, g.ld);
    wmma::mma_sync(acc, a, b, acc);
  }
  // [/excerpt:main-loop]
  for (int k0 = k_direct; k0 < g.K; k0 += 16) {  // edges: through shared memory, zeros outside
    stage_fragment(staged[warp][0], g.A, g.M, g.K, g.ld, row0, k0);
    stage_fragment(staged[warp][1], g.B, g.N, g.K, g.ld, col0, k0);
    __syncwarp();
    wmma::load_matrix_sync(a, staged[warp][0], 16);
    wmma::load_matrix_sync(b, staged[warp][1], 16);
    __syncwarp();  // read before the next k-step overwrites them
    wmma::mma_sync(acc, a, b, acc);
  }
  store_fragment(acc, g.C, g.M, g.N, row0, col0, scratch[warp]);
}

inline void launch_wmma_naive(const Gemm& g) {
  const dim3 grid(ceil_div(g.N, 32), ceil_div(g.M, 32));
  tc_wmma_naive<<<grid, 32 * kWmmaWarps>>>(g);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
