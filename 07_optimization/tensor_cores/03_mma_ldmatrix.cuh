// Tensor cores step 3: mma.sync and ldmatrix on a swizzled shared-memory layout.
// Change: step 2's kernel with WMMA's fragments replaced by the instructions under them, written
// in PTX. Tiles, warps, the 4-stage cp.async ring, its copies and the double-buffered fragments
// stay as they were.
//  - mma.sync.m16n8k16: one warp, A 16 x 16, B 16 x 8, C 16 x 8 fp32; each thread holds its
//    documented share of every operand (diagrams/mma_fragments.svg), so the results are stored
//    straight from registers, with no trip through shared memory at the edges.
//  - ldmatrix.x4: one instruction loads four 8 x 8 bf16 matrices from shared memory into exactly
//    those registers; each of 8 lanes per matrix gives the address of one 16-byte row. (ptxas made
//    step 2's wmma.load.shared into the same instruction; here the code picks the addresses.)
//  - Swizzle: tile rows are 64 elements (128 bytes, all 32 banks), unpadded. Then the 8 rows an
//    ldmatrix matrix reads at one column would all sit in the same 4 banks (8-way conflict). So
//    chunk c (16 bytes) of row r is stored at chunk c XOR (r % 8): the 8 rows land in 8 different
//    chunks, no conflict, no padding (diagrams/ldmatrix_swizzle.svg). (TMA's 128-byte swizzle in
//    step 4 is this same pattern.) Its address arithmetic is one XOR per k-step (Fragments).
// Prediction: ~65% of cuBLAS BF16 (the goal is 60%). The loads are the same 8 ldmatrix per 32
// mma as in step 2; what goes is the work around them: step 2's per-fragment address arithmetic
// (ncu counts 2.7 instructions per mma.sync there) and the edge scratch. The limits after that:
// two warps per scheduler (registers allow no more with 64 x 64 warp tiles: 128 accumulators
// each) must keep the tensor pipe fed between barriers, and shared memory's 128 bytes per cycle
// per SM carry 8 warps x 8 ldmatrix x 512 bytes per k-step plus the copies, over 80% of it at
// the ceiling's rate. What it cannot do is Hopper's own path: mma.sync issues from each warp
// separately and keeps all operands in registers, which on H100 reaches well under wgmma's peak.
#pragma once

#include "02_cp_async.cuh"

namespace tc {

struct SwizzledTiles : BlockTiles {
  static constexpr int kStageElements = (BM + BN) * BK;  // BK * 2 bytes = one 128-byte row
  static constexpr size_t kSharedBytes = size_t(kStages) * kStageElements * sizeof(bf16);
};

/// Where chunk c (8 elements) of row r of a 64-wide tile lives: c XOR (r % 8), in elements.
__device__ inline int swizzled(int r, int c) { return r * 64 + ((c ^ (r % 8)) * 8); }

/// Four 8 x 8 matrices of 16-bit values; lanes 8i..8i+7 give the row addresses of matrix i.
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], uint32_t shared_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_row));
}

/// d += a * b for one 16 x 8 tile: a is 16 x 16 (row-major), b is 16 x 8 (column-major).
__device__ inline void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// One warp's operands for a 16-deep k-step: 4 tiles of A (16 x 16) and 8 of B (16 x 8).
/// The ldmatrix addresses cost one XOR per k-step: a lane's row r reads chunk 2k + h (h = 0 or 1),
/// stored at chunk (2k + h) ^ (r % 8) = (h ^ (r % 8)) ^ 2k. So its address for k-step k is its
/// address for k-step 0 XOR 32k bytes (the chunk bits; rows are 128 bytes, stages 128-byte aligned).
// [excerpt:fragments]
template <typename T>
struct Fragments {
  uint32_t a[T::WM / 16][4], b[T::WN / 8][2];
  /// Loads k-step \p k; \p a_row, \p b_row: this lane's row addresses in the stage at k-step 0.
  __device__ void load(uint32_t a_row, uint32_t b_row, int k) {
    constexpr uint32_t kRows16 = 16 * T::BK * sizeof(bf16);  // 16 rows further down a tile
#pragma unroll
    for (int i = 0; i < T::WM / 16; ++i)  // matrices: rows 0-7 | 8-15, times chunk 2k | 2k+1
      ldmatrix_x4(a[i], (a_row ^ (32u * k)) + i * kRows16);
#pragma unroll
    for (int j = 0; j < T::WN / 16; ++j) {  // matrices: (n 0-7 | 8-15) x (chunk 2k | 2k+1)
      uint32_t r[4];
      ldmatrix_x4(r, (b_row ^ (32u * k)) + j * kRows16);
      b[2 * j][0] = r[0], b[2 * j][1] = r[1], b[2 * j + 1][0] = r[2], b[2 * j + 1][1] = r[3];
    }
  }
};
// [/excerpt:fragments]

__global__ void __launch_bounds__(SwizzledTiles::kThreads, 1) tc_mma_ldmatrix(Gemm g) {
  using T = SwizzledTiles;
  extern __shared__ __align__(128) unsigned char shared_bytes[];
  bf16* const shared_tiles = reinterpret_cast<bf16*>(shared_bytes);  // kStages x (A tile, B tile)
  int tile_m, tile_n;
  grouped_tile(blockIdx.x, ceil_div(g.M, T::BM), ceil_div(g.N, T::BN), tile_m, tile_n);
  const int row0 = tile_m * T::BM, col0 = tile_n * T::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / (T::BN / T::WN) * T::WM, wn = warp % (T::BN / T::WN) * T::WN;
  const auto tile_a = [&](int stage) { return shared_tiles + stage * T::kStageElements; };
  const auto tile_b = [&](int stage) { return tile_a(stage) + T::BM * T::BK; };
  const auto layout = [](int r, int c) { return swizzled(r, c); };
  const TileCopy<T::BM, T::BK, T::kThreads> copy_a(g.A, g.M, g.K, g.ld, row0);
  const TileCopy<T::BN, T::BK, T::kThreads> copy_b(g.B, g.N, g.K, g.ld, col0);
  const auto load = [&](int stage, int k0) {
    copy_a.start(tile_a(stage), k0, layout);
    copy_b.start(tile_b(stage), k0, layout);
  };

  // This lane's ldmatrix rows in stage 0 at k-step 0: A rows wm + lane % 16, chunk lane / 16;
  // B rows wn + lane % 8 (+ 8 for lanes 16-31), chunk lane / 8 % 2. In bytes, as ldmatrix wants.
  const uint32_t stage0 = shared_address(shared_tiles);
  const uint32_t a_row = stage0 + 2 * swizzled(wm + lane % 16, lane / 16);
  const uint32_t b_row = stage0 + 2 * (T::BM * T::BK + swizzled(wn + lane % 8 + lane / 16 * 8, lane / 8 % 2));
  const auto stage_bytes = [](int stage) { return uint32_t(stage * T::kStageElements * sizeof(bf16)); };

  float acc[T::WM / 16][T::WN / 8][4] = {};
  // [excerpt:main-loop]
  const int tiles = ceil_div(g.K, T::BK);
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < tiles) load(s, s * T::BK);
    cp_async_commit();
  }
  cp_async_wait<T::kStages - 2>();  // tile 0 has landed (this thread's copies) ...
  __syncthreads();                   // ... everyone's
  // Fragments alternate between two register sets, as in step 2.
  Fragments<T> frags[2];
  frags[0].load(a_row, b_row, 0);
  for (int t = 0; t < tiles; ++t) {
    const int next = t + T::kStages - 1;  // into the stage of tile t-1, which every warp is done with
    if (next < tiles) load(next % T::kStages, next * T::BK);
    cp_async_commit();
    const uint32_t stage = stage_bytes(t % T::kStages);
#pragma unroll
    for (int k = 0; k < T::BK / 16; ++k) {
      if (k + 1 < T::BK / 16) {
        frags[(k + 1) % 2].load(a_row + stage, b_row + stage, k + 1);
      } else {  // before the last k-step's math: wait for tile t+1, and load its first fragments
        cp_async_wait<T::kStages - 2>();
        __syncthreads();  // tile t+1 has landed everywhere; every warp is done reading tile t
        const uint32_t following = stage_bytes((t + 1) % T::kStages);
        if (t + 1 < tiles) frags[0].load(a_row + following, b_row + following, 0);
      }
#pragma unroll
      for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < T::WN / 8; ++j) mma_16816(acc[i][j], frags[k % 2].a[i], frags[k % 2].b[j]);
    }
  }
  // [/excerpt:main-loop]

  // Thread (lane) holds rows lane/4 and lane/4 + 8, columns 2*(lane%4) and +1, of each 16 x 8 tile.
#pragma unroll
  for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
    for (int j = 0; j < T::WN / 8; ++j) {
      const int row = row0 + wm + 16 * i + lane / 4, col = col0 + wn + 8 * j + 2 * (lane % 4);
      store_pair(g.C, g.M, g.N, row, col, acc[i][j][0], acc[i][j][1]);
      store_pair(g.C, g.M, g.N, row + 8, col, acc[i][j][2], acc[i][j][3]);
    }
}

// The most mma.sync gives on this GPU: each warp multiplies fragments it already holds in
// registers into 16 independent accumulators, with no memory traffic at all. No kernel built on
// mma.sync (WMMA included) can beat it. The operands are all 1.0, so the result is known:
// accumulator j starts at j and gains 16 per mma; the sum a thread stores is kPeakSum.
constexpr int kPeakIterations = 4096, kPeakThreads = 256;
constexpr double kPeakSum = 4 * (120 + 16.0 * 16 * kPeakIterations);  // 4 x (0 + 1 + ... + 15 + ...)

__global__ void __launch_bounds__(kPeakThreads) tc_mma_sync_peak(float* out) {
  const uint32_t ones[4] = {0x3F803F80u, 0x3F803F80u, 0x3F803F80u, 0x3F803F80u};  // bf16 pairs (1, 1)
  const uint32_t(&a)[4] = ones;
  const uint32_t(&b)[2] = reinterpret_cast<const uint32_t(&)[2]>(ones);
  float acc[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j)  // different starting values: 16 chains the compiler cannot merge
    acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = float(j);
#pragma unroll 1  // 16 mma.sync per trip are plenty; unrolled 4096 times, ptxas takes minutes
  for (int i = 0; i < kPeakIterations; ++i)
#pragma unroll
    for (int j = 0; j < 16; ++j) mma_16816(acc[j], a, b);
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < 16; ++j) sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  out[size_t(blockIdx.x) * kPeakThreads + threadIdx.x] = sum;
}

/// Runs tc_mma_sync_peak on \p blocks blocks (out: blocks * kPeakThreads floats); returns its FLOPs.
inline double launch_mma_sync_peak(float* out, int blocks) {
  tc_mma_sync_peak<<<blocks, kPeakThreads>>>(out);
  CUDA_CHECK_LAUNCH();
  return 2.0 * 16 * 8 * 16 * 16.0 * kPeakIterations * (kPeakThreads / 32) * double(blocks);
}

inline void launch_mma_ldmatrix(const Gemm& g) {
  using T = SwizzledTiles;
  allow_shared_bytes(tc_mma_ldmatrix, T::kSharedBytes);
  const int blocks = ceil_div(g.M, T::BM) * ceil_div(g.N, T::BN);
  tc_mma_ldmatrix<<<blocks, T::kThreads, T::kSharedBytes>>>(g);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
