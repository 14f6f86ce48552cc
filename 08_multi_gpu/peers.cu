// Chapter 08, part 1: one GPU reading and writing another's memory.
//
// Peer access is turned on only after a real test copy checks out. Then the same bytes go from
// GPU 1 to GPU 0 in several ways, each verified exactly on a poisoned output and timed: the copy
// engine driven by GPU 0 (it reads the peer: a pull) or by GPU 1 (it writes the peer: a push),
// and kernels of our own that pull (run on GPU 0) or push (run on GPU 1): a loop of 16-byte
// loads and stores, and Hopper's bulk copies (TMA). Each kernel is compared with the copy engine
// driven the same way. Limits: NVLink's datasheet figure per direction and the copy engine's
// rate, measured in the same run, the ways interleaved.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <tutorial/cli.hpp>
#include <tutorial/timer.cuh>

#include "batch_timer.cuh"
#include "multi_gpu.cuh"

// Hopper's bulk copies (cp.async.bulk) need sm_90 and CUDA 12; other builds keep the kernel empty
// and the program leaves it out (tma_copy_compiled() says which).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12
#define PEERS_TMA 1
#endif

namespace {

// H100 SXM and H200: 18 NVLink 4 links of 25 GB/s each way (NVIDIA's datasheets: 900 GB/s both ways).
constexpr double kNvlinkPerDirectionGBs = 450.0;
constexpr int kThreads = 512;

// [excerpt:copy-kernel]
/// dst[i] = src[i] for n4 16-byte elements; either pointer may be on another GPU. Thread t of T
/// copies elements t, t + T, t + 2T, ...: each pass of the loop issues kLoads loads before its
/// first store, so kLoads x 16 bytes per thread are in flight across NVLink at once (a load from a
/// peer takes a microsecond or more). This is nvbandwidth's copy kernel, with kLoads a parameter.
template <int kLoads>
__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, size_t n4) {
  const size_t threads = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kLoads - 1) * threads < n4; i += kLoads * threads) {
    float4 v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) v[k] = src[i + k * threads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) dst[i + k * threads] = v[k];
  }
  for (; i < n4; i += threads) dst[i] = src[i];  // this thread's last few, one at a time
}
// [/excerpt:copy-kernel]

/// The n % 4 floats after the last whole float4 (cudaMalloc'd arrays start 256-byte aligned).
__global__ void copy_tail(const float* __restrict__ src, float* __restrict__ dst, size_t first, size_t n) {
  const size_t i = first + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

constexpr int kStages = 4;  // bulk copies in flight per block

#ifdef PEERS_TMA
__device__ unsigned shared_address(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
#endif

// [excerpt:tma-kernel]
/// dst = src for `bytes` bytes (a multiple of 16) with Hopper's bulk copies: one thread per block
/// moves chunks of chunk_bytes through shared memory, global -> shared (its arrival counted on an
/// mbarrier), then shared -> global. Block b copies chunks b, b + gridDim.x, ...; kStages loads
/// are in flight, and a stage is loaded again once the store out of it has read it.
__global__ void tma_copy_kernel(const char* src, char* dst, size_t bytes, unsigned chunk_bytes) {
#ifdef PEERS_TMA
  extern __shared__ __align__(128) char stage[];
  __shared__ __align__(8) unsigned long long full[kStages];
  if (threadIdx.x != 0) return;
  const size_t chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  const size_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x - 1) / gridDim.x + 1 : 0;
  for (int s = 0; s < kStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&full[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  auto offset = [&](size_t i) { return (blockIdx.x + i * gridDim.x) * size_t(chunk_bytes); };
  auto size = [&](size_t i) { return unsigned(bytes - offset(i) < chunk_bytes ? bytes - offset(i) : chunk_bytes); };
  auto load = [&](size_t i) {  // chunk i of this block into stage i % kStages
    const unsigned bar = shared_address(&full[i % kStages]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(size(i)) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(shared_address(stage + (i % kStages) * chunk_bytes)), "l"(src + offset(i)), "r"(size(i)),
                 "r"(bar) : "memory");
  };
  for (size_t i = 0; i < mine && i < kStages; ++i) load(i);
  for (size_t i = 0; i < mine; ++i) {
    const unsigned bar = shared_address(&full[i % kStages]);
    const unsigned parity = unsigned(i / kStages) & 1;
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(dst + offset(i)), "r"(shared_address(stage + (i % kStages) * chunk_bytes)), "r"(size(i))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (i >= 1 && i - 1 + kStages < mine) {  // the previous store has read its stage: refill it
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      load(i - 1 + kStages);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // every store done before the kernel ends
#endif
}
// [/excerpt:tma-kernel]

/// Whether this build has the bulk-copy kernel's body for the current GPU: CUDA 12 or later, and
/// code made from PTX of sm_90 or later (a JIT of older PTX would run the empty kernel).
bool tma_copy_compiled() {
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, tma_copy_kernel));
  int device = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9 && attr.ptxVersion >= 90;
#else
  return false;
#endif
}

/// One way to copy: who drives it, with what, and the kernel's shape.
struct Way {
  enum Kind { kEngine, kLoop, kTma } kind;
  int driver;            // the GPU whose copy engine or kernel does it: 0 pulls, 1 pushes
  int loads = 0;         // kLoop: 16-byte loads in flight per thread
  int blocks = 0;        // kernels: blocks (0: one per SM)
  unsigned chunk = 0;    // kTma: bytes per bulk copy
  std::string name() const {
    const char* how = driver == 0 ? "pull (GPU 0 reads)" : "push (GPU 1 writes)";
    if (kind == kEngine) return tutorial::format("copy engine, %s", how);
    const std::string grid = blocks ? tutorial::format("%d blocks", blocks) : std::string("1 block/SM");
    if (kind == kLoop) return tutorial::format("kernel, %s, %d loads/thread, %s", how, loads, grid.c_str());
    return tutorial::format("bulk copies (TMA), %s, %u KiB chunks, %s", how, chunk >> 10, grid.c_str());
  }
  std::string key() const {
    const char* how = driver == 0 ? "pull" : "push";
    if (kind == kEngine) return tutorial::format("engine_%s_gbs", how);
    if (kind == kLoop) return tutorial::format("kernel_%s_x%d%s_gbs", how, loads, blocks ? tutorial::format("_b%d", blocks).c_str() : "");
    return tutorial::format("tma_%s_%uk_b%d_gbs", how, chunk >> 10, blocks);
  }
};

template <int kLoads>
void launch_loop(const float* src, float* dst, size_t n4, int blocks, cudaStream_t stream) {
  copy_kernel<kLoads><<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(src),
                                                       reinterpret_cast<float4*>(dst), n4);
  CUDA_CHECK_LAUNCH();
}

/// Counts elements where a differs from b (a may be on another GPU), into *count.
__global__ void count_mismatches(const float* a, const float* b, size_t n, unsigned long long* count) {
  unsigned long long mine = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    mine += __float_as_uint(a[i]) != __float_as_uint(b[i]);
  if (mine) atomicAdd(count, mine);
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_peers", "GPU-to-GPU copies: the copy engine and kernels of our own, pulling and "
                                "pushing, each verified exactly and timed against NVLink's limit.");
  cli.add_int("n", "floats per copy", 1LL << 28, 1, 1LL << 31);
  cli.add_int("runs", "timed runs per copy and round (the median is reported)", 20, 1, 1000);
  cli.add_int("rounds", "rounds of the ways taking turns", 3, 1, 100);
  cli.add_flag("sweep", "also time the kernels over loads per thread, grid sizes and chunk sizes");
  multi_gpu::add_deadline_option(cli);
  cli.add_flag("check-only", "verify every copy, time nothing");
  cli.parse_or_exit(argc, argv);
  const size_t n = size_t(cli.get_int("n"));
  const size_t bytes = n * sizeof(float);
  const int runs = int(cli.get_int("runs"));

  multi_gpu::force_nvls_off();
  const int gpus = multi_gpu::require_gpus();
  multi_gpu::Watchdog watchdog(cli.get_int("deadline-ms"), "08_peers");  // no wait may hang the program
  tutorial::Verifier verifier;

  // [excerpt:peer-attributes]
  std::printf("\nPeer access between the %d GPUs:\n", gpus);
  for (int a = 0; a < gpus; ++a)
    for (int b = 0; b < gpus; ++b) {
      if (a == b) continue;
      int can = 0, rank = 0, atomics = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b));
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b));
      std::printf("  GPU %d -> GPU %d: can access %s, performance rank %d, native atomics %s\n", a,
                  b, can ? "yes" : "no", rank, atomics ? "yes" : "no");
    }
  multi_gpu::enable_all_peers(gpus, &verifier);  // trust, but only after a test copy
  // [/excerpt:peer-attributes]
  int unified = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, 0));
  std::printf("Unified addressing: %s (a pointer says which GPU it lives on)\n\n", unified ? "yes" : "no");

  int sms[2] = {0, 0};
  bool tma = true;
  for (int d = 0; d < 2; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms[d], cudaDevAttrMultiProcessorCount, d));
    tma = tma && tma_copy_compiled();
    if (tma) CUDA_CHECK(cudaFuncSetAttribute(tma_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             kStages * (32 << 10)));
  }
  if (!tma) std::printf("Bulk copies (TMA) left out: they need sm_90 and CUDA 12, in this build and GPU.\n\n");

  // Every way moves the same bytes, from GPU 1 (on1) to GPU 0 (on0).
  std::vector<Way> ways = {{Way::kEngine, 0}, {Way::kEngine, 1}};
  for (int driver : {0, 1}) {
    for (int loads : {1, 8}) ways.push_back({Way::kLoop, driver, loads, 0});
    ways.push_back({Way::kLoop, driver, 8, 32});
    if (tma) ways.push_back({Way::kTma, driver, 0, 0, 16u << 10});
  }
  const size_t listed = ways.size();  // checked before timing; the sweep's extra ways as they are timed
  if (cli.get_flag("sweep")) {
    auto listed_already = [&](const Way& w) {
      for (size_t i = 0; i < listed; ++i)
        if (ways[i].kind == w.kind && ways[i].driver == w.driver && ways[i].loads == w.loads &&
            ways[i].blocks == w.blocks && ways[i].chunk == w.chunk)
          return true;
      return false;
    };
    std::vector<Way> more;
    for (int driver : {0, 1}) {
      for (int loads : {1, 4, 8, 16})
        for (int blocks : {16, 32, 66, 0, 264}) more.push_back({Way::kLoop, driver, loads, blocks});
      if (tma)
        for (unsigned chunk : {8u << 10, 16u << 10, 32u << 10})
          for (int blocks : {16, 32, 66, 0}) more.push_back({Way::kTma, driver, 0, blocks, chunk});
    }
    for (const Way& w : more)
      if (!listed_already(w)) ways.push_back(w);
  }

  std::vector<float> pattern(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = multi_gpu::exact_input(1, i);
  multi_gpu::GpuArray<float> on0(0, n), on1(1, n), back0(0, n), back1(1, n);
  multi_gpu::GpuArray<unsigned long long> mismatches(0, 1);
  std::vector<cudaStream_t> streams = multi_gpu::make_streams(2);
  cudaStream_t s0 = streams[0], s1 = streams[1];

  // One copy of n floats from on1 to on0, driven by way.driver on its stream.
  auto copy = [&](const Way& way) {
    const int d = way.driver;
    CUDA_CHECK(cudaSetDevice(d));
    const int blocks = way.blocks ? way.blocks : sms[d];
    const size_t n4 = n / 4;
    switch (way.kind) {
      case Way::kEngine:
        CUDA_CHECK(cudaMemcpyPeerAsync(on0.data(), 0, on1.data(), 1, bytes, streams[d]));
        return;
      case Way::kLoop:
        if (way.loads == 1) launch_loop<1>(on1.data(), on0.data(), n4, blocks, streams[d]);
        else if (way.loads == 4) launch_loop<4>(on1.data(), on0.data(), n4, blocks, streams[d]);
        else if (way.loads == 8) launch_loop<8>(on1.data(), on0.data(), n4, blocks, streams[d]);
        else launch_loop<16>(on1.data(), on0.data(), n4, blocks, streams[d]);
        break;
      case Way::kTma:
        if (n4) {
          tma_copy_kernel<<<blocks, 32, kStages * way.chunk, streams[d]>>>(
              reinterpret_cast<const char*>(on1.data()), reinterpret_cast<char*>(on0.data()), n4 * 16, way.chunk);
          CUDA_CHECK_LAUNCH();
        }
        break;
    }
    if (n % 4) {
      copy_tail<<<1, 4, 0, streams[d]>>>(on1.data(), on0.data(), n4 * 4, n);
      CUDA_CHECK_LAUNCH();
    }
  };

  // Counts, on GPU 0, the elements of a that differ from b (a 1 GiB download per way would take
  // most of the run; up to 16 Mi floats every way is also checked on the host).
  auto mismatches_now = [&](const float* a, const float* b) {
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMemset(mismatches.data(), 0, sizeof(unsigned long long)));
    count_mismatches<<<4 * sms[0], 256, 0, s0>>>(a, b, n, mismatches.data());
    CUDA_CHECK_LAUNCH();
    {
      auto wait = multi_gpu::waiting("the mismatch count (cudaStreamSynchronize)");
      CUDA_CHECK(cudaStreamSynchronize(s0));
    }
    return double(mismatches.download()[0]);
  };
  const bool on_host = n <= (size_t(1) << 24);
  // Every way verified exactly: the source holds the pattern, the target starts poisoned.
  on1.upload(pattern);
  on0.poison();
  verifier.expect("the check on the GPU counts every element of a poisoned target", mismatches_now(on0.data(), on1.data()) == double(n));
  for (size_t w = 0; w < listed; ++w) {
    on0.poison();
    copy(ways[w]);
    multi_gpu::synchronize_all(2);
    const std::string what = tutorial::format("%s, n = %zu", ways[w].name().c_str(), n);
    if (on_host || w == 0) {
      const std::vector<float> got = on0.download();
      verifier.exact(what, tutorial::max_abs_error(got.data(), pattern.data(), n));
    }
    if (!on_host) verifier.exact(what + " (on the GPU)", mismatches_now(on0.data(), on1.data()));
  }
  // Both ways at once: two copies, one enqueued on each GPU, GPU 0 waiting for GPU 1's.
  cudaEvent_t go = nullptr, done1 = nullptr;
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaEventCreateWithFlags(&go, cudaEventDisableTiming));
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaEventCreateWithFlags(&done1, cudaEventDisableTiming));
  // [excerpt:both-ways]
  auto both_ways = [&] {
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaEventRecord(go, s0));
    CUDA_CHECK(cudaMemcpyPeerAsync(on0.data(), 0, back1.data(), 1, bytes, s0));  // 1 -> 0
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaStreamWaitEvent(s1, go, 0));  // start together
    CUDA_CHECK(cudaMemcpyPeerAsync(on1.data(), 1, back0.data(), 0, bytes, s1));  // 0 -> 1
    CUDA_CHECK(cudaEventRecord(done1, s1));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamWaitEvent(s0, done1, 0));  // GPU 0's stream ends when both are done
  };
  // [/excerpt:both-ways]
  back0.upload(pattern);
  back1.upload(pattern);
  on0.poison();
  on1.poison();
  both_ways();
  multi_gpu::synchronize_all(2);
  for (const auto* arr : {&on0, &on1}) {
    const std::string what = tutorial::format("both ways at once, into GPU %d", arr->device());
    if (on_host) {
      const std::vector<float> got = arr->download();
      verifier.exact(what, tutorial::max_abs_error(got.data(), pattern.data(), n));
    } else {
      verifier.exact(what + " (on the GPU)", mismatches_now(arr->data(), back0.data()));
    }
  }

  if (!cli.get_flag("check-only")) {
    const tutorial::TimingPlan plan{3, runs};
    on1.upload(pattern);
    // Rounds: every way in turn, each round's median kept; the table reports the median round.
    std::vector<std::vector<double>> medians(ways.size());
    for (int round = 0; round < int(cli.get_int("rounds")); ++round)
      for (size_t w = 0; w < ways.size(); ++w) {
        on0.poison();
        CUDA_CHECK(cudaSetDevice(ways[w].driver));
        medians[w].push_back(tutorial::time_gpu([&] { copy(ways[w]); }, plan, streams[ways[w].driver]).median_ms);
        // Whatever was timed must have copied (the target was poisoned before).
        multi_gpu::synchronize_all(2);
        const double wrong = mismatches_now(on0.data(), on1.data());
        if (round == 0 || wrong != 0) verifier.exact(tutorial::format("timed: %s (on the GPU)", ways[w].name().c_str()), wrong);
      }
    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const bool nvlink18 = (std::strstr(prop.name, "H100") && !std::strstr(prop.name, "PCIe") && !std::strstr(prop.name, "NVL")) ||
                          std::strstr(prop.name, "H200");
    std::printf("\n### GPU 1 -> GPU 0, %.2f GiB per copy (median of %d rounds x %d runs, interleaved)\n\n",
                bytes / double(1ull << 30), int(cli.get_int("rounds")), runs);
    tutorial::Table table({"Copy", "Time", "GB/s", "spread GB/s", "% of copy engine, same driver",
                           "% of NVLink (450 GB/s each way)"});
    double engine[2] = {0, 0}, best[2] = {0, 0};
    for (size_t w = 0; w < ways.size(); ++w) {
      const Way& way = ways[w];
      const tutorial::Timing t = tutorial::summarize(medians[w]);
      const double gbs = tutorial::gigabytes_per_second(double(bytes), t.median_ms);
      if (way.kind == Way::kEngine) engine[way.driver] = gbs;
      else best[way.driver] = std::max(best[way.driver], gbs);
      table.add_row({way.name(), tutorial::format_time(t.median_ms), tutorial::format("%.0f", gbs),
                     tutorial::format("%.0f-%.0f", tutorial::gigabytes_per_second(double(bytes), t.max_ms),
                                      tutorial::gigabytes_per_second(double(bytes), t.min_ms)),
                     tutorial::format("%.2f%%", 100 * gbs / engine[way.driver]),
                     nvlink18 ? tutorial::format("%.1f%%", 100 * gbs / kNvlinkPerDirectionGBs) : "n/a"});
      verifier.figure(way.key(), std::round(gbs));
    }
    const tutorial::Timing both = tutorial::time_gpu(both_ways, plan, s0);
    const double both_gbs = tutorial::gigabytes_per_second(2.0 * bytes, both.median_ms);
    table.add_row({"copy engines, both ways at once (sum)", tutorial::format_time(both.median_ms),
                   tutorial::format("%.0f", both_gbs), "", tutorial::format("%.1f%% of 2x pull", 50 * both_gbs / engine[0]),
                   nvlink18 ? tutorial::format("%.1f%% of 2x", 50 * both_gbs / kNvlinkPerDirectionGBs) : "n/a"});
    // A tiny copy takes less time than the host needs to enqueue one: time them behind a gate.
    multi_gpu::BatchTimer gate({s0});
    const tutorial::Timing tiny = tutorial::summarize(
        gate.time([&] { CUDA_CHECK(cudaMemcpyPeerAsync(on0.data(), 0, on1.data(), 1, 4, s0)); }, 200));
    table.add_row({"copy engine, 4 bytes (latency)", tutorial::format_time(tiny.median_ms), "", "", "", ""});
    table.print();
    std::printf("\n");
    verifier.figure("memcpy_peer_gbs", std::round(engine[0]));
    verifier.figure("memcpy_peer_both_ways_gbs", std::round(both_gbs));
    verifier.figure("tiny_copy_us", std::round(tiny.median_ms * 1e4) / 10);
    if (nvlink18) verifier.figure("memcpy_peer_pct_of_nvlink", std::round(1000 * engine[0] / kNvlinkPerDirectionGBs) / 10);
    // Two decimals: at 94.99% the goal of 95% is missed, which one decimal would hide.
    verifier.figure("best_kernel_pct_of_memcpy_peer", std::round(10000 * best[0] / engine[0]) / 100);  // pulling
    verifier.figure("memcpy_peer_push_gbs", std::round(engine[1]));
    verifier.figure("best_push_pct_of_engine", std::round(10000 * best[1] / engine[1]) / 100);
    verifier.goal("best kernel pulling, share of the copy engine pulling", 100 * best[0] / engine[0], 95, "%");
    verifier.goal("best kernel pushing, share of the copy engine pushing", 100 * best[1] / engine[1], 95, "%");
  }
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaEventDestroy(go));
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaEventDestroy(done1));
  for (int d = 0; d < 2; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamDestroy(streams[d]));
  }
  return verifier.finish("08_peers");
}
