// Chapter 07: what the four runners share (command line, inputs, timing, the grid for
// grid-stride kernels).
// The lesson is in the step files; this is plumbing that is not part of any one step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <tutorial/check.cuh>
#include <tutorial/device.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <vector>

namespace lab {

/// The most elements the array runners accept. Their kernels index with int on purpose (fewer
/// instructions per element than 64-bit math): a grid-stride index i < n plus one stride of a
/// grid that fills the GPU once stays far below 2^31 when n <= 2^30.
constexpr int kMaxElements = 1 << 30;
static_assert(int64_t(kMaxElements) * 2 <= (int64_t(1) << 31), "int indices: i + stride must stay below 2^31");

/// The command line of the runners over one array of --n floats (elementwise, reduction, fusion).
struct ArrayOptions {
  int n = 0;
  int runs = 0;
  int step = 0;  // 0: every step
  bool check_only = false;
};

/// Parses and validates --n, --runs, --check-only and, where \p steps > 0, --step (1..steps):
/// before the GPU is touched, so bad usage exits with 2 even on a machine without one.
inline ArrayOptions parse_array_options(int argc, char** argv, const char* program,
                                        const char* description, int default_n, int steps = 0) {
  tutorial::Cli cli(program, description);
  cli.add_int("n", "number of elements", default_n, 1, kMaxElements);
  cli.add_int("runs", "timed runs per step (the median is reported)", 20, 1, 1000);
  if (steps > 0)
    cli.add_int("step", tutorial::format("run only this step (1-%d; 0: all)", steps), 0, 0, steps);
  cli.add_flag("check-only", "verify every step, time nothing");
  cli.parse_or_exit(argc, argv);
  ArrayOptions options;
  options.n = static_cast<int>(cli.get_int("n"));
  options.runs = static_cast<int>(cli.get_int("runs"));
  options.step = steps > 0 ? static_cast<int>(cli.get_int("step")) : 0;
  options.check_only = cli.get_flag("check-only");
  return options;
}

/// What every array runner does once its options are valid: find a usable GPU (exit 77 if
/// there is none) with room for \p arrays arrays of --n floats, plus the two arrays of the
/// device-to-device copy that is the limit when the run is timed.
inline void require_gpu_for(const ArrayOptions& options, double arrays, const char* what) {
  tutorial::require_gpu();
  const double copy = options.check_only ? 0 : 2;
  tutorial::require_device_memory(
      static_cast<size_t>((arrays + copy) * double(options.n) * sizeof(float)),
      tutorial::format("%s%s of --n floats", what, options.check_only ? "" : " and a copy").c_str());
}

// A counter-based generator (splitmix64): value i depends only on (seed, i), so filling a
// 2^28-element array is fast and every run sees the same inputs.
inline uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Whole numbers lo..hi (inclusive), stored as float: sums of a few of them are exact.
inline std::vector<float> small_integers(size_t n, int lo, int hi, uint64_t seed) {
  std::vector<float> v(n);
  const uint64_t span = static_cast<uint64_t>(hi - lo + 1);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(lo + static_cast<int>(mix(seed, i) % span));
  return v;
}

/// Uniform floats in [lo, hi).
inline std::vector<float> uniform(size_t n, float lo, float hi, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(mix(seed, i) >> 11) * 0x1.0p-53;  // [0, 1)
    v[i] = static_cast<float>(lo + (hi - lo) * u);
  }
  return v;
}

/// Enough blocks of \p block_size threads to fill every SM once, for a grid-stride kernel:
/// more would only queue behind the first wave, fewer would leave SMs idle.
/// The answer depends on the kernel, the block size and the device, so it is cached under all
/// three: launchers call this on every launch, and a later cudaSetDevice gets a fresh answer.
template <typename Kernel>
int resident_blocks(Kernel kernel, int block_size) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  static std::map<std::tuple<const void*, int, int>, int> cache;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), block_size, device);
  if (const auto hit = cache.find(key); hit != cache.end()) return hit->second;
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_size, 0));
  return cache[key] = sms * std::max(per_sm, 1);
}

/// Blocks for a grid-stride kernel over \p work items, \p per_block per block: never more than
/// fill the GPU once, never more than the work needs, at least one.
inline int grid_for(long long work, int per_block, int resident) {
  const long long needed = (work + per_block - 1) / per_block;
  return static_cast<int>(std::max(1LL, std::min<long long>(needed, resident)));
}

/// Times one step. The first run is a probe (and a warm-up): a step that takes 0.5 s a run
/// (naive SGEMM at 4096) gets a few runs, a fast one up to \p max_runs; the median is reported.
template <typename Launch>
tutorial::Timing time_step(Launch&& launch, int max_runs, double budget_ms = 1500.0) {
  tutorial::EventTimer probe;
  probe.start();
  launch();
  probe.stop();
  const double once = probe.elapsed_ms();
  tutorial::TimingPlan plan;
  plan.warmup = once > 20.0 ? 0 : 3;
  plan.runs = static_cast<int>(
      std::clamp(budget_ms / std::max(once, 1e-3), double(std::min(3, max_runs)), double(max_runs)));
  return tutorial::time_gpu(launch, plan);
}

/// "97.3%"
inline std::string percent(double part, double whole) {
  return tutorial::format("%.1f%%", 100.0 * part / whole);
}

}  // namespace lab
