// Tensor cores step 6 (Hopper, sm_90a): persistent blocks, an L2-friendly tile order, and a
// TMA-store epilogue.
// Change (from step 5):
//  - Persistent blocks: one block per multiprocessor, each walking tiles blockIdx.x,
//    blockIdx.x + gridDim.x, ... The ring's state carries over from tile to tile, so the
//    producer loads the next tile's first stages while the consumers finish and store this one:
//    only the first tile of each block starts with an empty ring. (The tiles still divide
//    unevenly among the blocks: at 4096^3, 512 tiles give 116 blocks a fourth tile, 16 none.)
//  - Tile order: tile i is grouped_tile<16>(i): 16 tile rows at a time, column by column. The
//    132 tiles in flight at once then cover 16 tile rows of A and about 9 tile columns of B, the
//    fewest rows of A and B a wave of 132 tiles can read (diagrams/tile_order_persistent.svg), so
//    more of each wave's reads are L2 hits on what its neighbours fetched.
//  - TMA-store epilogue: each consumer warpgroup writes its 64 x 256 results to shared memory,
//    32 columns at a time into two alternating 8 KB buffers in the 128-byte swizzle, and one
//    thread hands each buffer to the copy engine (cp.async.bulk.tensor, global <- shared), which
//    writes whole 128-byte lines and clips what lies outside C. TMA needs a row pitch that is a
//    multiple of 16 bytes: for N % 4 != 0 the epilogue stores from registers as step 5 does.
// Prediction: ~97% of cuBLAS BF16 (step 5 at ~90%): about 3% from the tail wave and the ring's
// fill at every tile, 2-4% from overlapping the epilogue with the next tile's loads.
#include "04_hopper.cuh"

namespace tc {
namespace {

using namespace hopper;

struct Tiles {
  static constexpr int BM = 128, BN = 256, kStages = 4, kConsumers = 2;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr uint32_t kStageBytes = box_bytes(BM) + box_bytes(BN);
};

struct SharedStorage {
  bf16 a[Tiles::kStages][Tiles::BM * kBK];
  bf16 b[Tiles::kStages][Tiles::BN * kBK];
  StoreBuffers c[Tiles::kConsumers];  // per consumer warpgroup
  uint64_t full[Tiles::kStages];
  uint64_t empty[Tiles::kStages];
};
constexpr size_t kSharedBytes = sizeof(SharedStorage) + 1024;

__global__ void __launch_bounds__(Tiles::kThreads, 1)
    tc_persistent(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                  const __grid_constant__ CUtensorMap map_c, bool tma_store, int M, int N, int K, float* C) {
  using T = Tiles;
  extern __shared__ unsigned char shared_bytes[];
  SharedStorage& s = aligned_shared<SharedStorage>(shared_bytes);
  const int tiles_m = ceil_div(M, T::BM), tiles_n = ceil_div(N, T::BN), tiles = tiles_m * tiles_n;
  const int k_tiles = ceil_div(K, kBK);
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < T::kStages; ++stage) {
      barrier_init(&s.full[stage], 1);
      barrier_init(&s.empty[stage], T::kConsumers);
    }
    barrier_init_fence();
  }
  __syncthreads();

  PipelineState<T::kStages> state;  // carries over from tile to tile
  int tile_m, tile_n;
  if (warpgroup == 0) {
    producer_registers();
    if (threadIdx.x == 0) {
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        grouped_tile<kTileRowsPerGroup>(tile, tiles_m, tiles_n, tile_m, tile_n);
        for (int t = 0; t < k_tiles; ++t, state.advance()) {
          barrier_wait(&s.empty[state.stage], state.phase ^ 1);
          barrier_arrive_expect_bytes(&s.full[state.stage], T::kStageBytes);
          tma_load(s.a[state.stage], &map_a, t * kBK, tile_m * T::BM, &s.full[state.stage]);
          tma_load(s.b[state.stage], &map_b, t * kBK, tile_n * T::BN, &s.full[state.stage]);
        }
      }
    }
    return;
  }

  // [excerpt:consumer]
  consumer_registers();
  const int consumer = warpgroup - 1;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    grouped_tile<kTileRowsPerGroup>(tile, tiles_m, tiles_n, tile_m, tile_n);
    float d[128] = {};
    PipelineState<T::kStages> previous = state;
    for (int t = 0; t < k_tiles; ++t, state.advance()) {
      barrier_wait(&s.full[state.stage], state.phase);
      wgmma_stage(d, s.a[state.stage] + consumer * 64 * kBK, s.b[state.stage]);
      wgmma_wait<1>();
      fence_accumulators(d);
      if (t > 0) {
        if (threadIdx.x % 128 == 0) barrier_arrive(&s.empty[previous.stage]);
        previous.advance();
      }
    }
    wgmma_wait<0>();
    fence_accumulators(d);
    if (threadIdx.x % 128 == 0) barrier_arrive(&s.empty[previous.stage]);  // the tile's last stage
    const int row0 = tile_m * T::BM + consumer * 64, col0 = tile_n * T::BN;
    if (tma_store)
      store_through_tma(&map_c, row0, col0, d, s.c[consumer], 1 + consumer);
    else
      store_accumulators(C, M, N, row0, col0, d);
  }
  // [/excerpt:consumer]
  if (threadIdx.x % 128 == 0) tma_store_wait_all();  // the buffers must outlive the stores
}

}  // namespace

void launch_persistent(const Gemm& g) {
  using T = Tiles;
  allow_shared_bytes(tc_persistent, kSharedBytes);
  const CUtensorMap map_a = operand_map(g.A, g.M, g.K, g.ld, T::BM);
  const CUtensorMap map_b = operand_map(g.B, g.N, g.K, g.ld, T::BN);
  const bool tma_store = g.N % 4 == 0;  // C's row pitch, 4 * N bytes, must be a multiple of 16
  CUtensorMap map_c{};
  if (tma_store)
    map_c = tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, g.C, g.M, g.N, size_t(g.N) * sizeof(float),
                       kStoreCols, 64);
  const int tiles = ceil_div(g.M, T::BM) * ceil_div(g.N, T::BN);
  const int blocks = std::min(tiles, multiprocessor_count());
  tc_persistent<<<blocks, T::kThreads, kSharedBytes>>>(map_a, map_b, map_c, tma_store, g.M, g.N, g.K, g.C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
