/// \file device.cuh
/// \brief Finding a usable GPU, or exiting 77 ("skipped") with the reason.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "check.cuh"

namespace tutorial {

/// What a chapter needs to know about the GPU it runs on.
struct DeviceInfo {
  int id = 0;                  ///< CUDA device ordinal
  std::string name;            ///< e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0;            ///< compute capability, major
  int cc_minor = 0;            ///< compute capability, minor
  int sm_count = 0;            ///< streaming multiprocessors
  size_t total_memory = 0;     ///< bytes of device memory
  size_t free_memory = 0;      ///< bytes free when the program started
};

namespace detail {
// An empty kernel compiled into every program that includes this header. Asking
// for its attributes makes the runtime look for code this GPU can run, so a
// binary built for the wrong architecture is caught up front, with a clear
// message, instead of at the first real launch. (Unnamed namespace: each file
// that includes this header gets its own copy, so the linker sees no duplicates.)
namespace {
__global__ void probe_kernel() {}
}  // namespace

/// The architectures this translation unit was compiled for, e.g. "80, 90" (nvcc's __CUDA_ARCH_LIST__).
inline std::string compiled_architectures() {
#ifdef __CUDA_ARCH_LIST__
  const int archs[] = {__CUDA_ARCH_LIST__};
  std::string text;
  for (int arch : archs) {
    if (!text.empty()) text += ", ";
    text += "sm_" + std::to_string(arch / 10);
  }
  return text;
#else
  return "unknown";
#endif
}

[[noreturn]] inline void skip(const std::string& reason) {
  std::fprintf(stderr, "No usable CUDA GPU: %s\nSkipping (exit code %d).\n", reason.c_str(),
               kExitNoGpu);
  std::exit(kExitNoGpu);
}
}  // namespace detail

/// Returns the GPU the program will use (device 0), after checking that a driver,
/// a device and code for that device are all present. Otherwise prints why and
/// exits with kExitNoGpu (77), which CTest reports as *skipped*.
inline DeviceInfo require_gpu(bool print = true) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorInsufficientDriver)
    detail::skip("no NVIDIA driver found, or it is older than this CUDA runtime (" +
                 std::string(cudaGetErrorName(err)) + ").");
  if (err != cudaSuccess || count == 0)
    detail::skip(std::string("the driver reports no CUDA device (") +
                 (err == cudaSuccess ? "0 devices" : cudaGetErrorName(err)) +
                 "); check nvidia-smi and CUDA_VISIBLE_DEVICES.");

  DeviceInfo info;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, info.id));
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  CUDA_CHECK(cudaSetDevice(info.id));

  cudaFuncAttributes attributes{};
  const cudaError_t image = cudaFuncGetAttributes(&attributes, detail::probe_kernel);
  if (image == cudaErrorNoKernelImageForDevice || image == cudaErrorInvalidDeviceFunction) {
    (void)cudaGetLastError();  // clear the (non-sticky) error before exiting cleanly
    if (std::getenv("CUDA_FORCE_PTX_JIT"))
      detail::skip("CUDA_FORCE_PTX_JIT is set, so the driver ignores machine code and needs PTX, "
                   "but this binary holds none for " + std::string(prop.name) +
                   ". Unset the variable, or build with PTX (e.g. -DCMAKE_CUDA_ARCHITECTURES=" +
                   std::to_string(prop.major * 10 + prop.minor) + "-virtual).");
    detail::skip(std::string(prop.name) + " is compute capability " + std::to_string(prop.major) +
                 "." + std::to_string(prop.minor) + ", but this binary holds code only for " +
                 detail::compiled_architectures() + ". Rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
                 std::to_string(prop.major * 10 + prop.minor) + ".");
  }
  CUDA_CHECK(image);
  CUDA_CHECK(cudaMemGetInfo(&info.free_memory, &info.total_memory));

  if (print)
    std::printf("Device %d: %s (compute capability %d.%d, %d SMs, %.1f GiB)\n", info.id,
                info.name.c_str(), info.cc_major, info.cc_minor, info.sm_count,
                info.total_memory / double(1ull << 30));
  return info;
}

/// Exits with a usage error (kExitUsage) unless \p bytes fit in the GPU's free memory,
/// keeping \p headroom bytes spare. Check before allocating: an allocation that fails
/// half-way leaves the reader with a CUDA error instead of the real reason.
inline void require_device_memory(size_t bytes, const char* what, size_t headroom = 256ull << 20) {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes + headroom > free_bytes) {
    std::fprintf(stderr,
                 "%s needs %.2f GiB of GPU memory, but only %.2f GiB of %.2f GiB is free: "
                 "choose a smaller size.\n",
                 what, bytes / double(1ull << 30), free_bytes / double(1ull << 30),
                 total_bytes / double(1ull << 30));
    std::exit(kExitUsage);
  }
}

}  // namespace tutorial
