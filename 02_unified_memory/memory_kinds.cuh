// Chapter 02's tools: owners for the two kinds of memory the shared library does
// not cover (managed and pinned), and the two calls that place managed memory
// (prefetch and advice), written once for CUDA 12 and CUDA 13.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <tutorial/check.cuh>

namespace chapter02 {

/// An array in managed (unified) memory: one pointer valid on the CPU and the GPU.
/// The constructor writes every element on the CPU, so the pages start in host memory.
template <typename T>
class ManagedBuffer {
 public:
  ManagedBuffer(size_t count, T value) : count_(count) {
    CUDA_CHECK(cudaMallocManaged(&data_, bytes()));
    for (size_t i = 0; i < count_; ++i) data_[i] = value;
  }
  ~ManagedBuffer() { cudaFree(data_); }  // no check: a destructor must not exit
  ManagedBuffer(const ManagedBuffer&) = delete;
  ManagedBuffer& operator=(const ManagedBuffer&) = delete;

  T* data() const { return data_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

/// An array in pinned (page-locked) host memory, from cudaMallocHost. The GPU's copy
/// engines can read and write it directly; pageable memory (new, malloc, std::vector)
/// has to be staged through a pinned buffer by the driver first.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer(size_t count, T value) : count_(count) {
    CUDA_CHECK(cudaMallocHost(&data_, count_ * sizeof(T)));
    for (size_t i = 0; i < count_; ++i) data_[i] = value;
  }
  ~PinnedBuffer() { cudaFreeHost(data_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

// Places are named the CUDA 12 way: a device ordinal, or cudaCpuDeviceId for host memory.
//
// CUDA 13 changed cudaMemPrefetchAsync and cudaMemAdvise to take a cudaMemLocation
// (device, host, or a host NUMA node) instead of an int, and gave the prefetch a flags
// argument: the classic call `cudaMemPrefetchAsync(p, bytes, device, stream)` no longer
// compiles. The location forms exist since CUDA 12.2, but there they are named
// cudaMemPrefetchAsync_v2 / cudaMemAdvise_v2, and CUDA 12.0 and 12.1 lack them; so the
// version test picks the form each toolkit has.

#if CUDART_VERSION >= 13000
inline cudaMemLocation location_of(int device_or_cpu) {
  cudaMemLocation location{};
  if (device_or_cpu == cudaCpuDeviceId) {
    location.type = cudaMemLocationTypeHost;  // id is ignored for the host
  } else {
    location.type = cudaMemLocationTypeDevice;
    location.id = device_or_cpu;
  }
  return location;
}
#endif

/// Queues a migration of [ptr, ptr + bytes) of managed memory to \p device_or_cpu on \p stream.
// [excerpt:prefetch]
inline void prefetch(const void* ptr, size_t bytes, int device_or_cpu, cudaStream_t stream = nullptr) {
#if CUDART_VERSION >= 13000
  CUDA_CHECK(cudaMemPrefetchAsync(ptr, bytes, location_of(device_or_cpu), 0 /* flags */, stream));
#else
  CUDA_CHECK(cudaMemPrefetchAsync(ptr, bytes, device_or_cpu, stream));
#endif
}
// [/excerpt:prefetch]

/// Gives the Unified Memory driver a hint about [ptr, ptr + bytes).
inline void advise(const void* ptr, size_t bytes, cudaMemoryAdvise advice, int device_or_cpu) {
#if CUDART_VERSION >= 13000
  CUDA_CHECK(cudaMemAdvise(ptr, bytes, advice, location_of(device_or_cpu)));
#else
  CUDA_CHECK(cudaMemAdvise(ptr, bytes, advice, device_or_cpu));
#endif
}

/// Exits with a usage error (2) unless \p bytes fit in the host's available memory
/// (MemAvailable in /proc/meminfo) with \p headroom to spare. Managed memory starts
/// in host memory and pinned memory cannot be swapped out, so a size the GPU could
/// hold may still be too much for the host. Where /proc/meminfo does not exist
/// (not Linux), there is nothing to check against and the check passes.
inline void require_host_memory(size_t bytes, const char* what, size_t headroom = 1ull << 30) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") {
      const size_t available = kib * 1024;
      if (bytes + headroom > available) {
        std::fprintf(stderr,
                     "%s needs %.2f GiB of host memory, but only %.2f GiB is available: "
                     "choose a smaller size.\n",
                     what, bytes / double(1ull << 30), available / double(1ull << 30));
        std::exit(tutorial::kExitUsage);
      }
      return;
    }
    meminfo.ignore(256, '\n');  // skip the unit ("kB")
  }
}

}  // namespace chapter02
