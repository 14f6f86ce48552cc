/// \file multi_gpu.cuh
/// \brief What every chapter 08 program shares: counting the GPUs, turning peer access on
/// only after a real copy checks out, memory that knows its GPU, NVLink multicast off, and the
/// clock that bounds every wait.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/verify.hpp>

#include "watchdog.hpp"

namespace multi_gpu {

/// NVLink multicast (NVLS) can take a shared host's GPUs out of service: force it off for
/// NCCL, PyTorch's symmetric memory and NVSHMEM, in this process and every child it starts.
/// overwrite = 1: a value already in the environment must not turn it back on.
inline void force_nvls_off() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
}

// [excerpt:require-gpus]
/// --deadline-ms: the option every chapter 08 program takes (see watchdog.hpp).
inline void add_deadline_option(tutorial::Cli& cli) {
  cli.add_int("deadline-ms", "longest any wait may take before the job is aborted and the GPU or rank that did not "
              "arrive is named", kDefaultDeadlineMs, 100, 600000);
}

/// The number of GPUs this machine has, all of which the program uses. Exits 77 (skipped)
/// without a GPU, or with one GPU, since everything here needs two.
inline int require_gpus() {
  tutorial::require_gpu(false);  // a driver, a GPU, and code for it (exits 77 otherwise)
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::fprintf(stderr, "This program needs two GPUs or more; this machine has %d.\n"
                         "Skipping (exit code %d).\n", count, tutorial::kExitNoGpu);
    std::exit(tutorial::kExitNoGpu);
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    std::printf("GPU %d: %s (compute capability %d.%d, %d SMs)\n", d, prop.name, prop.major,
                prop.minor, prop.multiProcessorCount);
  }
  return count;
}
// [/excerpt:require-gpus]

/// An array of T in one GPU's memory, freed on that GPU.
template <typename T>
class GpuArray {
 public:
  GpuArray() = default;
  GpuArray(int device, size_t count) : device_(device), count_(count) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaMalloc(&data_, bytes() ? bytes() : 1));
  }
  ~GpuArray() {
    if (data_ && cudaSetDevice(device_) == cudaSuccess) cudaFree(data_);
  }
  GpuArray(GpuArray&& other) noexcept { swap(other); }
  GpuArray& operator=(GpuArray&& other) noexcept {
    swap(other);
    return *this;
  }
  GpuArray(const GpuArray&) = delete;
  GpuArray& operator=(const GpuArray&) = delete;

  T* data() const { return data_; }
  int device() const { return device_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  /// Copies \p host in and waits for it. The wait matters: this chapter's streams are
  /// non-blocking, so they do not wait for work on the default stream, and cudaMemcpy from
  /// pageable memory (like cudaMemset) may return before the GPU has finished.
  void upload(const std::vector<T>& host) {
    auto wait = waiting("a copy to the GPU");
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    auto wait = waiting("a copy from the GPU (it waits for the GPU's earlier work)");
    std::vector<T> host(count_);
    CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  /// All bytes 0xFF: a NaN for float, so an element nobody wrote cannot pass a check.
  /// Waits for it, as upload() does.
  void poison() {
    auto wait = waiting("poisoning a buffer");
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaMemset(data_, 0xFF, bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void swap(GpuArray& other) {
    std::swap(device_, other.device_);
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }
  int device_ = 0;
  T* data_ = nullptr;
  size_t count_ = 0;
};

/// The message sizes an all-reduce program runs, as options: --min-bytes and --max-bytes (sizes
/// go up by 4x from the first, and the second is always the last), or --n for one count.
inline void add_message_size_options(tutorial::Cli& cli) {
  cli.add_int("min-bytes", "smallest message, bytes (sizes go up by 4x)", 4 << 10, 4, 1LL << 32);
  cli.add_int("max-bytes", "largest message, bytes (always the last size)", 1LL << 30, 4, 1LL << 32);
  cli.add_int("n", "one message of exactly this many floats instead (e.g. an odd count)", 0, 0, 1LL << 30);
}

/// Floats per message, from add_message_size_options' options; exits 2 (usage) on a range that
/// runs backwards or a size that is not a whole number of floats.
inline std::vector<size_t> message_counts(const tutorial::Cli& cli) {
  const long long min_bytes = cli.get_int("min-bytes"), max_bytes = cli.get_int("max-bytes");
  const char* wrong = min_bytes > max_bytes ? "--min-bytes must not exceed --max-bytes"
                      : min_bytes % 4 || max_bytes % 4
                          ? "--min-bytes and --max-bytes must be a whole number of floats (a multiple of 4)"
                          : nullptr;
  if (wrong) {
    std::fputs(cli.error_line(wrong).c_str(), stderr);
    std::exit(tutorial::kExitUsage);
  }
  if (cli.get_int("n") > 0) return {size_t(cli.get_int("n"))};
  std::vector<size_t> counts;
  for (long long b = min_bytes; b <= max_bytes; b *= 4) counts.push_back(size_t(b) / 4);
  if (counts.back() != size_t(max_bytes) / 4) counts.push_back(size_t(max_bytes) / 4);
  return counts;
}

/// One stream per GPU, created on that GPU.
inline std::vector<cudaStream_t> make_streams(int gpus) {
  std::vector<cudaStream_t> streams(gpus);
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
  }
  return streams;
}

inline void synchronize_all(int gpus) {
  auto wait = waiting("cudaDeviceSynchronize on every GPU");
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
}

// [excerpt:trust-peer]
/// Copies a known pattern from GPU src to GPU dst with cudaMemcpyPeer and checks every
/// byte. The driver can report peer access while the copies come out wrong (an IOMMU or
/// PCIe ACS between the GPUs), so a pair is trusted only when this passes.
inline bool peer_copy_is_exact(int src, int dst, size_t count = 1 << 20) {
  std::vector<unsigned> pattern(count);
  for (size_t i = 0; i < count; ++i) pattern[i] = unsigned(i * 2654435761u) ^ unsigned(src << 24);
  // [excerpt:test-copy]
  GpuArray<unsigned> from(src, count), to(dst, count);
  from.upload(pattern);
  CUDA_CHECK(cudaMemset(to.data(), 0, to.bytes()));
  CUDA_CHECK(cudaMemcpyPeer(to.data(), dst, from.data(), src, from.bytes()));
  return to.download() == pattern;
  // [/excerpt:test-copy]
}

/// Turns on direct access from every GPU to every other, after checking each pair can
/// (cudaDeviceCanAccessPeer) and copies exactly. Exits 77 if a pair cannot: the chapter's
/// kernels read and write peer memory directly.
inline void enable_all_peers(int gpus, tutorial::Verifier* verifier = nullptr) {
  for (int a = 0; a < gpus; ++a)
    for (int b = 0; b < gpus; ++b) {
      if (a == b) continue;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) {
        std::fprintf(stderr, "GPU %d cannot access GPU %d's memory directly (no NVLink or PCIe "
                             "peer path); this chapter needs it. Skipping (exit code 77).\n", a, b);
        std::exit(tutorial::kExitNoGpu);
      }
      CUDA_CHECK(cudaSetDevice(a));
      const cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);  // once per pair and process
      if (err == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CUDA_CHECK(err);
    }
  for (int a = 0; a < gpus; ++a)
    for (int b = 0; b < gpus; ++b) {
      if (a == b) continue;
      const bool exact = peer_copy_is_exact(a, b);
      if (verifier) verifier->expect(tutorial::format("test copy GPU %d -> GPU %d is exact", a, b), exact);
      if (!exact) {
        std::fprintf(stderr, "GPU %d -> GPU %d: the driver allows peer access, but a test copy came "
                             "out wrong (IOMMU or PCIe ACS?). Not using peer access.\n", a, b);
        std::exit(tutorial::kExitFailure);
      }
    }
}
// [/excerpt:trust-peer]

/// The GPU's nanosecond clock, for waits that give up after a time limit.
__device__ inline unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Waits \p ns nanoseconds on the GPU, asleep between looks at the clock.
__device__ inline void sleep_ns(unsigned long long ns) {
  const unsigned long long begin = globaltimer_ns();
  while (globaltimer_ns() - begin < ns) __nanosleep(1000);
}

/// Keeps a GPU busy for \p ns nanoseconds: a GPU that falls behind its peers (tests only). It tests
/// ns first because CUDA 11.8's ptxas crashes on sm_90 with -lineinfo when a kernel's whole body is
/// the inlined loop of sleep_ns.
__global__ void stall_kernel(unsigned long long ns) {
  if (ns > 0) sleep_ns(ns);
}

/// "4KiB", "1MiB", "1GiB": a message size as the tables and figure names write it.
inline std::string size_label(size_t bytes) {
  if (bytes >= (1u << 30) && bytes % (1u << 30) == 0) return tutorial::format("%zuGiB", bytes >> 30);
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return tutorial::format("%zuMiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return tutorial::format("%zuKiB", bytes >> 10);
  return tutorial::format("%zuB", bytes);
}

/// Small whole numbers for GPU \p rank's element i: any sum of up to 2^20 of them is exact in
/// float, so an all-reduce's answer is known exactly.
inline float exact_input(int rank, size_t i) { return float(int((i * 7 + rank * 3) % 17) - 8); }

}  // namespace multi_gpu
