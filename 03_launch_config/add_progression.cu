// Chapter 03, part 1: from one thread to the whole GPU.
//
// z = x + y with x = 1 and y = 2 (so every z must be exactly 3), on data that is
// already in device memory: the time is the kernel's alone, with no page faults
// or copies in it. The kernels of add_kernels.cuh are verified and timed:
//   - at --n elements (default 1M): time and speedup over chapter 01's kernel;
//   - at --big-n elements (default 2^28, 3 GiB moved per call): bandwidth as a
//     share of a device-to-device cudaMemcpy measured in the same run, with the
//     grid-stride kernels at several grid sizes, because the best grid is
//     something to measure, not to guess.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

#include "add_kernels.cuh"
#include "gpu_fill_check.cuh"
#include "share_of_copy.hpp"

namespace {

using AddKernel = void (*)(size_t, const float*, const float*, float*);

/// One way to launch an add kernel: the kernel, its <<<grid, block>>>, and why.
struct Variant {
  std::string name;
  AddKernel kernel;
  size_t grid;
  unsigned block;
  std::string note;
  std::string launch() const { return tutorial::format("<<<%zu, %u>>>", grid, block); }
};

/// The three arrays of one problem size, x = 1 and y = 2 filled on the GPU.
struct Arrays {
  explicit Arrays(size_t n) : n(n), x(n), y(n), z(n) {
    chapter03::fill_on_gpu(x.data(), n, 1.0f);
    chapter03::fill_on_gpu(y.data(), n, 2.0f);
  }
  size_t n;
  tutorial::DeviceBuffer<float> x, y, z;
};

/// Poisons z, runs \p v once and checks z on the GPU (a printed `Max error:` line),
/// then times it: \p plan.warmup untimed runs and the median of \p plan.runs.
tutorial::Timing verify_and_time(const Variant& v, Arrays& a, tutorial::Verifier& verifier,
                                 tutorial::TimingPlan plan) {
  auto launch = [&] {
    v.kernel<<<static_cast<unsigned>(v.grid), v.block>>>(a.n, a.x.data(), a.y.data(), a.z.data());
    CUDA_CHECK_LAUNCH();
  };
  a.z.poison();
  launch();
  verifier.exact(v.name + " " + v.launch() + ", every z = 3",
                 chapter03::max_abs_error_on_gpu(a.z.data(), a.n, 3.0f));
  return tutorial::time_gpu(launch, plan);
}

/// Chapter 01's kernel adds x into y in place, so every call changes y. It gets
/// its own y = 2: one call on that fresh data must give every y = 3; after the
/// timed calls, every y must be exactly 2 + the number of calls (small whole
/// numbers, exact in float), which also shows that every timed call ran.
tutorial::Timing verify_and_time_chapter01(const Arrays& a, tutorial::Verifier& verifier,
                                           tutorial::TimingPlan plan) {
  tutorial::DeviceBuffer<float> y(a.n);
  chapter03::fill_on_gpu(y.data(), a.n, 2.0f);
  auto launch = [&] {
    add_chapter01<<<1, 1>>>(static_cast<int>(a.n), a.x.data(), y.data());
    CUDA_CHECK_LAUNCH();
  };
  launch();
  verifier.exact("add_chapter01 <<<1, 1>>> on fresh data, every y = 3",
                 chapter03::max_abs_error_on_gpu(y.data(), a.n, 3.0f));
  const tutorial::Timing t = tutorial::time_gpu(launch, plan);
  const int calls = 1 + plan.warmup + plan.runs;
  verifier.exact(tutorial::format("add_chapter01 after all %d calls, every y = %d", calls, 2 + calls),
                 chapter03::max_abs_error_on_gpu(y.data(), a.n, 2.0f + calls));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("03_add_progression",
                    "x + y from one GPU thread to the whole GPU: six kernels, verified and timed.");
  cli.add_int("n", "elements for the progression table (<<<1, 1>>> takes ~90 ms per million)", 1 << 20,
              1, 1 << 24);  // at most 2^24: chapter 01's kernel takes an int
  cli.add_int("big-n", "elements for the bandwidth table (3 arrays of floats)", 1 << 28, 1, 1LL << 30);
  cli.add_int("block", "threads per block for every kernel but <<<1, 1>>>", 256, 1, 1024);
  cli.add_int("runs", "timed runs per kernel; the median is reported", 20, 1, 1000);
  cli.parse_or_exit(argc, argv);
  const size_t n = cli.get_int("n");
  const size_t big_n = cli.get_int("big-n");
  const unsigned block = static_cast<unsigned>(cli.get_int("block"));
  const tutorial::TimingPlan plan{3, static_cast<int>(cli.get_int("runs"))};

  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  // The limit is read from the device, not assumed (every current GPU says 1024).
  int max_block = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_block, cudaDevAttrMaxThreadsPerBlock, gpu.id));
  if (block > static_cast<unsigned>(max_block)) {
    std::fprintf(stderr, "--block %u is more than this GPU's %d threads per block.\n", block, max_block);
    return tutorial::kExitUsage;
  }
  tutorial::require_device_memory(3 * std::max(n, big_n) * sizeof(float), "three arrays of floats");

  // How many blocks of `block` threads one SM can hold at once: a grid of
  // sm_count * resident blocks is exactly one "wave" that fills the GPU.
  auto one_wave = [&](AddKernel kernel) {
    int resident = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, block, 0));
    return static_cast<size_t>(gpu.sm_count) * resident;
  };
  tutorial::Verifier verifier;

  // ---- Part 1: the progression ------------------------------------------------
  std::printf("\nPart 1: x + y on %zu floats in device memory (x = 1, y = 2)\n", n);
  // The one-thread kernels take ~50-90 ms per million elements: a few runs are plenty.
  const tutorial::TimingPlan slow_plan{1, std::min(plan.runs, 5)};
  double chapter01_ms = 0, one_thread_ms = 0, one_block_ms = 0;
  {
    Arrays a(n);
    tutorial::Table table(
        {"kernel", "launch", "what", "runs", "time (median)", "speedup over chapter 01's <<<1, 1>>>"});
    const tutorial::Timing base = verify_and_time_chapter01(a, verifier, slow_plan);
    chapter01_ms = base.median_ms;
    table.add_row({"add_chapter01", "<<<1, 1>>>", "chapter 01's kernel: int index, y = x + y in place",
                   std::to_string(base.runs), tutorial::format_time(base.median_ms), "1x"});

    const std::vector<Variant> progression = {
        {"add_one_thread", add_one_thread, 1, 1, "one thread, size_t index, z = x + y"},
        {"add_one_block", add_one_block, 1, block, "one block: one SM"},
        {"add_one_per_element", add_one_per_element, chapter03::blocks_to_cover(n, block), block,
         "one thread per element"},
        {"add_grid_stride", add_grid_stride, one_wave(add_grid_stride), block,
         "grid-stride, one wave of blocks"},
        {"add_grid_stride_float4", add_grid_stride_float4, one_wave(add_grid_stride_float4), block,
         "grid-stride, float4, one wave of blocks"},
    };
    double best_speedup = 0;
    for (const Variant& v : progression) {
      const bool slow = v.kernel == add_one_thread;
      const tutorial::Timing t = verify_and_time(v, a, verifier, slow ? slow_plan : plan);
      if (v.kernel == add_one_thread) one_thread_ms = t.median_ms;
      if (v.kernel == add_one_block) one_block_ms = t.median_ms;
      const double speedup = chapter01_ms / t.median_ms;
      best_speedup = std::max(best_speedup, speedup);
      table.add_row({v.name, v.launch(), v.note, std::to_string(t.runs),
                     tutorial::format_time(t.median_ms), tutorial::format("%.0fx", speedup)});
    }
    std::printf("\n");
    table.print();
    std::printf("\n");
    if (n == 1 << 20)  // the course's goal is stated for 1M elements
      verifier.goal("speed-up of the best kernel over chapter 01's add<<<1, 1>>>", best_speedup, 10000,
                    "x");
    verifier.figure("chapter01_ms", std::round(chapter01_ms * 10) / 10);
    verifier.figure("one_thread_ms", std::round(one_thread_ms * 10) / 10);
    verifier.figure("best_speedup", std::round(best_speedup));
  }

  // ---- Part 2: bandwidth at a size that fills the chip ------------------------
  const size_t bytes_per_call = 3 * big_n * sizeof(float);  // 2 reads + 1 write per element
  std::printf(
      "\nPart 2: z = x + y on %zu floats: %.2f GiB moved per call (2 reads + 1 write per element)\n",
      big_n, bytes_per_call / double(1ull << 30));
  std::printf(
      "Left out: add_chapter01, add_one_thread and add_one_block, which at this size would take "
      "about %s, %s and %s per call (part 1's times, scaled).\n",
      tutorial::format_time(chapter01_ms * big_n / n).c_str(),
      tutorial::format_time(one_thread_ms * big_n / n).c_str(),
      tutorial::format_time(one_block_ms * big_n / n).c_str());

  // The limit to compare with, measured now on this GPU: a device-to-device copy
  // of one array, counting bytes read plus bytes written like the kernels do.
  const double copy_gbs = tutorial::copy_bandwidth_gbs(big_n * sizeof(float), plan);
  std::printf("Device-to-device cudaMemcpy of %.2f GiB: %.0f GB/s (read + write)\n",
              big_n * sizeof(float) / double(1ull << 30), copy_gbs);
  // A share of the copy's bandwidth is shown only where both sides move far more than the
  // L2 cache holds (share_of_copy.hpp); the copy moves the fewer bytes (one read, one write).
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, gpu.id));
  const double compared_bytes = 2.0 * big_n * sizeof(float);
  const bool measurable = chapter03::share_is_measurable(compared_bytes, l2_bytes);

  // What the runtime suggests for this kernel: the block size that reaches the
  // highest occupancy, and the smallest grid that fills every SM with it.
  int suggested_grid = 0, suggested_block = 0;
  CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&suggested_grid, &suggested_block, add_grid_stride));

  std::vector<Variant> variants = {{"add_one_per_element", add_one_per_element,
                                    chapter03::blocks_to_cover(big_n, block), block, "one thread per element"}};
  for (int per_sm : {1, 2, 4, 8, 16, 32})
    variants.push_back({"add_grid_stride", add_grid_stride, static_cast<size_t>(gpu.sm_count) * per_sm,
                        block, tutorial::format("grid-stride, %d block%s per SM", per_sm,
                                                per_sm == 1 ? "" : "s")});
  variants.push_back({"add_grid_stride", add_grid_stride, static_cast<size_t>(suggested_grid),
                      static_cast<unsigned>(suggested_block),
                      "grid-stride, cudaOccupancyMaxPotentialBlockSize"});
  // The same grid-stride loop moving 16 bytes per load: at 2 blocks per SM it has
  // as many bytes in flight as the scalar loop at 8.
  for (int per_sm : {2, 8})
    variants.push_back({"add_grid_stride_float4", add_grid_stride_float4,
                        static_cast<size_t>(gpu.sm_count) * per_sm, block,
                        tutorial::format("grid-stride, float4, %d blocks per SM", per_sm)});

  Arrays a(big_n);
  tutorial::Table table({"kernel", "launch", "what", "time (median)", "GB/s", "% of copy"});
  double best_gbs = 0;
  std::string best;
  for (const Variant& v : variants) {
    const tutorial::Timing t = verify_and_time(v, a, verifier, plan);
    const double gbs = tutorial::gigabytes_per_second(bytes_per_call, t.median_ms);
    if (gbs > best_gbs) {
      best_gbs = gbs;
      best = v.name + " " + v.launch();
    }
    table.add_row({v.name, v.launch(), v.note, tutorial::format_time(t.median_ms),
                   tutorial::format("%.0f", gbs),
                   chapter03::share_of_copy(gbs, copy_gbs, compared_bytes, l2_bytes)});
  }
  std::printf("\n");
  table.print();
  const double best_percent = 100 * best_gbs / copy_gbs;
  if (!measurable) {
    std::printf("\nBest: %s; its share of the copy bandwidth: n/a (too small to measure: %s).\n",
                best.c_str(), chapter03::too_small_reason(compared_bytes, l2_bytes).c_str());
    return verifier.finish("03_add_progression");
  }
  std::printf("\nBest: %s at %.1f%% of the copy bandwidth.\n", best.c_str(), best_percent);
  if (big_n == 1 << 28)  // the course's goal is stated for 2^28 elements
    verifier.goal("best share of the copy bandwidth", best_percent, 90, "%");
  verifier.figure("copy_gbs", std::round(copy_gbs));
  verifier.figure("best_pct_of_copy", std::round(best_percent * 10) / 10);
  return verifier.finish("03_add_progression");
}
