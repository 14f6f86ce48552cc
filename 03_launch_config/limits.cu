// Chapter 03, part 3: the limits of a launch, and what happens past them.
//
//   limits  every limit read from the device with cudaDeviceGetAttribute (never
//           typed in), the occupancy API's advice for the add kernel, and valid
//           launches at the limits, checked: a grid of 2^20 blocks in x (the
//           notes' 65535 is wrong for x), 65535 in y and z, and dynamic shared
//           memory past 48 KiB with the opt-in;
//   errors  launches that break a rule, on purpose: CUDA refuses each one, and
//           the error is only seen by asking cudaGetLastError(). The program
//           prints the error it got, by name, and fails (exit 1) if a wrong
//           launch is NOT refused. Which error a refusal reports is not fixed:
//           CUDA's documentation lists cudaErrorInvalidConfiguration for too
//           many threads, too many blocks or too much shared memory, and older
//           toolkits returned it for bad shapes; CUDA 13.0 with driver 580
//           returned cudaErrorInvalidValue for all eight launches below. So the
//           check is "!= cudaSuccess", and the name is printed, never assumed.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/verify.hpp>

#include "add_kernels.cuh"

// Each block writes a 1 in its own slot, so the host can check that every block
// of a 1-, 2- or 3-D grid ran exactly where it should.
__global__ void mark_blocks(unsigned* marks) {
  const size_t block = blockIdx.x + static_cast<size_t>(gridDim.x) *
                                        (blockIdx.y + static_cast<size_t>(gridDim.y) * blockIdx.z);
  if (threadIdx.x == 0) marks[block] = 1;
}

// Writes 0, 1, 2, ... into `words` words of dynamic shared memory, then copies
// them out in reverse: each thread reads words that other threads wrote, so
// every byte of the Ns requested must really be there.
__global__ void reverse_through_shared(unsigned* out, int words) {
  extern __shared__ unsigned buffer[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buffer[i] = i;
  __syncthreads();
  for (int i = threadIdx.x; i < words; i += blockDim.x) out[i] = buffer[words - 1 - i];
}

// The runtime checks a launch before any thread runs, so an empty kernel is
// enough to show every rule (any kernel may be given Ns bytes of shared memory).
__global__ void empty_kernel() {}

namespace {

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
  return value;
}

/// Launches mark_blocks on \p grid and checks that every block ran once.
void check_grid(dim3 grid, const std::string& what, tutorial::Verifier& verifier) {
  const size_t blocks = static_cast<size_t>(grid.x) * grid.y * grid.z;
  tutorial::DeviceBuffer<unsigned> marks(blocks);
  marks.poison();
  mark_blocks<<<grid, 32>>>(marks.data());
  CUDA_CHECK_LAUNCH();
  verifier.exact(what + ", every block ran",
                 tutorial::max_abs_error_from(marks.download().data(), 1.0, blocks));
}

/// Dynamic shared memory: the default limit, the opt-in, and a launch that uses all of it.
void check_shared_memory_opt_in(int device, tutorial::Verifier& verifier) {
  const int optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  // Past the default 48 KiB a kernel must ask for more, once, before its launch.
  CUDA_CHECK(
      cudaFuncSetAttribute(reverse_through_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  const int words = optin / static_cast<int>(sizeof(unsigned));
  tutorial::DeviceBuffer<unsigned> out(words);
  out.poison();
  reverse_through_shared<<<1, 1024, optin>>>(out.data(), words);
  CUDA_CHECK_LAUNCH();
  std::vector<unsigned> want(words);
  for (int i = 0; i < words; ++i) want[i] = words - 1 - i;
  verifier.exact(tutorial::format("<<<1, 1024, %d>>> after cudaFuncSetAttribute(..., "
                                  "cudaFuncAttributeMaxDynamicSharedMemorySize, %d)",
                                  optin, optin),
                 tutorial::max_abs_error(out.download().data(), want.data(), words));
}

void show_limits(int device, tutorial::Verifier& verifier) {
  std::printf("\nLimits of this GPU (cudaDeviceGetAttribute):\n\n");
  tutorial::Table table({"limit", "attribute", "value", "note"});
  auto row = [&](const char* limit, const char* name, cudaDeviceAttr what, const char* note) {
    table.add_row({limit, name, std::to_string(attribute(what, device)), note});
  };
  row("threads per block", "cudaDevAttrMaxThreadsPerBlock", cudaDevAttrMaxThreadsPerBlock,
      "x * y * z of a block");
  row("block x", "cudaDevAttrMaxBlockDimX", cudaDevAttrMaxBlockDimX, "");
  row("block y", "cudaDevAttrMaxBlockDimY", cudaDevAttrMaxBlockDimY, "");
  row("block z", "cudaDevAttrMaxBlockDimZ", cudaDevAttrMaxBlockDimZ, "");
  row("grid x (blocks)", "cudaDevAttrMaxGridDimX", cudaDevAttrMaxGridDimX,
      "2^31 - 1: the notes' 65535 is wrong for x");
  row("grid y (blocks)", "cudaDevAttrMaxGridDimY", cudaDevAttrMaxGridDimY, "");
  row("grid z (blocks)", "cudaDevAttrMaxGridDimZ", cudaDevAttrMaxGridDimZ,
      "the notes: z is always 1; grids are 3-D since compute capability 2.0");
  row("warp size (threads)", "cudaDevAttrWarpSize", cudaDevAttrWarpSize, "");
  row("SMs", "cudaDevAttrMultiProcessorCount", cudaDevAttrMultiProcessorCount, "");
  row("threads per SM", "cudaDevAttrMaxThreadsPerMultiProcessor", cudaDevAttrMaxThreadsPerMultiProcessor,
      "");
  row("blocks per SM", "cudaDevAttrMaxBlocksPerMultiprocessor", cudaDevAttrMaxBlocksPerMultiprocessor,
      "");
  row("registers per block", "cudaDevAttrMaxRegistersPerBlock", cudaDevAttrMaxRegistersPerBlock,
      "32-bit");
  row("shared memory per block (bytes)", "cudaDevAttrMaxSharedMemoryPerBlock",
      cudaDevAttrMaxSharedMemoryPerBlock, "without opt-in");
  row("shared memory per block, opt-in", "cudaDevAttrMaxSharedMemoryPerBlockOptin",
      cudaDevAttrMaxSharedMemoryPerBlockOptin, "with cudaFuncSetAttribute");
  row("shared memory per SM (bytes)", "cudaDevAttrMaxSharedMemoryPerMultiprocessor",
      cudaDevAttrMaxSharedMemoryPerMultiprocessor, "shared by its resident blocks");
  table.print();

  // Occupancy: how many threads of the add kernel each SM can hold at once.
  int suggested_grid = 0, suggested_block = 0;
  CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&suggested_grid, &suggested_block, add_grid_stride));
  std::printf(
      "\ncudaOccupancyMaxPotentialBlockSize(add_grid_stride) suggests <<<%d, %d>>>: the block size "
      "with the highest occupancy, and the smallest grid that fills every SM with it.\n\n",
      suggested_grid, suggested_block);
  const int threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
  tutorial::Table occupancy(
      {"block size", "resident blocks per SM", "resident threads per SM", "occupancy"});
  for (int block : {256, suggested_block}) {
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_grid_stride, block, 0));
    occupancy.add_row({std::to_string(block), std::to_string(blocks), std::to_string(blocks * block),
                       tutorial::format("%.0f%%", 100.0 * blocks * block / threads_per_sm)});
  }
  occupancy.print();

  std::printf("\nValid launches at the limits, checked:\n");
  check_grid(dim3((1u << 20) + 1), "grid of 2^20 + 1 blocks in x (16x the notes' 65535)", verifier);
  check_grid(dim3(1, attribute(cudaDevAttrMaxGridDimY, device)), "grid of 65535 blocks in y", verifier);
  check_grid(dim3(1, 1, attribute(cudaDevAttrMaxGridDimZ, device)), "grid of 65535 blocks in z",
             verifier);
  check_shared_memory_opt_in(device, verifier);
}

/// A launch that breaks one rule.
struct WrongLaunch {
  std::string rule;  ///< which rule it breaks, in words
  std::string code;  ///< the launch as written
  std::function<void()> launch;
};

void show_wrong_launches(int device, tutorial::Verifier& verifier) {
  const int default_shared = attribute(cudaDevAttrMaxSharedMemoryPerBlock, device);
  const int optin_shared = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  const std::vector<WrongLaunch> wrong = {
      {"block of 1025 threads", "empty_kernel<<<1, 1025>>>", [] { empty_kernel<<<1, 1025>>>(); }},
      {"block of 32 x 32 x 2 = 2048 threads", "empty_kernel<<<1, dim3(32, 32, 2)>>>",
       [] { empty_kernel<<<1, dim3(32, 32, 2)>>>(); }},
      {"block z of 65", "empty_kernel<<<1, dim3(1, 1, 65)>>>",
       [] { empty_kernel<<<1, dim3(1, 1, 65)>>>(); }},
      {"grid of 0 blocks", "empty_kernel<<<0, 256>>>", [] { empty_kernel<<<0, 256>>>(); }},
      {"grid x of 2^31 blocks", "empty_kernel<<<1u << 31, 1>>>",
       [] { empty_kernel<<<1u << 31, 1>>>(); }},
      {"grid y of 65536 blocks", "empty_kernel<<<dim3(1, 65536), 1>>>",
       [] { empty_kernel<<<dim3(1, 65536), 1>>>(); }},
      {"dynamic shared memory past the default, without opt-in",
       tutorial::format("empty_kernel<<<1, 256, %d>>>", default_shared + 1),
       [=] { empty_kernel<<<1, 256, default_shared + 1>>>(); }},
      {"dynamic shared memory past the opt-in limit, with opt-in",
       tutorial::format("empty_kernel<<<1, 256, %d>>> after opting in to %d", optin_shared + 1,
                        optin_shared),
       [=] {
         CUDA_CHECK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         optin_shared));
         empty_kernel<<<1, 256, optin_shared + 1>>>();
       }},
  };

  std::printf("\nWrong launches, on purpose. A launch returns nothing: cudaGetLastError() tells.\n");
  for (const WrongLaunch& w : wrong) {
    w.launch();
    const cudaError_t err = cudaGetLastError();  // reads the error and resets it to cudaSuccess
    std::printf("\n%s\n  %s\n  cudaGetLastError() -> %s: %s\n", w.rule.c_str(), w.code.c_str(),
                cudaGetErrorName(err), cudaGetErrorString(err));
    if (const char* hint = tutorial::hint_for(err)) std::printf("  what it means: %s\n", hint);
    if (err == cudaSuccess) CUDA_CHECK(cudaDeviceSynchronize());  // it was queued: let it finish
    // Rejected is what matters; which error says so depends on the CUDA version.
    verifier.expect(w.rule + " is rejected (got " + cudaGetErrorName(err) + ")", err != cudaSuccess);
  }

  // A launch error is not "sticky": it is reported once and cleared, and the GPU
  // goes on working. (Errors inside a running kernel, such as an illegal address,
  // are sticky: they end the context, and every later call fails.)
  std::printf("\nAfter the rejected launches, a valid one:\n");
  check_grid(dim3(1000), "grid of 1000 blocks after the errors", verifier);
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("03_limits",
                    "Launch limits read from the device, the occupancy API, and wrong launches caught "
                    "and explained.");
  cli.add_string("part", "what to show", "all", {"all", "limits", "errors"});
  cli.parse_or_exit(argc, argv);
  const std::string part = cli.get_string("part");

  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  tutorial::Verifier verifier;
  if (part == "all" || part == "limits") show_limits(gpu.id, verifier);
  if (part == "all" || part == "errors") show_wrong_launches(gpu.id, verifier);
  return verifier.finish("03_limits");
}
