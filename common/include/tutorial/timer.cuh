/// \file timer.cuh
/// \brief Timing GPU work with CUDA events: warm-up, many runs, the median.
///
/// Kernel launches return before the GPU has done the work, so a CPU clock around
/// a launch measures the launch, not the kernel. CUDA events are recorded into the
/// stream and time-stamped by the GPU when it reaches them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "buffer.cuh"
#include "check.cuh"

namespace tutorial {

/// A pair of CUDA events around a region of one stream.
class EventTimer {
 public:
  EventTimer() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start(cudaStream_t stream = nullptr) { CUDA_CHECK(cudaEventRecord(start_, stream)); }
  void stop(cudaStream_t stream = nullptr) { CUDA_CHECK(cudaEventRecord(stop_, stream)); }
  /// Waits for the stop event, then returns the GPU time between the two events.
  float elapsed_ms() const {
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

/// Summary of repeated timings, in milliseconds.
struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int runs = 0;
};

/// Median, minimum and maximum of \p samples (which must not be empty).
inline Timing summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  Timing t;
  t.runs = static_cast<int>(n);
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  t.median_ms = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return t;
}

/// How many untimed and timed runs time_gpu() makes.
struct TimingPlan {
  int warmup = 3;  ///< untimed runs first: module load, caches, clocks
  int runs = 20;   ///< timed runs; the median of these is reported
};

/// The timed runs of time_gpu(), each run's milliseconds, for a caller that keeps every run or
/// must act while they run: \p started is called just before the first timed run is queued,
/// \p finished once the last has ended (chapter 07's tensor-core race reads the GPU's power
/// between the two).
template <typename Launch, typename Started, typename Finished>
std::vector<double> time_gpu_runs(Launch&& launch, TimingPlan plan, cudaStream_t stream,
                                  Started&& started, Finished&& finished) {
  for (int i = 0; i < plan.warmup; ++i) launch();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  // Event i marks the end of run i and the start of run i + 1.
  std::vector<cudaEvent_t> marks(plan.runs + 1);
  for (cudaEvent_t& mark : marks) CUDA_CHECK(cudaEventCreate(&mark));
  started();
  CUDA_CHECK(cudaEventRecord(marks[0], stream));
  for (int i = 0; i < plan.runs; ++i) {
    launch();
    CUDA_CHECK(cudaEventRecord(marks[i + 1], stream));
  }
  CUDA_CHECK(cudaEventSynchronize(marks.back()));
  finished();
  std::vector<double> samples(plan.runs);
  for (int i = 0; i < plan.runs; ++i) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, marks[i], marks[i + 1]));
    samples[i] = ms;
  }
  for (cudaEvent_t mark : marks) CUDA_CHECK(cudaEventDestroy(mark));
  return samples;
}

/// Times \p launch (a callable that enqueues work on \p stream and checks its launch):
/// warm-up runs first, then every timed run between events recorded back to back, and
/// one synchronization at the end.
///
/// Why not wait after each run: then the host's time to enqueue the next launch (a few
/// microseconds) would fall between its events, and a microsecond kernel would look
/// slower than it is. With all events queued ahead, the GPU runs the launches back to
/// back and each event pair holds one run (chapter 05 measures the difference).
template <typename Launch>
Timing time_gpu(Launch&& launch, TimingPlan plan = {}, cudaStream_t stream = nullptr) {
  return summarize(time_gpu_runs(launch, plan, stream, [] {}, [] {}));
}

/// GB/s for \p bytes moved in \p ms milliseconds (1 GB = 1e9 bytes).
inline double gigabytes_per_second(double bytes, double ms) { return bytes / (ms * 1e6); }

/// The practical memory-bandwidth limit: a device-to-device cudaMemcpy of \p bytes,
/// counting bytes read plus bytes written. Measure it in the same run as the kernel
/// you compare with it, so clocks and the card are the same.
inline double copy_bandwidth_gbs(size_t bytes, TimingPlan plan = {}) {
  DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
  const Timing t = time_gpu(
      [&] { CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice)); },
      plan);
  return gigabytes_per_second(2.0 * bytes, t.median_ms);
}

}  // namespace tutorial
