// Tensor cores step 2: shared-memory tiles filled by asynchronous copies, in a ring of stages.
// Change: the operands come from shared memory instead of global memory. A block of 8 warps
// computes a 128 x 256 tile of C; each warp a 64 x 64 piece of it (4 x 4 WMMA accumulators). The
// block stages 128 x 64 tiles of A and 256 x 64 tiles of B in shared memory, so each element
// loaded from global memory feeds 128 or 256 multiply-adds instead of 16. The copies are cp.async
// (sm_80+): global -> shared without a trip through registers, and without the thread waiting for
// them. Double buffering, generalised to a ring of 4 stages (diagrams/cp_async_pipeline.svg):
// while the warps multiply tile t, tiles t+1..t+3 are on their way, and a thread waits only for
// the oldest (cp.async.wait_group 2). One __syncthreads() per 64-deep k-step both says "tile t+1
// has landed" and "everyone is done with tile t", whose stage is refilled next. Whole tiles (all
// but the edges) are copied without a bounds check per chunk: two instructions per 16 bytes.
// Fragments are double buffered in registers too: each warp loads the next 16-deep k-step's
// while it multiplies this one's. They are loaded with PTX's wmma.load in its .shared form
// (load_shared below): WMMA's C++ load_matrix_sync compiles to generic loads here.
// Each tile row is padded from 64 to 72 elements (144 bytes), so the 8 rows a fragment load reads
// at once start 16 bytes apart in the banks: no bank conflicts.
// Prediction: ~50% of cuBLAS BF16 (the goal is 40%). Global loads per element of C drop about
// 10.7x against step 1 (16x for A: a row of A now serves 256 columns of C instead of 16; 8x for
// B: a row of B serves 128 rows of C instead of 16), and the copies hide behind 3 tiles of math;
// with the state space named, ptxas loads each fragment with one ldmatrix, so a warp's 16-deep
// k-step is 8 loads for 32 mma.sync. What is left is the address arithmetic WMMA hides: every
// fragment load computes its own padded address.
#pragma once

#include <type_traits>

#include "01_wmma.cuh"

namespace tc {

/// The block and warp tiles of steps 2 and 3 (step 3 keeps them; only how fragments reach the
/// tensor cores changes).
struct BlockTiles {
  static constexpr int BM = 128, BN = 256, BK = 64;  // block tile of C, and its depth along K
  static constexpr int WM = 64, WN = 64;             // warp tile
  static constexpr int kStages = 4;                  // tiles of A and B in shared memory at once
  static constexpr int kWarps = (BM / WM) * (BN / WN), kThreads = 32 * kWarps;
};

/// One thread's share of copying the ROWS x BK tiles of X (rows x K, pitch ld) that start at row
/// r0, one k-step after another, with cp.async. \p offset(r, c) places chunk c (8 elements) of tile
/// row r; it must repeat every 8 rows (offset(r + 8n, c) = offset(r, c) + offset(8n, 0)), as padded
/// and XOR-swizzled rows do, so a thread's chunks all sit at fixed distances from its first one.
template <int ROWS, int BK, int THREADS>
struct TileCopy {
  static constexpr int kChunksPerRow = BK / 8, kRowsPerPass = THREADS / kChunksPerRow;
  static constexpr int kPasses = ROWS / kRowsPerPass;
  static_assert(THREADS % kChunksPerRow == 0 && ROWS % kRowsPerPass == 0 && kRowsPerPass % 8 == 0,
                "whole passes over the tile, each a multiple of 8 rows");
  const bf16* X;
  int rows, K, ld, r0;
  int first_row, chunk;  // this thread's chunk in pass 0 (the same chunk column in every pass)

  __device__ TileCopy(const bf16* X_, int rows_, int K_, int ld_, int r0_)
      : X(X_), rows(rows_), K(K_), ld(ld_), r0(r0_),
        first_row(static_cast<int>(threadIdx.x) / kChunksPerRow),
        chunk(static_cast<int>(threadIdx.x) % kChunksPerRow) {}

  /// Starts the copies of the tile at column k0 into \p tile.
  template <typename Layout>
  __device__ void start(bf16* tile, int k0, Layout offset) const {
    if (r0 + ROWS <= rows && k0 + BK <= K) {  // the whole tile is inside X (block-uniform branch)
      // Element offsets fit in an int (rows * ld <= 16384 * 16384): one multiply-add per address,
      // and no 64-bit pointer to keep in registers between k-steps.
      const int first = (r0 + first_row) * ld + k0 + chunk * 8;
      bf16* dst = tile + offset(first_row, chunk);
#pragma unroll
      for (int p = 0; p < kPasses; ++p)
        cp_async_16(dst + offset(p * kRowsPerPass, 0), X + (first + p * kRowsPerPass * ld), 16);
    } else {  // an edge: each chunk reads only what is inside X, zeros for the rest
      load_tile_async<ROWS, BK, THREADS>(tile, X, rows, K, ld, r0, k0, offset);
    }
  }
};

struct PaddedTiles : BlockTiles {
  static constexpr int kPitch = BK + 8;  // a shared tile row: 64 elements + 8 of padding (144 bytes)
  static constexpr int kStageElements = (BM + BN) * kPitch;
  static constexpr size_t kSharedBytes = size_t(kStages) * kStageElements * sizeof(bf16);
};

// [excerpt:load-shared]
/// Loads a WMMA fragment (16 x 16 bf16, 4 registers per thread) from shared memory, \p pitch
/// elements per row. WMMA's load_matrix_sync takes a generic pointer, and nvcc turns it into 4
/// generic loads per fragment (LD, not LDS: it does not see that the pointer is shared), which
/// queue with global traffic and wait like it. The same instruction in PTX with the state space
/// named (.shared) lets ptxas load the fragment with one ldmatrix (LDSM in the SASS).
template <typename Fragment>
__device__ inline void load_shared(Fragment& f, const bf16* p, int pitch) {
  static_assert(sizeof(f.x) == 16, "a 16 x 16 bf16 fragment: 4 registers per thread");
  uint32_t* r = reinterpret_cast<uint32_t*>(&f.x[0]);
  if constexpr (std::is_same_v<Fragment, FragA>)
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)), "r"(pitch));
  else
    asm volatile("wmma.load.b.sync.aligned.col.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)), "r"(pitch));
}
// [/excerpt:load-shared]

/// One warp's WMMA operands for a 16-deep k-step: 4 fragments of A (16 x 16), 4 of B^T.
template <typename T>
struct WmmaFragments {
  FragA a[T::WM / 16];
  FragB b[T::WN / 16];
  /// Loads columns k..k+15 of the warp's rows of the shared tiles As and Bs.
  __device__ void load(const bf16* As, const bf16* Bs, int wm, int wn, int k) {
#pragma unroll
    for (int i = 0; i < T::WM / 16; ++i) load_shared(a[i], As + (wm + 16 * i) * T::kPitch + k, T::kPitch);
#pragma unroll
    for (int j = 0; j < T::WN / 16; ++j) load_shared(b[j], Bs + (wn + 16 * j) * T::kPitch + k, T::kPitch);
  }
};

__global__ void __launch_bounds__(PaddedTiles::kThreads, 1) tc_cp_async_wmma(Gemm g) {
  using T = PaddedTiles;
  extern __shared__ __align__(128) unsigned char shared_bytes[];
  bf16* const shared_tiles = reinterpret_cast<bf16*>(shared_bytes);  // kStages x (A tile, B tile)
  int tile_m, tile_n;
  grouped_tile(blockIdx.x, ceil_div(g.M, T::BM), ceil_div(g.N, T::BN), tile_m, tile_n);
  const int row0 = tile_m * T::BM, col0 = tile_n * T::BN;
  const int warp = threadIdx.x / 32;
  const int wm = warp / (T::BN / T::WN) * T::WM, wn = warp % (T::BN / T::WN) * T::WN;
  const auto tile_a = [&](int stage) { return shared_tiles + stage * T::kStageElements; };
  const auto tile_b = [&](int stage) { return tile_a(stage) + T::BM * T::kPitch; };
  const auto padded = [](int r, int c) { return r * T::kPitch + c * 8; };
  const TileCopy<T::BM, T::BK, T::kThreads> copy_a(g.A, g.M, g.K, g.ld, row0);
  const TileCopy<T::BN, T::BK, T::kThreads> copy_b(g.B, g.N, g.K, g.ld, col0);
  const auto load = [&](int stage, int k0) {
    copy_a.start(tile_a(stage), k0, padded);
    copy_b.start(tile_b(stage), k0, padded);
  };

  FragC acc[T::WM / 16][T::WN / 16];
#pragma unroll
  for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
    for (int j = 0; j < T::WN / 16; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // [excerpt:main-loop]
  const int tiles = ceil_div(g.K, T::BK);
  for (int s = 0; s < T::kStages - 1; ++s) {  // fill all stages but one
    if (s < tiles) load(s, s * T::BK);
    cp_async_commit();  // (an empty group past the last tile keeps the counting uniform)
  }
  cp_async_wait<T::kStages - 2>();  // tile 0 has landed (this thread's copies) ...
  __syncthreads();                   // ... everyone's
  // Fragments alternate between two register sets: the next 16-deep k-step's are loaded while
  // this one's are multiplied, across tiles too (the first k-step of tile t+1 during the last of
  // tile t), so the loads' latency hides behind the math.
  WmmaFragments<T> frags[2];
  frags[0].load(tile_a(0), tile_b(0), wm, wn, 0);
  // [excerpt:ring]
  for (int t = 0; t < tiles; ++t) {
    const int next = t + T::kStages - 1;  // into the stage of tile t-1, which every warp is done with
    if (next < tiles) load(next % T::kStages, next * T::BK);
    cp_async_commit();
#pragma unroll
    for (int k = 0; k < T::BK / 16; ++k) {
      if (k + 1 < T::BK / 16) {
        frags[(k + 1) % 2].load(tile_a(t % T::kStages), tile_b(t % T::kStages), wm, wn, 16 * (k + 1));
      } else {  // before the last k-step's math: wait for tile t+1, and load its first fragments
        cp_async_wait<T::kStages - 2>();  // this thread's copies of tile t+1 have landed
        __syncthreads();  // everyone's have; and every warp is done reading tile t
        const int following = (t + 1) % T::kStages;
        if (t + 1 < tiles) frags[0].load(tile_a(following), tile_b(following), wm, wn, 0);
      }
#pragma unroll
      for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < T::WN / 16; ++j) wmma::mma_sync(acc[i][j], frags[k % 2].a[i], frags[k % 2].b[j], acc[i][j]);
    }
  }
  // [/excerpt:ring]
  // [/excerpt:main-loop]

  // The tiles are no longer needed (the last barrier above came after every warp's last read):
  // their memory holds each warp's edge scratch (256 floats). The copies still pending are empty.
  float* scratch = reinterpret_cast<float*>(shared_tiles) + warp * 256;
#pragma unroll
  for (int i = 0; i < T::WM / 16; ++i)
#pragma unroll
    for (int j = 0; j < T::WN / 16; ++j)
      store_fragment(acc[i][j], g.C, g.M, g.N, row0 + wm + 16 * i, col0 + wn + 16 * j, scratch);
}

inline void launch_cp_async_wmma(const Gemm& g) {
  using T = PaddedTiles;
  allow_shared_bytes(tc_cp_async_wmma, T::kSharedBytes);
  const int blocks = ceil_div(g.M, T::BM) * ceil_div(g.N, T::BN);
  tc_cp_async_wmma<<<blocks, T::kThreads, T::kSharedBytes>>>(g);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
