// Tensor cores step 7 (Hopper, sm_90a): thread-block clusters with TMA multicast.
// Change (from step 6): blocks run in clusters of two, on two multiprocessors of one GPC, and
// the pair computes two tiles one above the other (rows 2p and 2p + 1 of tiles, the same
// column): both need the same 256 x 64 tile of B at every stage. Each block loads its own A tile
// and HALF of that B tile, multicast: the copy engine writes the half into both blocks' shared
// memory and counts its bytes on both blocks' "full" barriers. So each block asks L2 for 16 +
// 16 KB per stage instead of 16 + 32. The price: a stage may be refilled only when the consumers
// of BOTH blocks are done with it (the other block's copy writes into ours), so each consumer
// warpgroup arrives on the "empty" barrier of both blocks, and the blocks wait for each other
// at the start (barriers initialised) and at the end (no more arrivals on our barriers).
// Prediction: ~100% of cuBLAS BF16 (step 6 at ~97%): a third fewer bytes from L2 per stage,
// which matters where L2 bandwidth, not the tensor pipe, sets the pace.
//
// Going deeper (--last-wave-split, launch_clusters_split): the last wave, split along K. When the
// cluster tiles are not a whole number of waves, the last wave's few tiles keep a few clusters busy
// while the rest idle. Split instead: each of those tiles' K range in `splits` chunks, one chunk per
// cluster, so the whole GPU works on the last wave; the chunk-0 cluster of a tile (its owner) waits
// for the other chunks' partial sums (fp32, in a global workspace, each counted on a flag), adds
// them, and stores. Every cluster is resident at once (one per cluster slot), so the wait ends.
// Prediction: ~1% at 8192 x 14336 x 8192 (27.15 waves: the 0.15 wave costs a whole one today).
#include <cooperative_groups.h>

#include <tutorial/buffer.cuh>

#include "04_hopper.cuh"

namespace tc {
namespace {

using namespace hopper;
namespace cg = cooperative_groups;

struct Tiles {
  static constexpr int BM = 128, BN = 256, kStages = 4, kConsumers = 2, kClusterSize = 2;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  // What lands in EACH block per stage: its own A box and both halves of B (one from each block).
  static constexpr uint32_t kStageBytes = box_bytes(BM) + kClusterSize * box_bytes(BN / kClusterSize);
};

struct SharedStorage {
  bf16 a[Tiles::kStages][Tiles::BM * kBK];
  bf16 b[Tiles::kStages][Tiles::BN * kBK];
  StoreBuffers c[Tiles::kConsumers];
  uint64_t full[Tiles::kStages];
  uint64_t empty[Tiles::kStages];
};
constexpr size_t kSharedBytes = sizeof(SharedStorage) + 1024;

/// Partial sums per split tile: one per (block of the cluster, consumer warpgroup).
constexpr int kSlots = Tiles::kClusterSize * Tiles::kConsumers;

/// The last wave's split: the workspace of partial sums, one flag per (tile, block, consumer)
/// counting the chunks that have written theirs (the owner resets it to 0 for the next launch).
struct LastWave {
  int splits;         // K chunks per last-wave tile (1: no split, step 7 as it is)
  float* partials;    // per (chunk unit, block, consumer): 128 threads x 128 accumulators
  int* flags;
};

/// Work item \p item of the persistent loop: a whole cluster tile of the full waves, or one K
/// chunk of a last-wave tile. Sets the tile, its k-tile range and the chunk (0: the owner).
__device__ void work_item(int item, int full, int k_tiles, const LastWave& wave, int& tile, int& k_begin,
                          int& k_end, int& chunk) {
  if (item < full) {
    tile = item, k_begin = 0, k_end = k_tiles, chunk = 0;
    return;
  }
  const int unit = item - full;
  tile = full + unit / wave.splits;
  chunk = unit % wave.splits;
  k_begin = chunk * k_tiles / wave.splits;
  k_end = (chunk + 1) * k_tiles / wave.splits;
}

/// A split tile's partial sums, from one consumer warpgroup (128 threads) of one block: written by
/// chunks 1.., added by the owner (chunk 0) once all are in, then stored by it. \p slot: this
/// tile's (block, consumer); returns false where this warpgroup is not the owner (it stores nothing).
__device__ bool combine_partials(float (&d)[128], const LastWave& wave, int last_tile, int chunk, int slot,
                                 int barrier_id) {
  const int thread = threadIdx.x % 128;
  const auto sync_warpgroup = [barrier_id] { asm volatile("bar.sync %0, 128;\n" ::"r"(barrier_id) : "memory"); };
  int* flag = &wave.flags[last_tile * kSlots + slot];
  const auto partial = [&](int c) {
    return wave.partials + size_t((last_tile * wave.splits + c) * kSlots + slot) * 128 * 128;
  };
  if (chunk > 0) {
    float* mine = partial(chunk);
#pragma unroll
    for (int i = 0; i < 128; ++i) __stcg(&mine[i * 128 + thread], d[i]);
    __threadfence();  // the partials reach L2 before the flag counts them
    sync_warpgroup();
    if (thread == 0) atomicAdd(flag, 1);
    return false;
  }
  if (thread == 0)  // wait for the other chunks, and reset the flag for the next launch
    while (atomicCAS(flag, wave.splits - 1, 0) != wave.splits - 1) __nanosleep(64);
  sync_warpgroup();
  __threadfence();
  for (int c = 1; c < wave.splits; ++c) {
    const float* theirs = partial(c);
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] += __ldcg(&theirs[i * 128 + thread]);
  }
  return true;
}

/// Both blocks of the cluster arrive and wait (every thread of each).
__device__ void cluster_sync() {
  ptx::barrier_cluster_arrive();
  ptx::barrier_cluster_wait();
}

__global__ void __cluster_dims__(Tiles::kClusterSize, 1, 1) __launch_bounds__(Tiles::kThreads, 1)
    tc_clusters(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                const __grid_constant__ CUtensorMap map_c, bool tma_store, int M, int N, int K, float* C,
                const LastWave wave) {
  using T = Tiles;
  extern __shared__ unsigned char shared_bytes[];
  SharedStorage& s = aligned_shared<SharedStorage>(shared_bytes);
  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());  // 0 or 1: which tile of the pair, which half of B
  const int clusters = gridDim.x / T::kClusterSize, cluster_id = blockIdx.x / T::kClusterSize;
  // Cluster tiles: pairs of tile rows times tile columns, in step 6's order (8 pairs = 16 tile rows).
  const int pairs_m = ceil_div(ceil_div(M, T::BM), T::kClusterSize), tiles_n = ceil_div(N, T::BN);
  const int cluster_tiles = pairs_m * tiles_n;
  const int k_tiles = ceil_div(K, kBK);
  // The full waves' tiles, then (split) the last wave's: splits work items each.
  const int full = wave.splits > 1 ? cluster_tiles / clusters * clusters : cluster_tiles;
  const int items = full + (cluster_tiles - full) * wave.splits;
  int tile, k_begin, k_end, chunk;
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < T::kStages; ++stage) {
      barrier_init(&s.full[stage], 1);
      barrier_init(&s.empty[stage], T::kConsumers * T::kClusterSize);  // both blocks' consumers
    }
    barrier_init_fence();
  }
  cluster_sync();  // the other block's barriers are ready before any copy or arrival reaches them

  PipelineState<T::kStages> state;
  int pair_m, tile_n;
  if (warpgroup == 0) {
    producer_registers();
    if (threadIdx.x == 0) {
      // [excerpt:producer]
      const uint16_t both = (1u << T::kClusterSize) - 1;
      for (int item = cluster_id; item < items; item += clusters) {
        work_item(item, full, k_tiles, wave, tile, k_begin, k_end, chunk);
        grouped_tile<kTileRowsPerGroup / T::kClusterSize>(tile, pairs_m, tiles_n, pair_m, tile_n);
        const int tile_m = pair_m * T::kClusterSize + rank;
        for (int t = k_begin; t < k_end; ++t, state.advance()) {
          barrier_wait(&s.empty[state.stage], state.phase ^ 1);
          barrier_arrive_expect_bytes(&s.full[state.stage], T::kStageBytes);
          tma_load(s.a[state.stage], &map_a, t * kBK, tile_m * T::BM, &s.full[state.stage]);
          tma_load_multicast(s.b[state.stage] + rank * (T::BN / 2) * kBK, &map_b, t * kBK,
                             tile_n * T::BN + rank * (T::BN / 2), &s.full[state.stage], both);
        }
      }
      // [/excerpt:producer]
    }
  } else {
    consumer_registers();
    const int consumer = warpgroup - 1;
    // Thread r (r < cluster size) of each consumer warpgroup releases stages to block r.
    const int thread = threadIdx.x % 128;
    const auto release = [&](int stage) {
      if (thread < T::kClusterSize) barrier_arrive_in_block(&s.empty[stage], thread);
    };
    for (int item = cluster_id; item < items; item += clusters) {
      work_item(item, full, k_tiles, wave, tile, k_begin, k_end, chunk);
      grouped_tile<kTileRowsPerGroup / T::kClusterSize>(tile, pairs_m, tiles_n, pair_m, tile_n);
      const int tile_m = pair_m * T::kClusterSize + rank;
      float d[128] = {};
      PipelineState<T::kStages> previous = state;
      for (int t = k_begin; t < k_end; ++t, state.advance()) {
        barrier_wait(&s.full[state.stage], state.phase);
        wgmma_stage(d, s.a[state.stage] + consumer * 64 * kBK, s.b[state.stage]);
        wgmma_wait<1>();
        fence_accumulators(d);
        if (t > k_begin) {
          release(previous.stage);
          previous.advance();
        }
      }
      wgmma_wait<0>();
      fence_accumulators(d);
      release(previous.stage);
      // A split tile: chunks 1.. hand their sums to the owner, which adds them and stores the tile.
      const int slot = rank * T::kConsumers + consumer;
      if (item >= full && !combine_partials(d, wave, tile - full, chunk, slot, 3 + consumer)) continue;
      const int row0 = tile_m * T::BM + consumer * 64, col0 = tile_n * T::BN;
      if (tma_store)
        store_through_tma(&map_c, row0, col0, d, s.c[consumer], 1 + consumer);
      else
        store_accumulators(C, M, N, row0, col0, d);
    }
    if (thread == 0) tma_store_wait_all();
  }
  cluster_sync();  // the other block may still arrive on our barriers until it gets here
}

/// Step 7; with \p split_last_wave, its last wave split along K (the Going-deeper experiment).
void launch(const Gemm& g, bool split_last_wave) {
  using T = Tiles;
  allow_shared_bytes(tc_clusters, kSharedBytes);
  const CUtensorMap map_a = operand_map(g.A, g.M, g.K, g.ld, T::BM);
  const CUtensorMap map_b = operand_map(g.B, g.N, g.K, g.ld, T::BN / T::kClusterSize);  // half of B per block
  const bool tma_store = g.N % 4 == 0;
  CUtensorMap map_c{};
  if (tma_store)
    map_c = tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, g.C, g.M, g.N, size_t(g.N) * sizeof(float),
                       kStoreCols, 64);
  // As many clusters as fit on the GPU at once (pairs of multiprocessors of one GPC), at most
  // one per cluster tile.
  static const int resident = [] {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(unsigned(multiprocessor_count()));
    config.blockDim = dim3(T::kThreads);
    config.dynamicSmemBytes = kSharedBytes;
    int count = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&count, tc_clusters, &config));
    return count;
  }();
  const int cluster_tiles = ceil_div(ceil_div(g.M, T::BM), T::kClusterSize) * ceil_div(g.N, T::BN);
  const int clusters = std::max(1, std::min(cluster_tiles, resident));
  LastWave wave{1, nullptr, nullptr};
  const int last = cluster_tiles % clusters;  // tiles of a partial last wave (0: none)
  if (split_last_wave && last > 0) {
    // At most one chunk per cluster, at least one k-tile per chunk.
    wave.splits = std::max(1, std::min(clusters / last, ceil_div(g.K, kBK)));
    // Room for every cluster's chunk (the most there can be), allocated once; flags start at 0.
    static tutorial::DeviceBuffer<float> partials(size_t(resident) * kSlots * 128 * 128);
    static tutorial::DeviceBuffer<int> flags = [] {
      tutorial::DeviceBuffer<int> zeros(size_t(resident) * kSlots);
      CUDA_CHECK(cudaMemset(zeros.data(), 0, zeros.bytes()));
      return zeros;
    }();
    wave.partials = partials.data();
    wave.flags = flags.data();
  }
  tc_clusters<<<clusters * T::kClusterSize, T::kThreads, kSharedBytes>>>(map_a, map_b, map_c, tma_store, g.M, g.N,
                                                                         g.K, g.C, wave);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_clusters(const Gemm& g) { launch(g, false); }
void launch_clusters_split(const Gemm& g) { launch(g, true); }

}  // namespace tc
