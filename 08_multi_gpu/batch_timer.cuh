/// \file batch_timer.cuh
/// \brief Timing work that spans several GPUs, one run at a time, without the host in the way.
///
/// A small all-reduce takes a few microseconds on the GPUs, about what the host needs to
/// enqueue it on every GPU. Timed back to back, the GPUs would wait for the host and the
/// median would be the host's speed. So every GPU first runs a gate kernel that waits for a
/// flag in host memory; the host enqueues the whole batch behind it, then opens the gate.
/// Events on GPU 0's stream between runs time each one (a collective ends on GPU 0 only
/// when every GPU has contributed). The wait is bounded, as every wait in this chapter.
#pragma once

#include <cuda/atomic>

#include <string>
#include <vector>

#include <tutorial/timer.cuh>

#include "multi_gpu.cuh"

namespace multi_gpu {

/// Spins until *gate != 0, or for at most timeout_ns (then sets *timed_out).
__global__ void gate_kernel(int* gate, int* timed_out, unsigned long long timeout_ns) {
  cuda::atomic_ref<int, cuda::thread_scope_system> flag(*gate);
  const unsigned long long begin = globaltimer_ns();
  while (flag.load(cuda::memory_order_acquire) == 0)
    if (globaltimer_ns() - begin > timeout_ns) {
      *timed_out = 1;
      return;
    }
}

/// The time between each event and the next, in milliseconds (runs + 1 events give runs
/// times); destroys the events.
inline std::vector<double> intervals_ms(const std::vector<cudaEvent_t>& marks) {
  std::vector<double> ms(marks.size() - 1);
  for (size_t i = 0; i + 1 < marks.size(); ++i) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, marks[i], marks[i + 1]));
    ms[i] = t;
  }
  for (cudaEvent_t mark : marks) CUDA_CHECK(cudaEventDestroy(mark));
  return ms;
}

/// Which GPUs reached a point of their stream: an event recorded there on each GPU. A GPU whose
/// event is still pending never got there (its stream is stuck behind earlier work): the one a
/// collective waits for. Queried from the watchdog's thread (the runtime is thread-safe).
class Arrivals {
 public:
  explicit Arrivals(int gpus) : events_(gpus) {
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaEventCreateWithFlags(&events_[d], cudaEventDisableTiming));
    }
  }
  ~Arrivals() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  Arrivals(const Arrivals&) = delete;
  Arrivals& operator=(const Arrivals&) = delete;
  void mark(const std::vector<cudaStream_t>& streams) {
    for (size_t d = 0; d < events_.size(); ++d) {
      CUDA_CHECK(cudaSetDevice(int(d)));
      CUDA_CHECK(cudaEventRecord(events_[d], streams[d]));
    }
  }
  /// "GPU 1" (or "GPUs 1, 3") for those that have not reached the last mark; empty if all have.
  std::string missing() const {
    std::string gpus;
    int count = 0;
    for (size_t d = 0; d < events_.size(); ++d)
      if (cudaEventQuery(events_[d]) == cudaErrorNotReady) {
        gpus += (count++ ? ", " : "") + std::to_string(d);
      }
    (void)cudaGetLastError();
    return count ? (count > 1 ? "GPUs " : "GPU ") + gpus : "";
  }

 private:
  std::vector<cudaEvent_t> events_;
};

/// Times \p run (which enqueues one run on every GPU's stream) \p runs times behind a gate,
/// after \p warmup untimed runs. Returns the per-run times in milliseconds. A run that is a CUDA
/// graph replay (hundreds of kernels) goes ungated (gated = false): the queue behind a closed gate
/// holds only so much work, and once it is full the host blocks in the launch and never opens the
/// gate; a replay takes the GPUs far longer than the host needs to launch the next one, so the GPUs
/// do not wait for the host anyway.
class BatchTimer {
 public:
  explicit BatchTimer(std::vector<cudaStream_t> streams, Arrivals* arrivals = nullptr)
      : streams_(std::move(streams)), arrivals_(arrivals) {
    CUDA_CHECK(cudaHostAlloc(&host_, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  }
  ~BatchTimer() { cudaFreeHost(host_); }
  BatchTimer(const BatchTimer&) = delete;
  BatchTimer& operator=(const BatchTimer&) = delete;

  template <typename Run>
  std::vector<double> time(Run&& run, int runs, int warmup = 2, bool gated = true) {
    const int gpus = int(streams_.size());
    if (arrivals_) arrivals_->mark(streams_);  // a GPU still busy with earlier work shows here
    for (int i = 0; i < warmup; ++i) run();
    synchronize_all(gpus);
    host_[0] = 0;  // gate closed
    host_[1] = 0;  // no timeout
    for (int d = 0; d < gpus && gated; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      gate_kernel<<<1, 1, 0, streams_[d]>>>(host_, host_ + 1, 10'000'000'000ull);
      CUDA_CHECK_LAUNCH();
    }
    if (arrivals_) arrivals_->mark(streams_);  // the batch's start, for the watchdog's message
    CUDA_CHECK(cudaSetDevice(0));
    std::vector<cudaEvent_t> marks(runs + 1);
    for (cudaEvent_t& mark : marks) CUDA_CHECK(cudaEventCreate(&mark));
    CUDA_CHECK(cudaEventRecord(marks[0], streams_[0]));
    for (int i = 0; i < runs; ++i) {
      run();
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(cudaEventRecord(marks[i + 1], streams_[0]));
    }
    cuda::atomic_ref<int, cuda::thread_scope_system>(host_[0]).store(1, cuda::memory_order_release);
    synchronize_all(gpus);
    if (host_[1]) {
      std::fprintf(stderr, "A gate waited 10 s for the host: enqueueing the batch blocked.\n");
      std::exit(tutorial::kExitFailure);
    }
    return intervals_ms(marks);
  }

 private:
  std::vector<cudaStream_t> streams_;
  Arrivals* arrivals_;
  int* host_ = nullptr;
};

}  // namespace multi_gpu
