// Chapter 08, part 1: one GPU reading and writing another's memory.
//
// Peer access is turned on only after a real test copy checks out. Then GPU 0 and GPU 1 copy
// to each other four ways, each verified exactly on a poisoned output and timed: the copy
// engine one way (cudaMemcpyPeerAsync), both ways at once, and a kernel of our own that reads
// the peer's memory (pull) or writes it (push). Limits: NVLink's datasheet figure per direction
// and the copy engine's rate, measured in the same run.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <tutorial/cli.hpp>
#include <tutorial/timer.cuh>

#include "batch_timer.cuh"
#include "multi_gpu.cuh"

namespace {

// H100 SXM: 18 NVLink 4 links of 25 GB/s each way (NVIDIA's datasheet: 900 GB/s both ways).
constexpr double kH100NvlinkPerDirectionGBs = 450.0;

// [excerpt:copy-kernel]
/// dst[i] = src[i] for n floats; either pointer may be on another GPU. Each thread issues
/// kLoads float4 loads before its first store, to keep more bytes in flight: a load from a
/// peer takes a microsecond or more across NVLink. (The table shows whether that helps.)
template <int kLoads>
__global__ void copy_kernel(const float* __restrict__ src, float* __restrict__ dst, size_t n) {
  const auto* src4 = reinterpret_cast<const float4*>(src);
  auto* dst4 = reinterpret_cast<float4*>(dst);
  const size_t n4 = n / 4;  // cudaMalloc'd arrays start 256-byte aligned
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t base = size_t(blockIdx.x) * blockDim.x * kLoads + threadIdx.x; base < n4;
       base += stride * kLoads) {
    float4 v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k)
      if (base + k * blockDim.x < n4) v[k] = src4[base + k * blockDim.x];
#pragma unroll
    for (int k = 0; k < kLoads; ++k)
      if (base + k * blockDim.x < n4) dst4[base + k * blockDim.x] = v[k];
  }
  const size_t tail = n4 * 4 + size_t(blockIdx.x) * blockDim.x + threadIdx.x;  // n % 4 floats
  if (tail < n) dst[tail] = src[tail];
}
// [/excerpt:copy-kernel]

template <int kLoads>
void launch_copy(const float* src, float* dst, size_t n, int max_blocks, cudaStream_t stream) {
  constexpr int kThreads = 512;
  const size_t per_block = size_t(kThreads) * kLoads * 4;
  const size_t blocks = std::min<size_t>(std::max<size_t>((n + per_block - 1) / per_block, 1), max_blocks);
  copy_kernel<kLoads><<<unsigned(blocks), kThreads, 0, stream>>>(src, dst, n);
  CUDA_CHECK_LAUNCH();
}

struct Way {
  const char* name;
  bool kernel;       // our kernel, launched on GPU 0
  bool pull;         // kernel reads GPU 1 (pull) or writes it (push)
  int loads;         // loads in flight per thread
};
const Way kWays[] = {
    {"cudaMemcpyPeerAsync GPU 1 -> GPU 0", false, false, 0},
    {"kernel on GPU 0, pull (reads GPU 1), 1 load/thread", true, true, 1},
    {"kernel on GPU 0, pull (reads GPU 1), 4 loads/thread", true, true, 4},
    {"kernel on GPU 0, push (writes GPU 1), 1 load/thread", true, false, 1},
    {"kernel on GPU 0, push (writes GPU 1), 4 loads/thread", true, false, 4},
    {"kernel on GPU 0, pull (reads GPU 1), 8 loads/thread", true, true, 8},
    {"kernel on GPU 0, push (writes GPU 1), 8 loads/thread", true, false, 8},
};

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_peers", "GPU-to-GPU copies: the copy engine and a kernel of our own, each "
                                "verified exactly and timed against NVLink's limit.");
  cli.add_int("n", "floats per copy (default: 1 GiB)", 1LL << 28, 1, 1LL << 31);
  cli.add_int("runs", "timed runs per copy (the median is reported)", 20, 1, 1000);
  cli.add_int("blocks-per-sm", "most blocks of 512 threads per SM for the copy kernel", 4, 1, 4);
  cli.add_flag("check-only", "verify every copy, time nothing");
  cli.parse_or_exit(argc, argv);
  const size_t n = size_t(cli.get_int("n"));
  const size_t bytes = n * sizeof(float);
  const int runs = int(cli.get_int("runs"));

  multi_gpu::force_nvls_off();
  const int gpus = multi_gpu::require_gpus();
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

  CUDA_CHECK(cudaSetDevice(0));
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int max_blocks = sms * int(cli.get_int("blocks-per-sm"));
  std::vector<float> pattern(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = multi_gpu::exact_input(1, i);
  multi_gpu::GpuArray<float> on0(0, n), on1(1, n), back0(0, n), back1(1, n);
  std::vector<cudaStream_t> streams = multi_gpu::make_streams(2);
  cudaStream_t s0 = streams[0], s1 = streams[1];

  // One copy of n floats the given way; the kernel always runs on GPU 0.
  auto copy = [&](const Way& way, const float* src, float* dst) {
    CUDA_CHECK(cudaSetDevice(0));
    if (!way.kernel) CUDA_CHECK(cudaMemcpyPeerAsync(dst, 0, src, 1, bytes, s0));
    else if (way.loads == 1) launch_copy<1>(src, dst, n, max_blocks, s0);
    else if (way.loads == 4) launch_copy<4>(src, dst, n, max_blocks, s0);
    else launch_copy<8>(src, dst, n, max_blocks, s0);
  };
  auto source = [&](const Way& way) -> multi_gpu::GpuArray<float>& { return way.kernel && !way.pull ? on0 : on1; };
  auto target = [&](const Way& way) -> multi_gpu::GpuArray<float>& { return way.kernel && !way.pull ? on1 : on0; };

  // Every way verified exactly: the source holds the pattern, the target starts poisoned.
  for (const Way& way : kWays) {
    source(way).upload(pattern);
    target(way).poison();
    copy(way, source(way).data(), target(way).data());
    CUDA_CHECK(cudaStreamSynchronize(s0));
    const std::vector<float> got = target(way).download();
    verifier.exact(tutorial::format("%s, n = %zu", way.name, n),
                   tutorial::max_abs_error(got.data(), pattern.data(), n));
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
    const std::vector<float> got = arr->download();
    verifier.exact(tutorial::format("both ways at once, into GPU %d", arr->device()),
                   tutorial::max_abs_error(got.data(), pattern.data(), n));
  }

  if (!cli.get_flag("check-only")) {
    const tutorial::TimingPlan plan{3, runs};
    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const bool h100_sxm = std::strstr(prop.name, "H100") && !std::strstr(prop.name, "PCIe");
    std::printf("\n### GPU 0 <-> GPU 1, %.2f GiB per copy (median of %d runs)\n\n", bytes / double(1ull << 30), runs);
    tutorial::Table table({"Copy", "Time", "GB/s", "% of copy engine", "% of NVLink (450 GB/s each way)"});
    double engine = 0, best_kernel = 0;
    for (const Way& way : kWays) {
      const tutorial::Timing t = tutorial::time_gpu([&] { copy(way, source(way).data(), target(way).data()); }, plan, s0);
      const double gbs = tutorial::gigabytes_per_second(double(bytes), t.median_ms);
      if (!way.kernel) engine = gbs;
      else best_kernel = std::max(best_kernel, gbs);
      table.add_row({way.name, tutorial::format_time(t.median_ms), tutorial::format("%.0f", gbs),
                     tutorial::format("%.1f%%", 100 * gbs / engine),
                     h100_sxm ? tutorial::format("%.1f%%", 100 * gbs / kH100NvlinkPerDirectionGBs) : "n/a"});
      verifier.figure(way.kernel ? tutorial::format("kernel_%s_x%d_gbs", way.pull ? "pull" : "push", way.loads)
                                 : std::string("memcpy_peer_gbs"),
                      std::round(gbs));
    }
    const tutorial::Timing both = tutorial::time_gpu(both_ways, plan, s0);
    const double both_gbs = tutorial::gigabytes_per_second(2.0 * bytes, both.median_ms);
    table.add_row({"cudaMemcpyPeerAsync both ways at once (sum)", tutorial::format_time(both.median_ms),
                   tutorial::format("%.0f", both_gbs), tutorial::format("%.1f%% of 2x", 50 * both_gbs / engine),
                   h100_sxm ? tutorial::format("%.1f%% of 2x", 50 * both_gbs / kH100NvlinkPerDirectionGBs) : "n/a"});
    // A tiny copy takes less time than the host needs to enqueue one: time them behind a gate.
    multi_gpu::BatchTimer gate({s0});
    const tutorial::Timing tiny = tutorial::summarize(
        gate.time([&] { CUDA_CHECK(cudaMemcpyPeerAsync(on0.data(), 0, on1.data(), 1, 4, s0)); }, 200));
    table.add_row({"cudaMemcpyPeerAsync of 4 bytes (latency)", tutorial::format_time(tiny.median_ms), "", "", ""});
    table.print();
    std::printf("\n");
    verifier.figure("memcpy_peer_both_ways_gbs", std::round(both_gbs));
    verifier.figure("tiny_copy_us", std::round(tiny.median_ms * 1e4) / 10);
    if (h100_sxm) verifier.figure("memcpy_peer_pct_of_nvlink", std::round(1000 * engine / kH100NvlinkPerDirectionGBs) / 10);
    verifier.figure("best_kernel_pct_of_memcpy_peer", std::round(1000 * best_kernel / engine) / 10);
    verifier.goal("best copy kernel's share of cudaMemcpyPeerAsync (one way)", 100 * best_kernel / engine, 95, "%");
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
