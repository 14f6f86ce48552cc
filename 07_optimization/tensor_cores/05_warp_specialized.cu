// Tensor cores step 5 (Hopper, sm_90a): a producer warp and two consumer warpgroups around an
// mbarrier ring.
// Change (from step 4): the block splits into roles. Warpgroup 0 only loads: one of its threads
// issues every TMA copy, and setmaxnreg hands its registers to the others. Warpgroups 1 and 2
// only multiply, 64 rows each of a 128 x 256 block tile. Each of the 4 stages has two mbarriers:
// "full" (the copy engine completes it when the stage's bytes have landed) and "empty" (each
// consumer warpgroup arrives once its wgmmas have read the stage). No __syncthreads() in the
// main loop, and a consumer keeps one stage's wgmmas running while it waits for the next.
// Prediction: ~90% of cuBLAS BF16 (step 4 at ~65%): the tensor pipe no longer drains at every
// stage, and each B tile feeds 128 rows of C instead of 64. Still missing: a persistent grid
// (one block per tile, so the last wave is partly empty and every block starts with an empty
// ring) and an epilogue that overlaps loads of the next tile (step 6).
#include "04_hopper.cuh"

namespace tc {
namespace {

using namespace hopper;

struct Tiles {
  static constexpr int BM = 128, BN = 256, kStages = 4, kConsumers = 2;  // consumer warpgroups, 64 rows each
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr uint32_t kStageBytes = box_bytes(BM) + box_bytes(BN);
};

struct SharedStorage {
  bf16 a[Tiles::kStages][Tiles::BM * kBK];
  bf16 b[Tiles::kStages][Tiles::BN * kBK];
  uint64_t full[Tiles::kStages];   // the stage's tiles have landed
  uint64_t empty[Tiles::kStages];  // the consumers are done reading the stage
};
constexpr size_t kSharedBytes = sizeof(SharedStorage) + 1024;

__global__ void __launch_bounds__(Tiles::kThreads, 1)
    tc_warp_specialized(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                        int M, int N, int K, float* C) {
  using T = Tiles;
  extern __shared__ unsigned char shared_bytes[];
  SharedStorage& s = aligned_shared<SharedStorage>(shared_bytes);
  int tile_m, tile_n;
  grouped_tile(blockIdx.x, ceil_div(M, T::BM), ceil_div(N, T::BN), tile_m, tile_n);
  const int k_tiles = ceil_div(K, kBK);
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < T::kStages; ++stage) {
      barrier_init(&s.full[stage], 1);                 // the producer's arrival (+ the bytes)
      barrier_init(&s.empty[stage], T::kConsumers);    // one arrival per consumer warpgroup
    }
    barrier_init_fence();
  }
  __syncthreads();

  // [excerpt:roles]
  PipelineState<T::kStages> state;
  if (warpgroup == 0) {  // producer
    producer_registers();
    if (threadIdx.x == 0) {
      for (int t = 0; t < k_tiles; ++t, state.advance()) {
        // Wait until the consumers have emptied the stage in its previous round (on the first
        // round the parity names the phase before the barrier's first, which counts as done).
        barrier_wait(&s.empty[state.stage], state.phase ^ 1);
        barrier_arrive_expect_bytes(&s.full[state.stage], T::kStageBytes);
        tma_load(s.a[state.stage], &map_a, t * kBK, tile_m * T::BM, &s.full[state.stage]);
        tma_load(s.b[state.stage], &map_b, t * kBK, tile_n * T::BN, &s.full[state.stage]);
      }
    }
    return;
  }

  consumer_registers();
  const int consumer = warpgroup - 1;  // rows 64 * consumer .. of the block tile
  float d[128] = {};
  PipelineState<T::kStages> previous;  // the stage whose wgmmas may still be running
  for (int t = 0; t < k_tiles; ++t, state.advance()) {
    barrier_wait(&s.full[state.stage], state.phase);
    wgmma_stage(d, s.a[state.stage] + consumer * 64 * kBK, s.b[state.stage]);
    // Keep this stage's wgmmas running; wait only for the previous stage's, and hand it back.
    wgmma_wait<1>();
    fence_accumulators(d);
    if (t > 0) {
      if (threadIdx.x % 128 == 0) barrier_arrive(&s.empty[previous.stage]);
      previous.advance();
    }
  }
  // [/excerpt:roles]
  wgmma_wait<0>();
  fence_accumulators(d);
  store_accumulators(C, M, N, tile_m * T::BM + consumer * 64, tile_n * T::BN, d);
}

}  // namespace

void launch_warp_specialized(const Gemm& g) {
  using T = Tiles;
  allow_shared_bytes(tc_warp_specialized, kSharedBytes);
  const CUtensorMap map_a = operand_map(g.A, g.M, g.K, g.ld, T::BM);
  const CUtensorMap map_b = operand_map(g.B, g.N, g.K, g.ld, T::BN);
  const int blocks = ceil_div(g.M, T::BM) * ceil_div(g.N, T::BN);
  tc_warp_specialized<<<blocks, T::kThreads, kSharedBytes>>>(map_a, map_b, g.M, g.N, g.K, g.C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
