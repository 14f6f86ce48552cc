// What the Hopper steps (4-7, sm_90a) share: the mbarrier ring's state, TMA copies, the wgmma
// instruction and its shared-memory descriptor, and the tensor maps made on the host.
//
// libcu++'s cuda::ptx (CUDA 12.8 and newer) wraps every PTX instruction used here except three,
// which stay raw PTX: wgmma (the product itself and its fence/commit/wait), setmaxnreg, and the
// arrival on another block's barrier in the form step 7 needs (see barrier_arrive_in_block). The
// barriers are plain 8-byte mbarriers in shared memory driven through cuda::ptx rather than
// cuda::barrier objects: cuda::barrier's wait() spins without bound, its arrive() returns a token
// a ring never uses, and the waits here must know the phase parity, which cuda::ptx's try_wait
// takes directly.
#pragma once

#include <cuda.h>  // CUtensorMap and the encoder's type; the function comes from the driver at run time

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda/ptx>

#include "00_common.cuh"

namespace tc::hopper {

namespace ptx = cuda::ptx;

/// Where a ring of kStages shared-memory stages stands: which stage, and the parity of the
/// round that stage is in (0 on the first pass round the ring, 1 on the second, 0 again...).
/// An mbarrier completes one phase per round, and a wait names the phase by this parity, so the
/// two only make sense together. Producer and consumers each keep one and advance it in step.
template <int kStages>
struct PipelineState {
  int stage = 0;
  uint32_t phase = 0;
  __device__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

// --- mbarrier ------------------------------------------------------------------------------

__device__ inline void barrier_init(uint64_t* barrier, int arrivals) { ptx::mbarrier_init(barrier, arrivals); }

/// Makes the initialised barriers visible to the copy engine and to the other blocks of a cluster.
__device__ inline void barrier_init_fence() { ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster); }

/// One arrival on a barrier of this block.
__device__ inline void barrier_arrive(uint64_t* barrier) {
  ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, barrier);
}

/// One arrival on the barrier at \p barrier's shared offset in block \p rank of the cluster (this
/// block included). Raw PTX: cuda::ptx's remote arrive exists only with .release.cluster, which
/// adds a cluster-wide memory fence before every arrival. The ring needs none: what the arrival
/// announces is that this warpgroup's wgmmas have finished reading the stage (wgmma_wait), and
/// the default (.release, .cta) form is what CUTLASS's cluster barrier uses for the same purpose.
__device__ inline void barrier_arrive_in_block(uint64_t* barrier, uint32_t rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(shared_address(barrier)),
      "r"(rank)
      : "memory");
}

/// One arrival, plus \p bytes that copies must deliver before the phase can complete.
__device__ inline void barrier_arrive_expect_bytes(uint64_t* barrier, uint32_t bytes) {
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, barrier, bytes);
}

/// Waits until the phase of \p barrier with this parity has completed. A release build spins
/// until it has; a debug build gives up after about 10 s (far beyond any tile's wait) with a
/// message and a trap, so a pipeline bug shows as an error instead of a hung GPU.
__device__ inline void barrier_wait(uint64_t* barrier, uint32_t parity) {
#ifdef NDEBUG
  while (!ptx::mbarrier_try_wait_parity(barrier, parity)) {
  }
#else
  const long long start = clock64();
  while (!ptx::mbarrier_try_wait_parity(barrier, parity)) {
    if (clock64() - start > (1LL << 34)) {
      printf("tensor cores: block %d thread %d gave up waiting on the mbarrier at shared 0x%x (parity %u)\n",
             int(blockIdx.x), int(threadIdx.x), shared_address(barrier), parity);
      __trap();
    }
  }
#endif
}

// --- TMA (cp.async.bulk.tensor) --------------------------------------------------------------

/// Copies the box of \p map at (column x, row y) into \p tile; the bytes complete on \p barrier.
__device__ inline void tma_load(void* tile, const CUtensorMap* map, int x, int y, uint64_t* barrier) {
  const int32_t coords[2] = {x, y};
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, tile, map, coords, barrier);
}

/// The same box, written to \p tile (and its bytes counted on \p barrier) at the same shared
/// offsets in every block of the cluster named in \p blocks (bit r: the block of rank r).
__device__ inline void tma_load_multicast(void* tile, const CUtensorMap* map, int x, int y, uint64_t* barrier,
                                          uint16_t blocks) {
  const int32_t coords[2] = {x, y};
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, tile, map, coords, barrier, blocks);
}

/// Copies \p tile to the box of \p map at (column x, row y); the parts outside the matrix are
/// not written. Completes in bulk groups (tma_store_commit, tma_store_wait_read).
__device__ inline void tma_store(const CUtensorMap* map, int x, int y, const void* tile) {
  const int32_t coords[2] = {x, y};
  ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map, coords, tile);
}
__device__ inline void tma_store_commit() { ptx::cp_async_bulk_commit_group(); }
/// Waits until at most \p kPending of this thread's store groups still read shared memory.
template <int kPending>
__device__ inline void tma_store_wait_read() {
  ptx::cp_async_bulk_wait_group_read(ptx::n32_t<kPending>{});
}
/// Waits until all of this thread's store groups have been written to global memory.
__device__ inline void tma_store_wait_all() { ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{}); }

/// Orders this thread's ordinary shared-memory stores before later reads by the copy engine.
__device__ inline void fence_shared_for_copy_engine() { ptx::fence_proxy_async(ptx::space_shared); }

// --- wgmma (raw PTX: cuda::ptx has no wgmma) ---------------------------------------------------

/// wgmma's shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") for a K-major
/// tile as TMA writes it with the 128-byte swizzle: rows of 64 bf16 (128 bytes), 1024-byte
/// groups of 8 rows, the tile at a 1024-byte boundary (so the base-offset field stays 0).
/// One wgmma reads 16 elements of K, 32 bytes of each row, always inside one swizzled 128-byte
/// row: the next 16 start 32 bytes further on (tile + 16 elements).
__device__ inline uint64_t tile_descriptor(const bf16* tile) {
  constexpr uint64_t kStrideBytes = 1024;  // SBO: from one group of 8 rows to the next
  // LBO: the distance between core matrices along K. A swizzled K-major operand never steps
  // along K past its 128-byte row, so the hardware does not read it; the PTX ISA documents the
  // value as "assumed 1" (16 bytes) for this case, and that is what we write.
  constexpr uint64_t kLeadingBytes = 16;
  constexpr uint64_t kSwizzle128B = 1;  // layout type, bits 62-63
  const uint64_t start = (shared_address(tile) & 0x3FFFF) >> 4;  // 14 bits, 16-byte units
  return start | (kLeadingBytes >> 4) << 16 | (kStrideBytes >> 4) << 32 | kSwizzle128B << 62;
}

__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most \p kPending committed groups of this warpgroup's wgmmas are running.
template <int kPending>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

/// Ties the accumulators to this point: wgmma writes them asynchronously, so no use of them may
/// move above the wait that precedes this.
__device__ inline void fence_accumulators(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// d (64 x 256, fp32, 128 per thread) += A (64 x 16) * B^T (B: 256 x 16), both read from
/// shared memory through their descriptors. The accumulator layout: warp w of the warpgroup
/// holds rows 16w..16w+15; per 8 columns j, a thread holds (row lane/4, columns 8j + 2*(lane%4),
/// +1) in d[4j], d[4j+1] and the same 8 rows lower in d[4j+2], d[4j+3].
__device__ inline void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, 1, 1, 1, 0, 0;\n"  // scale-d 1 (add to d), scale-a, scale-b 1, neither transposed
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
      : "l"(desc_a), "l"(desc_b));
}

/// The 4 wgmmas of one BK = 64 stage: rows of \p a (64 x 64) times rows of \p b (256 x 64).
__device__ inline void wgmma_stage(float (&d)[128], const bf16* a, const bf16* b) {
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < 64 / 16; ++k) wgmma_m64n256k16(d, tile_descriptor(a + 16 * k), tile_descriptor(b + 16 * k));
  wgmma_commit();
}

/// Stores a warpgroup's 64 x 256 accumulators at rows row0.., columns col0.. of C, skipping what
/// lies outside M x N (the epilogue of steps 4 and 5, and of steps 6 and 7 when N % 4 != 0).
__device__ inline void store_accumulators(float* C, int M, int N, int row0, int col0, const float (&d)[128]) {
  const int lane = threadIdx.x % 32;
  const int row = row0 + threadIdx.x % 128 / 32 * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int col = col0 + 8 * j + 2 * (lane % 4);
    store_pair(C, M, N, row, col, d[4 * j], d[4 * j + 1]);
    store_pair(C, M, N, row + 8, col, d[4 * j + 2], d[4 * j + 3]);
  }
}

constexpr int kStoreCols = 32;  // the epilogue's store box: 64 rows x 32 fp32, one 128-byte row each

/// Two 64 x 32 fp32 buffers that the epilogue of steps 6 and 7 alternates between.
struct StoreBuffers {
  float c[2][64 * kStoreCols];
};

/// Writes a consumer warpgroup's 64 x 256 accumulators to C (rows row0.., columns col0..)
/// through the copy engine, 64 x 32 at a time, alternating between the two \p buffers. Thread 0
/// of the warpgroup issues the stores; named barrier \p barrier_id syncs the warpgroup.
__device__ inline void store_through_tma(const CUtensorMap* map_c, int row0, int col0, const float (&d)[128],
                                  StoreBuffers& buffers, int barrier_id) {
  const int thread = threadIdx.x % 128, lane = threadIdx.x % 32;
  const int row = thread / 32 * 16 + lane / 4;  // and row + 8
  const auto sync_warpgroup = [barrier_id] { asm volatile("bar.sync %0, 128;\n" ::"r"(barrier_id) : "memory"); };
#pragma unroll
  for (int chunk = 0; chunk < 256 / kStoreCols; ++chunk) {
    float* buffer = buffers.c[chunk % 2];
    if (thread == 0) tma_store_wait_read<1>();  // the store issued from this buffer 2 chunks ago
    sync_warpgroup();
#pragma unroll
    for (int j = 0; j < kStoreCols / 8; ++j) {
      const int col = 8 * j + 2 * (lane % 4);  // within the chunk; 16-byte unit col / 4
      const int i = 4 * (chunk * kStoreCols / 8 + j);
      // The 128-byte swizzle the store's tensor map expects: 16-byte unit u of row r sits at
      // u ^ (r % 8), so the 8 rows a warp writes at once fall on different banks.
      const auto at = [&](int r) { return buffer + r * 32 + ((col / 4) ^ (r % 8)) * 4 + col % 4; };
      *reinterpret_cast<float2*>(at(row)) = make_float2(d[i], d[i + 1]);
      *reinterpret_cast<float2*>(at(row + 8)) = make_float2(d[i + 2], d[i + 3]);
    }
    fence_shared_for_copy_engine();
    sync_warpgroup();
    if (thread == 0) {
      tma_store(map_c, col0 + chunk * kStoreCols, row0, buffer);
      tma_store_commit();
    }
  }
}

/// The register budgets of setmaxnreg: the loading warpgroup gives registers back, the
/// multiplying ones take them (40 + 2 * 232 per thread of 3 warpgroups fits 65536 registers).
__device__ inline void producer_registers() { asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n"); }
__device__ inline void consumer_registers() { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n"); }

/// The 1024-byte-aligned start of dynamic shared memory (the swizzle pattern repeats every 1024
/// bytes, and the descriptors assume tiles start on that pattern): launches ask for 1024 more.
template <typename Storage>
__device__ inline Storage& aligned_shared(unsigned char* bytes) {
  const unsigned misalignment = shared_address(bytes) % 1024;
  return *reinterpret_cast<Storage*>(bytes + (1024 - misalignment) % 1024);
}

// --- host: tensor maps ---------------------------------------------------------------------------

using EncodeTiled = decltype(&cuTensorMapEncodeTiled);

/// The driver's cuTensorMapEncodeTiled, looked up at run time: no link against libcuda, so the
/// program still starts (and says why it skips) on a machine without a driver.
inline EncodeTiled tensor_map_encoder() {
  static const EncodeTiled encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                                &found));
    if (found != cudaDriverEntryPointSuccess || function == nullptr) {
      std::fprintf(stderr, "The CUDA driver has no cuTensorMapEncodeTiled (it needs CUDA 12 or newer).\n");
      std::exit(tutorial::kExitFailure);
    }
    return reinterpret_cast<EncodeTiled>(function);
  }();
  return encode;
}

/// A tensor map for a row-major rows x cols matrix at \p base (row pitch \p pitch_bytes, a
/// multiple of 16) that copies box_cols x box_rows boxes in the 128-byte swizzle (box_cols *
/// element size must be 128 bytes); box elements outside the matrix read as zeros and are not
/// written back.
inline CUtensorMap tensor_map(CUtensorMapDataType type, const void* base, int rows, int cols, size_t pitch_bytes,
                              int box_cols, int box_rows) {
  CUtensorMap map;
  const cuuint64_t size[2] = {cuuint64_t(cols), cuuint64_t(rows)};  // innermost first
  const cuuint64_t pitch[1] = {cuuint64_t(pitch_bytes)};
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  const CUresult result = tensor_map_encoder()(&map, type, 2, const_cast<void*>(base), size, pitch, box, step,
                                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (CUresult %d) for a %d x %d matrix, pitch %zu bytes\n",
                 int(result), rows, cols, pitch_bytes);
    std::exit(tutorial::kExitFailure);
  }
  return map;
}

// [excerpt:tile-order]
/// The persistent steps' tile order: grouped_tile() (00_common.cuh) over this many tile rows at a
/// time. A wave of 132 tiles spanning r tile rows and c tile columns reads r * 128 rows of A and
/// c * 256 rows of B along K; with r * c = 132 that is least near r = 16, c = 8 (steps 2-5 use 8).
constexpr int kTileRowsPerGroup = 16;
// [/excerpt:tile-order]

constexpr int kBK = 64;  // K per stage: 64 bf16 = one 128-byte swizzle row

/// A tensor map for A or B (rows x K bf16, row pitch ld) copying kBK x box_rows boxes. Every
/// stage's byte count comes from the same box: box_bytes(box_rows).
inline CUtensorMap operand_map(const bf16* X, int rows, int K, int ld, int box_rows) {
  return tensor_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, X, rows, K, size_t(ld) * sizeof(bf16), kBK, box_rows);
}
/// The bytes one operand box of box_rows rows delivers: TMA counts the zeros it fills in for
/// the parts outside the matrix too, so this is the same for every box.
__host__ __device__ constexpr uint32_t box_bytes(int box_rows) { return uint32_t(box_rows) * kBK * sizeof(bf16); }

inline int multiprocessor_count() {
  static const int count = [] {
    int device = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  }();
  return count;
}

}  // namespace tc::hopper
