// Part 2: read-mostly advice for an input that the CPU and the GPU both read.
//
// Round after round, the GPU adds (y += x) and then the CPU reads all of x. Without
// advice the CPU's read migrates x back to host memory and the next kernel faults it
// in again: x ping-pongs across the link every round. With cudaMemAdviseSetReadMostly
// each processor keeps its own read-only copy of x and nothing moves after the start.
#include <cmath>
#include <cstdio>
#include <vector>

#include <tutorial/check.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

#include "memory_kinds.cuh"
#include "parts.cuh"

namespace chapter02 {
namespace {

// Medians over the rounds, and the worst error of every check.
struct RoundTimes {
  double kernel_ms, cpu_read_ms, max_error;
};

RoundTimes shared_input_rounds(size_t n, int rounds, bool read_mostly, int device) {
  ManagedBuffer<float> x(n, 1.0f), y(n, 2.0f);
  // [excerpt:read-mostly]
  if (read_mostly)  // the location argument is ignored for this advice
    advise(x.data(), x.bytes(), cudaMemAdviseSetReadMostly, device);
  // [/excerpt:read-mostly]
  prefetch(x.data(), x.bytes(), device);
  prefetch(y.data(), y.bytes(), device);
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<double> kernel_ms, cpu_read_ms;
  double worst = 0.0;
  tutorial::EventTimer kernel;
  for (int r = 0; r < rounds; ++r) {
    kernel.start();
    launch_add(n, x.data(), y.data());
    kernel.stop();
    CUDA_CHECK(cudaDeviceSynchronize());
    kernel_ms.push_back(kernel.elapsed_ms());
    const HostClock cpu_read;
    worst = worst_of(worst, tutorial::max_abs_error_from(x.data(), 1.0, n));  // x is still all 1
    cpu_read_ms.push_back(cpu_read.elapsed_ms());
  }
  // After `rounds` adds of 1 to 2, y is 2 + rounds: a small integer, exact in float.
  worst = worst_of(worst, tutorial::max_abs_error_from(y.data(), 2.0 + rounds, n));
  return {median_ms(kernel_ms), median_ms(cpu_read_ms), worst};
}

}  // namespace

void read_mostly_rounds(size_t n, int rounds, int device, tutorial::Verifier& verifier) {
  std::printf(
      "\n2. %d rounds of: the GPU adds (y += x), then the CPU reads all of x (%zu floats).\n"
      "Both arrays are prefetched to the GPU first. Medians over the rounds.\n",
      rounds, n);
  const RoundTimes plain = shared_input_rounds(n, rounds, false, device);
  verifier.exact("rounds without advice: x all 1, y = 2 + rounds", plain.max_error);
  const RoundTimes read_mostly = shared_input_rounds(n, rounds, true, device);
  verifier.exact("rounds with read-mostly x: x all 1, y = 2 + rounds", read_mostly.max_error);

  tutorial::Table table({"advice on x", "kernel per round", "CPU reads x per round"});
  table.add_row({"none: x migrates back and forth", tutorial::format_time(plain.kernel_ms),
                 tutorial::format_time(plain.cpu_read_ms)});
  table.add_row({"cudaMemAdviseSetReadMostly: a copy on each side",
                 tutorial::format_time(read_mostly.kernel_ms),
                 tutorial::format_time(read_mostly.cpu_read_ms)});
  std::printf("\n");
  table.print();
  verifier.figure("ping_pong_kernel_us", std::round(plain.kernel_ms * 1e3));
  verifier.figure("read_mostly_kernel_us", std::round(read_mostly.kernel_ms * 1e4) / 10);
}

}  // namespace chapter02
