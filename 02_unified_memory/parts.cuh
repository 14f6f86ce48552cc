// The three parts of chapter 02, as main() runs them, and the few things they share.
//   Part 1, add_five_ways.cu: the same add five ways (managed memory three ways,
//           explicit copies from pageable and from pinned memory), each checked and timed.
//   Part 2, read_mostly.cu:   read-mostly advice for an input that the CPU and the GPU both read.
//   Part 3, bandwidth.cu:     host<->GPU bandwidth of cudaMemcpy and of cudaMemPrefetchAsync.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <vector>

#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

namespace chapter02 {

/// Part 1: prints the add's five ways, one check each, and the table of their times.
/// Without concurrent managed access (no GPU page faults) the prefetched and advised
/// ways are left out.
void add_five_ways(size_t n, int runs, int device, bool concurrent_access,
                   tutorial::Verifier& verifier);

/// Part 2: `rounds` rounds of a GPU add and a CPU read of its input, without and with
/// read-mostly advice. Needs concurrent managed access.
void read_mostly_rounds(size_t n, int rounds, int device, tutorial::Verifier& verifier);

/// Part 3: GB/s of moving `count` floats each way by cudaMemcpy (pageable and pinned)
/// and, with concurrent managed access, by cudaMemPrefetchAsync; then the same bytes
/// copied within GPU memory, for scale.
void host_gpu_bandwidth(size_t count, int runs, int device, bool concurrent_access,
                        tutorial::Verifier& verifier);

/// y = x + y on n floats, one thread per element (defined in add_five_ways.cu).
void launch_add(size_t n, const float* x, float* y);

/// Host wall-clock time, for what CUDA events cannot see: when the CPU reads managed
/// memory, its page faults and the migrations they trigger happen outside any stream.
class HostClock {
 public:
  // User-provided: without it nvcc 11.8 warns (#811-D) at `const HostClock total;`.
  HostClock() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// The worse of two errors; NaN is worse than any number.
inline double worst_of(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
}

/// Median of the samples in milliseconds, or NaN if there are none.
inline double median_ms(const std::vector<double>& samples) {
  return samples.empty() ? NAN : tutorial::summarize(samples).median_ms;
}

}  // namespace chapter02
