// What every tensor-core step shares. The problem, for every step and for cuBLAS:
//
//   C = A * B^T,  A is M x K, B is N x K (bf16), C is M x N (fp32), all ROW-MAJOR.
//
// B holds one row per column of C, so both operands run along K in memory: the order the tensor
// cores read (cuBLAS calls this case "TN"; nn.Linear stores its weight this way, out x in).
// Rows of A and B are `ld` elements apart, ld = K rounded up to a multiple of 8, so every row
// starts on a 16-byte boundary, which 16-byte copies (cp.async, TMA) need. Columns K..ld-1 are
// padding: no step may read them as data (the runner fills them with NaN to make sure).
//
// Edges: loads past the last row or column (sizes like 33 or 1000) become zeros, which add
// nothing to a dot product; stores past the edge of C are skipped.
#pragma once

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <tutorial/check.cuh>
#include <utility>

namespace tc {

using bf16 = __nv_bfloat16;

struct Gemm {
  int M, N, K;
  int ld;  // elements from one row of A (and of B) to the next: K rounded up to a multiple of 8
  const bf16* A;
  const bf16* B;
  float* C;  // M x N, dense
};

using Launch = void (*)(const Gemm&);

__host__ __device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// Lets a kernel use \p bytes of dynamic shared memory: above 48 KB it must be asked for.
/// Launchers call this on every launch; the driver is asked once per kernel and device.
template <typename Kernel>
void allow_shared_bytes(Kernel kernel, size_t bytes) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  static std::set<std::pair<const void*, int>> allowed;
  if (allowed.insert({reinterpret_cast<const void*>(kernel), device}).second)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}
inline int padded_ld(int K) { return ceil_div(K, 8) * 8; }

/// Stores C[row][col] = v0 and C[row][col + 1] = v1 (the pair of accumulators an mma.sync or
/// wgmma thread holds side by side): one 8-byte store when both are inside C and aligned.
__device__ inline void store_pair(float* C, int M, int N, int row, int col, float v0, float v1) {
  if (row >= M) return;
  float* p = C + size_t(row) * N + col;
  if (N % 2 == 0 && col + 1 < N) {
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
  } else {
    if (col < N) p[0] = v0;
    if (col + 1 < N) p[1] = v1;
  }
}

/// The (tile row, tile column) that block number \p block computes, in groups of kGroup tile
/// rows: consecutive blocks (those running at the same time) share a few rows of A and a band of
/// columns of B, so more of their reads hit L2 than in plain row-by-row order.
template <int kGroup = 8>
__device__ inline void grouped_tile(int block, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = kGroup * tiles_n;
  const int first_m = block / per_group * kGroup;
  const int rows = min(tiles_m - first_m, kGroup);
  tile_m = first_m + block % per_group % rows;
  tile_n = block % per_group / rows;
}

/// The 32-bit shared-memory address of a generic pointer into shared memory, as PTX wants it.
__device__ inline unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// --- Asynchronous copies (sm_80+), for steps 2 and 3 ---------------------------------------

/// Starts a 16-byte copy global -> shared that bypasses registers (and L1: .cg). Only the first
/// \p src_bytes are read and the rest of the 16 become zeros, so a chunk that sticks out of the
/// matrix reads what is inside and zero-fills the rest (0: reads nothing).
__device__ inline void cp_async_16(void* shared, const void* global, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)),
               "l"(global), "r"(src_bytes)
               : "memory");
}
/// Closes the group of copies this thread started since the last commit.
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/// Waits until at most \p kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Starts copying rows r0..r0+ROWS-1, columns k0..k0+COLS-1 of X (rows x K, row pitch ld) into a
/// shared tile, one 16-byte chunk (8 elements) per copy, spread over the block's THREADS threads.
/// \p offset(r, c) is where chunk c of tile row r goes, in elements: the tile's layout.
template <int ROWS, int COLS, int THREADS, typename Layout>
__device__ inline void load_tile_async(bf16* tile, const bf16* X, int rows, int K, int ld, int r0, int k0,
                                       Layout offset) {
  constexpr int kChunksPerRow = COLS / 8, kChunks = ROWS * kChunksPerRow;
  static_assert(COLS % 8 == 0 && kChunks % THREADS == 0, "whole chunks, the same number per thread");
#pragma unroll 1  // edges only (steps 2-3 copy whole tiles their own way); rolled, it holds no registers
  for (int i = 0; i < kChunks / THREADS; ++i) {
    const int chunk = static_cast<int>(threadIdx.x) + i * THREADS;
    const int r = chunk / kChunksPerRow, c = chunk % kChunksPerRow;
    const int row = r0 + r, col = k0 + c * 8;
    const int inside = row < rows ? min(max(K - col, 0), 8) : 0;  // elements of the chunk inside X
    const bf16* src = inside > 0 ? X + size_t(row) * ld + col : X;  // a valid address even if unread
    cp_async_16(tile + offset(r, c), src, inside * 2);
  }
}

}  // namespace tc
