// Chapter 07: what the four runners share (inputs, timing, the grid for grid-stride kernels).
// The lesson is in the step files; this is plumbing that is not part of any one step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tutorial/check.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <vector>

namespace lab {

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
template <typename Kernel>
int resident_blocks(Kernel kernel, int block_size) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_size, 0));
  return sms * std::max(per_sm, 1);
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
