/// \file check.cuh
/// \brief Checking every CUDA runtime call and every kernel launch.
///
/// CUDA reports failures through return codes that are easy to ignore, and a
/// kernel launch returns nothing at all. Wrap every runtime call in CUDA_CHECK
/// and follow every launch with CUDA_CHECK_LAUNCH(): a failure then stops the
/// program with the call's text, file:line, the error's name and string, and a
/// hint at the usual cause.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace tutorial {

/// Exit code for "no usable CUDA device" (automake/CTest convention for *skipped*).
constexpr int kExitNoGpu = 77;
/// Exit code for a failed verification or a failed CUDA call.
constexpr int kExitFailure = 1;
/// Exit code for bad command-line usage.
constexpr int kExitUsage = 2;

/// A one-line hint at the usual cause of \p err, or nullptr when there is none to give.
inline const char* hint_for(cudaError_t err) {
  switch (err) {
    case cudaErrorNoDevice:
      return "no CUDA GPU is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES";
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver is missing or older than this CUDA runtime: update the driver";
    case cudaErrorNoKernelImageForDevice:
      return "this binary has no machine code or PTX for this GPU: rebuild with "
             "-DCMAKE_CUDA_ARCHITECTURES=<your GPU's compute capability, e.g. 90>";
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory: use a smaller size (--n) or free other GPU work";
    case cudaErrorInvalidConfiguration:
      return "bad launch configuration: at most 1024 threads per block, grid size > 0, "
             "shared memory within the per-block limit";
    case cudaErrorLaunchOutOfResources:
      return "the kernel needs more registers or shared memory than a block can have: "
             "use fewer threads per block";
    case cudaErrorIllegalAddress:
      return "a kernel touched memory it does not own: run the program under compute-sanitizer";
    case cudaErrorInvalidValue:
      return "an argument is out of range: check sizes, pointers and flags; after a launch, "
             "check the configuration against the device's limits (threads per block, grid "
             "size, dynamic shared memory): CUDA 13 reports those as this error";
    case cudaErrorInvalidDevicePointer:
      return "the pointer is not device memory from this context";
    default:
      return nullptr;
  }
}

/// Prints a full report of a failed call and exits. Used through CUDA_CHECK.
[[noreturn]] inline void fail_cuda_call(cudaError_t err, const char* call, const char* file,
                                        int line) {
  std::fprintf(stderr, "CUDA call failed: %s\n  at %s:%d\n  %s: %s\n", call, file, line,
               cudaGetErrorName(err), cudaGetErrorString(err));
  if (const char* hint = hint_for(err)) std::fprintf(stderr, "  hint: %s\n", hint);
  std::exit(kExitFailure);
}

/// Checks the result of one CUDA runtime call. Used through CUDA_CHECK.
inline void check_cuda_call(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) fail_cuda_call(err, call, file, line);
}

}  // namespace tutorial

/// Wraps a CUDA runtime call: `CUDA_CHECK(cudaMalloc(&p, bytes));`
#define CUDA_CHECK(call) ::tutorial::check_cuda_call((call), #call, __FILE__, __LINE__)

/// Checks the most recent kernel launch. A launch returns no status of its own:
/// configuration errors are only visible through cudaGetLastError(), and errors
/// *inside* the kernel appear at the next synchronizing call.
#define CUDA_CHECK_LAUNCH()                                                              \
  ::tutorial::check_cuda_call(cudaGetLastError(), "kernel launch (cudaGetLastError)", \
                              __FILE__, __LINE__)
