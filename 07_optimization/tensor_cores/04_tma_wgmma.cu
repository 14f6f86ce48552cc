// Tensor cores step 4 (Hopper, sm_90a): TMA loads, wgmma, and warp-specialized pipeline stages.
// Change: the three things Hopper adds for matrix products, together.
//  - TMA (the Tensor Memory Accelerator, cp.async.bulk.tensor): ONE thread asks for a whole
//    128 x 64 tile of A (and a 256 x 64 tile of B) with a tensor map made on the host; the
//    copy engine writes it to shared memory in the 128-byte swizzled layout of step 3, fills
//    what lies outside the matrix with zeros, and counts the bytes on an mbarrier.
//  - wgmma (warpgroup MMA, sm_90a only): the 4 warps of a warpgroup issue one asynchronous
//    m64n256k16 product together, reading A and B straight from shared memory (a 64-bit
//    descriptor says where and in which layout); the 64 x 256 fp32 accumulator stays in
//    registers, 128 per thread. No ldmatrix, no operand registers.
//  - Warp specialization: warpgroup 0 only loads (one thread issues the copies; setmaxnreg gives
//    its registers to the others), warpgroups 1 and 2 only multiply, 64 rows of the 128 x 256
//    block tile each. Four stages of shared memory, each with a "full" mbarrier (the copy engine
//    completes it when the bytes land) and an "empty" one (every consumer thread arrives when
//    its wgmmas have read the stage). No __syncthreads() in the main loop, and a consumer keeps
//    one tile's wgmmas running while it waits for the next tile.
// Prediction: ~85% of cuBLAS BF16 (the goal; cuBLAS uses this same machinery). Missing against
// it: a persistent grid (here a block per tile: the last wave is partly empty), thread-block
// clusters with TMA multicast (each block loads its own tiles), and an epilogue that overlaps
// the next tile's main loop (here the results leave registers with ordinary stores, at the end).
#include <cuda.h>  // CUtensorMap and the encoder's type; the function comes from the driver at run time

#include <cstdio>
#include <cstdlib>

#include "00_common.cuh"

namespace tc {
namespace {

struct WgmmaTiles {
  static constexpr int BM = 128, BN = 256, BK = 64;  // BK * 2 bytes = one 128-byte swizzle row
  static constexpr int kStages = 4, kConsumers = 2;  // consumer warpgroups, 64 rows each
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kStageBytes = (BM + BN) * BK * int(sizeof(bf16));
};

struct SharedStorage {  // placed at a 1024-byte boundary: the swizzle pattern repeats every 1024
  bf16 a[WgmmaTiles::kStages][WgmmaTiles::BM * WgmmaTiles::BK];
  bf16 b[WgmmaTiles::kStages][WgmmaTiles::BN * WgmmaTiles::BK];
  uint64_t full[WgmmaTiles::kStages];   // the stage's tiles have landed
  uint64_t empty[WgmmaTiles::kStages];  // the consumers are done reading the stage
};
constexpr size_t kSharedBytes = sizeof(SharedStorage) + 1024;  // + room to align

// --- mbarrier: a shared-memory barrier that counts arrivals and bytes, in phases ----------

__device__ void barrier_init(uint64_t* barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals));
}
/// One arrival, plus \p bytes that the copy engine must deliver before the phase completes.
__device__ void barrier_arrive_expect_bytes(uint64_t* barrier, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)),
               "r"(bytes)
               : "memory");
}
__device__ void barrier_arrive(uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier)) : "memory");
}
/// Waits until the phase with this parity (0, 1, 0, ...: the phase count's low bit) is complete.
__device__ void barrier_wait(uint64_t* barrier, int parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "retry:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra retry;\n"
      "}\n" ::"r"(shared_address(barrier)),
      "r"(parity)
      : "memory");
}

/// TMA: copies the box of \p map at (column x, row y) into \p tile; completes bytes on \p barrier.
__device__ void tma_load(bf16* tile, const CUtensorMap* map, int x, int y, uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(shared_address(tile)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(shared_address(barrier))
      : "memory");
}

// --- wgmma --------------------------------------------------------------------------------

/// Describes a K-major tile in shared memory, 128-byte rows with the 128-byte swizzle: its start
/// (16-byte units), the distance between groups of 8 rows (1024 bytes) and the layout. (The
/// "leading byte offset" is unused by this layout.) Step 16 elements along K: start + 32 bytes.
__device__ uint64_t tile_descriptor(const bf16* tile) {
  return ((shared_address(tile) & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

__device__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most \p kPending committed groups of this warpgroup's wgmmas are running.
template <int kPending>
__device__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

/// Ties the accumulators to this point: wgmma writes them asynchronously, so no use of them may
/// move above the wait that follows the last wgmma.
__device__ void fence_accumulators(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// d (64 x 256, fp32, 128 per thread) += A (64 x 16, descriptor) * B^T (B: 256 x 16, descriptor).
__device__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"  // scale-d: 1 adds to d (0 would overwrite it)
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__global__ void __launch_bounds__(WgmmaTiles::kThreads, 1)
    tc_tma_wgmma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 int M, int N, int K, float* C) {
  using T = WgmmaTiles;
  extern __shared__ unsigned char shared_bytes[];
  const unsigned misalignment = shared_address(shared_bytes) % 1024;
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(shared_bytes + (1024 - misalignment) % 1024);
  int tile_m, tile_n;
  grouped_tile(blockIdx.x, ceil_div(M, T::BM), ceil_div(N, T::BN), tile_m, tile_n);
  const int tiles = ceil_div(K, T::BK);
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < T::kStages; ++stage) {
      barrier_init(&s.full[stage], 1);                         // the producer's arrival (+ bytes)
      barrier_init(&s.empty[stage], 128 * T::kConsumers);      // every consumer thread
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine
  }
  __syncthreads();

  if (warpgroup == 0) {  // producer: one thread issues every copy
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      for (int t = 0; t < tiles; ++t) {
        const int stage = t % T::kStages;
        // From the second round on, wait until the consumers have emptied this stage.
        if (t >= T::kStages) barrier_wait(&s.empty[stage], (t / T::kStages - 1) % 2);
        barrier_arrive_expect_bytes(&s.full[stage], T::kStageBytes);  // out-of-bounds zeros count too
        tma_load(s.a[stage], &map_a, t * T::BK, tile_m * T::BM, &s.full[stage]);
        tma_load(s.b[stage], &map_b, t * T::BK, tile_n * T::BN, &s.full[stage]);
      }
    }
    return;
  }

  // Consumers: warpgroup 1 computes rows 0-63 of the block tile, warpgroup 2 rows 64-127.
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int consumer = warpgroup - 1;
  float d[128] = {};
  for (int t = 0; t < tiles; ++t) {
    const int stage = t % T::kStages;
    barrier_wait(&s.full[stage], (t / T::kStages) % 2);
    const bf16* a = s.a[stage] + consumer * 64 * T::BK;
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < T::BK / 16; ++k)
      wgmma_m64n256k16(d, tile_descriptor(a + 16 * k), tile_descriptor(s.b[stage] + 16 * k));
    wgmma_commit();
    // Keep this tile's wgmmas running while the next tile is awaited: wait only for the
    // previous tile's, and hand its stage back to the producer.
    wgmma_wait<1>();
    fence_accumulators(d);
    if (t > 0) barrier_arrive(&s.empty[(t - 1) % T::kStages]);
  }
  wgmma_wait<0>();
  fence_accumulators(d);

  // Accumulator layout: warp w of the warpgroup holds rows 16w..16w+15; per 8 columns j, a thread
  // holds (row lane/4, columns 8j + 2*(lane%4), +1) in d[4j], d[4j+1] and the same 8 rows lower
  // in d[4j+2], d[4j+3]: mma.sync's 16 x 8 layout, 32 times across.
  const int lane = threadIdx.x % 32;
  const int row = tile_m * T::BM + consumer * 64 + threadIdx.x % 128 / 32 * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < T::BN / 8; ++j) {
    const int col = tile_n * T::BN + 8 * j + 2 * (lane % 4);
    store_pair(C, M, N, row, col, d[4 * j], d[4 * j + 1]);
    store_pair(C, M, N, row + 8, col, d[4 * j + 2], d[4 * j + 3]);
  }
}

using EncodeTiled = decltype(&cuTensorMapEncodeTiled);

/// The driver's cuTensorMapEncodeTiled, looked up at run time: no link against libcuda, so the
/// program still starts (and says why it skips) on a machine without a driver.
EncodeTiled tensor_map_encoder() {
  static const EncodeTiled encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050  // the by-version lookup came with CUDA 12.5 (the other is deprecated)
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                                cudaEnableDefault, &found));
#else
    CUDA_CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &function, cudaEnableDefault, &found));
#endif
    if (found != cudaDriverEntryPointSuccess || function == nullptr) {
      std::fprintf(stderr, "The CUDA driver has no cuTensorMapEncodeTiled (it needs CUDA 12 or newer).\n");
      std::exit(tutorial::kExitFailure);
    }
    return reinterpret_cast<EncodeTiled>(function);
  }();
  return encode;
}

/// A tensor map for X (rows x K bf16, row pitch ld elements) that copies BK x box_rows boxes
/// into the 128-byte swizzled layout; boxes that stick out of X are filled with zeros.
CUtensorMap tile_map(const bf16* X, int rows, int K, int ld, int box_rows) {
  CUtensorMap map;
  const cuuint64_t size[2] = {cuuint64_t(K), cuuint64_t(rows)};  // innermost first
  const cuuint64_t row_pitch[1] = {cuuint64_t(ld) * sizeof(bf16)};  // bytes; a multiple of 16
  const cuuint32_t box[2] = {WgmmaTiles::BK, cuuint32_t(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  const CUresult result = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(X), size, row_pitch, box, step,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (CUresult %d) for a %d x %d matrix, pitch %d\n",
                 int(result), rows, K, ld);
    std::exit(tutorial::kExitFailure);
  }
  return map;
}

}  // namespace

void launch_tma_wgmma(const Gemm& g) {
  using T = WgmmaTiles;
  static const bool configured = [] {  // more than 48 KB of shared memory must be asked for
    CUDA_CHECK(cudaFuncSetAttribute(tc_tma_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kSharedBytes)));
    return true;
  }();
  (void)configured;
  const CUtensorMap map_a = tile_map(g.A, g.M, g.K, g.ld, T::BM);
  const CUtensorMap map_b = tile_map(g.B, g.N, g.K, g.ld, T::BN);
  const int blocks = ceil_div(g.M, T::BM) * ceil_div(g.N, T::BN);
  tc_tma_wgmma<<<blocks, T::kThreads, kSharedBytes>>>(map_a, map_b, g.M, g.N, g.K, g.C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace tc
