// Tensor cores step 4 (Hopper, sm_90a): TMA loads and wgmma, one warpgroup per block.
// Change (from step 3's mma.sync + ldmatrix + cp.async): the two instructions Hopper adds for
// matrix products, and nothing else.
//  - TMA (the Tensor Memory Accelerator, cp.async.bulk.tensor): ONE thread asks for a whole
//    64 x 64 tile of A and a 256 x 64 tile of B with tensor maps made on the host; the copy
//    engine writes them to shared memory in the 128-byte swizzled layout of step 3, fills what
//    lies outside the matrix with zeros, and counts the bytes on the stage's mbarrier.
//  - wgmma (warpgroup MMA): the 4 warps of a warpgroup issue one asynchronous m64n256k16
//    product together, reading A and B straight from shared memory through 64-bit descriptors;
//    the 64 x 256 fp32 accumulator stays in registers, 128 per thread. No ldmatrix.
// A ring of 4 stages keeps 3 tiles in flight while the warpgroup multiplies the fourth. The
// same warpgroup loads and multiplies: after each stage it waits for its wgmmas to finish, and
// a __syncthreads() tells the loading thread that the stage may be refilled.
// Prediction: ~65% of cuBLAS BF16. The loads are hidden, but the tensor pipe idles at every
// stage while the warpgroup drains its wgmmas, meets the barrier and issues the next ones
// (step 5 removes that), and a 64-row tile reads B once per 64 rows of C (step 5: 128).
#include "04_hopper.cuh"

namespace tc {
namespace {

using namespace hopper;

struct Tiles {
  static constexpr int BM = 64, BN = 256, kStages = 4;
  static constexpr uint32_t kStageBytes = box_bytes(BM) + box_bytes(BN);  // what each stage's barrier counts
};

struct SharedStorage {
  bf16 a[Tiles::kStages][Tiles::BM * kBK];
  bf16 b[Tiles::kStages][Tiles::BN * kBK];
  uint64_t full[Tiles::kStages];  // the stage's tiles have landed
};
constexpr size_t kSharedBytes = sizeof(SharedStorage) + 1024;  // + room to align

__global__ void __launch_bounds__(128, 1)
    tc_tma_wgmma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int M, int N,
                 int K, float* C) {
  using T = Tiles;
  extern __shared__ unsigned char shared_bytes[];
  SharedStorage& s = aligned_shared<SharedStorage>(shared_bytes);
  int tile_m, tile_n;
  grouped_tile(blockIdx.x, ceil_div(M, T::BM), ceil_div(N, T::BN), tile_m, tile_n);
  const int k_tiles = ceil_div(K, kBK);

  /// Thread 0 only: starts the copies of k-tile t into \p stage.
  const auto load = [&](int t, int stage) {
    barrier_arrive_expect_bytes(&s.full[stage], T::kStageBytes);
    tma_load(s.a[stage], &map_a, t * kBK, tile_m * T::BM, &s.full[stage]);
    tma_load(s.b[stage], &map_b, t * kBK, tile_n * T::BN, &s.full[stage]);
  };
  if (threadIdx.x == 0) {
    for (int stage = 0; stage < T::kStages; ++stage) barrier_init(&s.full[stage], 1);  // the loader's arrival
    barrier_init_fence();
    for (int t = 0; t < min(k_tiles, T::kStages); ++t) load(t, t);
  }
  __syncthreads();

  // [excerpt:main-loop]
  float d[128] = {};
  PipelineState<T::kStages> state;
  for (int t = 0; t < k_tiles; ++t, state.advance()) {
    barrier_wait(&s.full[state.stage], state.phase);
    wgmma_stage(d, s.a[state.stage], s.b[state.stage]);
    wgmma_wait<0>();
    fence_accumulators(d);
    __syncthreads();  // every warp's wgmmas have read the stage: refill it
    if (threadIdx.x == 0 && t + T::kStages < k_tiles) load(t + T::kStages, state.stage);
  }
  // [/excerpt:main-loop]
  store_accumulators(C, M, N, tile_m * T::BM, tile_n * T::BN, d);
}

}  // namespace

void launch_tma_wgmma(const Gemm& g) {
  using T = Tiles;
  allow_shared_bytes(tc_tma_wgmma, kSharedBytes);
  const CUtensorMap map_a = operand_map(g.A, g.M, g.K, g.ld, T::BM);
  const CUtensorMap map_b = operand_map(g.B, g.N, g.K, g.ld, T::BN);
  const int blocks = ceil_div(g.M, T::BM) * ceil_div(g.N, T::BN);
  tc_tma_wgmma<<<blocks, 128, kSharedBytes>>>(map_a, map_b, g.M, g.N, g.K, g.C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
