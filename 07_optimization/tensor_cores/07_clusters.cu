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
// Going deeper (--last-wave-split, launch_clusters_split): the last wave, stream-K, in a kernel of
// its own (the same template with kSplit = true), so that step 7's kernel carries none of its code.
// When the cluster tiles are not a whole number of waves, the last wave's tiles keep a few clusters
// busy while the rest idle. Instead, the last wave's k-tiles (tile after tile) are cut into one equal
// share per cluster, as CUTLASS's stream-K scheduler does; a tile cut between clusters is finished by
// the cluster holding its k = 0 (its owner), which waits for the others' partial sums (fp32, through a
// global workspace, counted on a flag), adds them and stores. Every cluster is resident at once (one
// per cluster slot) and a cluster waits only after its own hand-overs, so the wait ends.
// Prediction: at most the idle part of the last wave: ~1% at 8192 x 14336 x 8192 (27.15 waves) and
// 8192^3 (15.52), ~3% at 4096^3 (3.88), less the hand-over's reads and writes.
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

/// Partial sums per cluster: one per (block of the cluster, consumer warpgroup).
constexpr int kSlots = Tiles::kClusterSize * Tiles::kConsumers;

/// The last wave's split (step 7 passes none): the workspace of partial sums, one per (cluster,
/// slot), and one flag per (last-wave tile, slot) counting the partial sums written for it.
struct LastWave {
  float* partials;  // per (cluster, slot): 128 threads x 128 accumulators
  int* flags;       // back to 0 when the kernel ends (the owner resets it)
};

/// One piece of work: a cluster tile, or the k-tiles [k_begin, k_end) of one (split).
struct Work {
  int tile, k_begin, k_end;
};

// [excerpt:walk]
/// A cluster's walk: the full waves' tiles, whole, then (kSplit) its share of the last wave, stream-K:
/// the last wave's k-tiles in a row (tile by tile), cut into one equal share per cluster; a share
/// cut at tile boundaries is one or two pieces (a share is shorter than a tile). Without kSplit,
/// every tile whole: tile cluster_id, then every clusters-th after it.
template <bool kSplit>
struct Walk {
  int clusters, cluster_id, cluster_tiles, k_tiles, full, work;
  __device__ Walk(int c, int id, int tiles, int k)
      : clusters(c), cluster_id(id), cluster_tiles(tiles), k_tiles(k),
        full(kSplit ? tiles / c * c : tiles), work((tiles - full) * k) {}
  /// First k-tile (in the last wave's row) of cluster c's share; begin(c + 1) ends it.
  __device__ int begin(int c) const { return c * work / clusters; }
  /// Piece j of this cluster's walk; false when there is none.
  __device__ bool piece(int j, Work& w) const {
    const int tile = cluster_id + j * clusters;
    if (tile < full) {
      w = {tile, 0, k_tiles};
      return true;
    }
    if (!kSplit) return false;
    const int end = begin(cluster_id + 1);
    int from = begin(cluster_id);
    for (int skip = j - full / clusters; skip > 0 && from < end; --skip) from = (from / k_tiles + 1) * k_tiles;
    if (from >= end) return false;
    const int t = from / k_tiles;  // the last wave's tile t
    w = {full + t, from - t * k_tiles, min(end - t * k_tiles, k_tiles)};
    return true;
  }
  /// The cluster whose share holds k-tile x of the last wave's row.
  __device__ int holder(int x) const {
    int c = min(x * clusters / max(work, 1), clusters - 1);
    while (begin(c + 1) <= x) ++c;
    while (begin(c) > x) --c;
    return c;
  }
};
// [/excerpt:walk]

/// The GPU's global timer, in nanoseconds.
__device__ uint64_t global_ns() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// [excerpt:combine]
/// A piece of a split tile, from one consumer warpgroup (128 threads) of one block. A piece that
/// does not start at k = 0 writes its partial sums and counts them on the tile's flag; the piece
/// that does (the owner) waits for the others' (the clusters after it whose shares reach into its
/// tile), adds them, and returns true: it stores the tile. \p slot: this (block, consumer).
__device__ bool combine_partials(float (&d)[128], const LastWave& wave, const Walk<true>& walk, const Work& w,
                                 int slot, int barrier_id) {
  const int thread = threadIdx.x % 128, t = w.tile - walk.full;
  const auto sync_warpgroup = [barrier_id] { asm volatile("bar.sync %0, 128;\n" ::"r"(barrier_id) : "memory"); };
  const auto partial = [&](int c) { return wave.partials + size_t(c * kSlots + slot) * 128 * 128; };
  int* flag = &wave.flags[t * kSlots + slot];
  if (w.k_begin > 0) {
    float* mine = partial(walk.cluster_id);
#pragma unroll
    for (int i = 0; i < 128; ++i) __stcg(&mine[i * 128 + thread], d[i]);
    __threadfence();  // the partials reach L2 before the flag counts them
    sync_warpgroup();
    if (thread == 0) atomicAdd(flag, 1);
    return false;
  }
  const int last = walk.holder((t + 1) * walk.k_tiles - 1);
  int others = 0;  // clusters after this one with a piece of this tile (a share may be empty)
  for (int c = walk.cluster_id + 1; c <= last; ++c) others += walk.begin(c) < walk.begin(c + 1);
  if (others == 0) return true;
  if (thread == 0) {  // wait for the others, and reset the flag for the next launch
    const uint64_t since = global_ns();
    while (atomicCAS(flag, others, 0) != others) {
      __nanosleep(64);
      if (global_ns() - since > 10'000'000'000ull) {  // never, unless a cluster could not start: say so
        printf("tc_clusters: a last-wave tile waited 10 s for %d partial sums (are all clusters resident?)\n", others);
        __trap();
      }
    }
  }
  sync_warpgroup();
  __threadfence();
  for (int c = walk.cluster_id + 1; c <= last; ++c) {
    if (walk.begin(c) == walk.begin(c + 1)) continue;
    const float* theirs = partial(c);
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] += __ldcg(&theirs[i * 128 + thread]);
  }
  return true;
}
// [/excerpt:combine]

/// Both blocks of the cluster arrive and wait (every thread of each).
__device__ void cluster_sync() {
  ptx::barrier_cluster_arrive();
  ptx::barrier_cluster_wait();
}

/// Step 7; with kSplit, its last wave split along K (launch_clusters_split).
template <bool kSplit>
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
  const Walk<kSplit> walk(clusters, cluster_id, cluster_tiles, k_tiles);
  Work w;
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
      for (int j = 0; walk.piece(j, w); ++j) {
        grouped_tile<kTileRowsPerGroup / T::kClusterSize>(w.tile, pairs_m, tiles_n, pair_m, tile_n);
        const int tile_m = pair_m * T::kClusterSize + rank;
        for (int t = w.k_begin; t < w.k_end; ++t, state.advance()) {
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
    for (int j = 0; walk.piece(j, w); ++j) {
      grouped_tile<kTileRowsPerGroup / T::kClusterSize>(w.tile, pairs_m, tiles_n, pair_m, tile_n);
      const int tile_m = pair_m * T::kClusterSize + rank;
      float d[128] = {};
      PipelineState<T::kStages> previous = state;
      for (int t = w.k_begin; t < w.k_end; ++t, state.advance()) {
        barrier_wait(&s.full[state.stage], state.phase);
        wgmma_stage(d, s.a[state.stage] + consumer * 64 * kBK, s.b[state.stage]);
        wgmma_wait<1>();
        fence_accumulators(d);
        if (t > w.k_begin) {
          release(previous.stage);
          previous.advance();
        }
      }
      wgmma_wait<0>();
      fence_accumulators(d);
      release(previous.stage);
      if constexpr (kSplit) {  // a split tile: its later pieces hand their sums to the owner, which stores it
        const int slot = rank * T::kConsumers + consumer;
        if (w.tile >= walk.full && !combine_partials(d, wave, walk, w, slot, 3 + consumer)) continue;
      }
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

/// As many clusters of \p kernel as fit on the GPU at once (pairs of multiprocessors of one GPC).
int resident_clusters(const void* kernel) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(multiprocessor_count()));
  config.blockDim = dim3(Tiles::kThreads);
  config.dynamicSmemBytes = kSharedBytes;
  int count = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&count, kernel, &config));
  return count;
}

/// Step 7; with \p split_last_wave, its last wave split along K (the Going-deeper experiment).
void launch(const Gemm& g, bool split_last_wave) {
  using T = Tiles;
  allow_shared_bytes(tc_clusters<false>, kSharedBytes);
  allow_shared_bytes(tc_clusters<true>, kSharedBytes);
  const CUtensorMap map_a = operand_map(g.A, g.M, g.K, g.ld, T::BM);
  const CUtensorMap map_b = operand_map(g.B, g.N, g.K, g.ld, T::BN / T::kClusterSize);  // half of B per block
  const bool tma_store = g.N % 4 == 0;
  CUtensorMap map_c{};
  if (tma_store)
    map_c = tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, g.C, g.M, g.N, size_t(g.N) * sizeof(float),
                       kStoreCols, 64);
  // As many clusters as fit at once, at most one per cluster tile. The split's wait needs every
  // cluster resident: its own kernel's count.
  static const int resident = resident_clusters(reinterpret_cast<const void*>(tc_clusters<false>));
  static const int resident_split = resident_clusters(reinterpret_cast<const void*>(tc_clusters<true>));
  const int cluster_tiles = ceil_div(ceil_div(g.M, T::BM), T::kClusterSize) * ceil_div(g.N, T::BN);
  const int clusters = std::max(1, std::min(cluster_tiles, split_last_wave ? resident_split : resident));
  if (!split_last_wave || cluster_tiles % clusters == 0) {  // no partial last wave: nothing to split
    tc_clusters<false><<<clusters * T::kClusterSize, T::kThreads, kSharedBytes>>>(
        map_a, map_b, map_c, tma_store, g.M, g.N, g.K, g.C, LastWave{});
  } else {
    // The workspace: allocated once, for as many clusters as can run; flags start at 0.
    static tutorial::DeviceBuffer<float> partials(size_t(resident_split) * kSlots * 128 * 128);
    static tutorial::DeviceBuffer<int> flags = [] {
      tutorial::DeviceBuffer<int> zeros(size_t(resident_split) * kSlots);
      CUDA_CHECK(cudaMemset(zeros.data(), 0, zeros.bytes()));
      return zeros;
    }();
    tc_clusters<true><<<clusters * T::kClusterSize, T::kThreads, kSharedBytes>>>(
        map_a, map_b, map_c, tma_store, g.M, g.N, g.K, g.C, LastWave{partials.data(), flags.data()});
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_clusters(const Gemm& g) { launch(g, false); }
void launch_clusters_split(const Gemm& g) { launch(g, true); }

}  // namespace tc
