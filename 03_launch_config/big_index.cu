// Chapter 03, part 4: index arithmetic past 2^31 elements.
//
// The usual first kernel computes its index as
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
// blockIdx.x * blockDim.x is a 32-bit unsigned product: it wraps at 2^32, and
// stored in an int every index from 2^31 on comes out negative. Arrays past 2^31
// elements are ordinary today (2 GiB of bytes), so this program writes a pattern
// into n bytes (default 2^32 + 3, past both 2^31 and 2^32) with 64-bit indices,
// one thread per element and grid-stride, checks every byte on the GPU, and
// counts exactly how many bytes the int version leaves unwritten.
// Needs n bytes of GPU memory; where the GPU has less, it says so and skips (77).
#include <cstdint>
#include <cstdio>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/verify.hpp>

// The value element i must hold. 251 is prime, so i, i - 2^31 and i - 2^32 all
// give different values: an element written through a wrapped index is caught.
__host__ __device__ inline uint8_t pattern(size_t i) { return static_cast<uint8_t>(i % 251); }

// Right: the cast makes the product 64-bit before it can wrap.
// [excerpt:size-t-index]
__global__ void write_one_per_element(uint8_t* out, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = pattern(i);
}
// [/excerpt:size-t-index]

// Right: a 64-bit start and a 64-bit stride.
__global__ void write_grid_stride(uint8_t* out, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = pattern(i);
}

// Wrong, on purpose: the int index. Made safe to run by the i >= 0 test; without
// it, the negative indices would write before the start of the array (an illegal
// address, which ends the CUDA context).
// [excerpt:int-index]
__global__ void write_int_index(uint8_t* out, size_t n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 0 && static_cast<size_t>(i) < n) out[i] = pattern(i);
}
// [/excerpt:int-index]

// Counts the elements that do not hold pattern(i) and finds the largest
// |out[i] - pattern(i)|, in one pass on the GPU (n bytes would take seconds to
// copy to the host and check there).
__global__ void check_pattern(const uint8_t* out, size_t n, unsigned long long* mismatches,
                              unsigned* worst) {
  unsigned long long count = 0;
  unsigned largest = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int diff = static_cast<int>(out[i]) - static_cast<int>(pattern(i));
    count += diff != 0;
    largest = max(largest, static_cast<unsigned>(abs(diff)));
  }
  if (count != 0) {  // no atomics at all when everything is right
    atomicAdd(mismatches, count);
    atomicMax(worst, largest);
  }
}

namespace {

struct CheckResult {
  unsigned long long mismatches = 0;
  unsigned worst = 0;
};

CheckResult check_on_gpu(const tutorial::DeviceBuffer<uint8_t>& out, size_t n) {
  tutorial::DeviceBuffer<unsigned long long> mismatches(1);
  tutorial::DeviceBuffer<unsigned> worst(1);
  CUDA_CHECK(cudaMemset(mismatches.data(), 0, mismatches.bytes()));
  CUDA_CHECK(cudaMemset(worst.data(), 0, worst.bytes()));
  check_pattern<<<4096, 256>>>(out.data(), n, mismatches.data(), worst.data());
  CUDA_CHECK_LAUNCH();
  return {mismatches.download()[0], worst.download()[0]};
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("03_big_index",
                    "Index arithmetic past 2^31 elements: 64-bit indices, checked on the GPU.");
  cli.add_int("n", "bytes to write (the default is 2^32 + 3)", (1LL << 32) + 3, 1, 1LL << 36);
  cli.add_int("block", "threads per block", 256, 1, 1024);
  cli.parse_or_exit(argc, argv);
  const size_t n = cli.get_int("n");
  const unsigned block = static_cast<unsigned>(cli.get_int("block"));

  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  // The point is the size itself, so a GPU without room for it skips the check
  // instead of running a smaller one.
  const size_t headroom = 256ull << 20;
  if (n + headroom > gpu.free_memory) {
    std::fprintf(stderr,
                 "03_big_index needs %.2f GiB of GPU memory for --n %zu, but %.2f GiB is free: "
                 "skipping (exit %d). Try a smaller --n.\n",
                 (n + headroom) / double(1ull << 30), n, gpu.free_memory / double(1ull << 30),
                 tutorial::kExitNoGpu);
    return tutorial::kExitNoGpu;
  }
  const size_t blocks = (n + block - 1) / block;
  int max_grid_x = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_grid_x, cudaDevAttrMaxGridDimX, gpu.id));
  if (blocks > static_cast<size_t>(max_grid_x)) {
    std::fprintf(
        stderr,
        "--n %zu / --block %u needs %zu blocks, more than this GPU's %d in x: use a larger --block.\n",
        n, block, blocks, max_grid_x);
    return tutorial::kExitUsage;
  }
  std::printf("\n%zu bytes (%.2f GiB), %s 2^31 and %s 2^32\n", n, n / double(1ull << 30),
              n > (1ull << 31) ? "past" : "not past", n > (1ull << 32) ? "past" : "not past");

  tutorial::DeviceBuffer<uint8_t> out(n);
  tutorial::Verifier verifier;

  // One thread per element: the grid has more than 65535 blocks in x, which the
  // notes say is impossible (the real limit, read above, is 2^31 - 1).
  out.poison();  // 0xFF: pattern() never gives 255, so an unwritten byte is a mismatch
  write_one_per_element<<<static_cast<unsigned>(blocks), block>>>(out.data(), n);
  CUDA_CHECK_LAUNCH();
  verifier.exact(tutorial::format("write_one_per_element<<<%zu, %u>>>, every byte", blocks, block),
                 check_on_gpu(out, n).worst);

  const unsigned grid = static_cast<unsigned>(gpu.sm_count) * 8;
  out.poison();
  write_grid_stride<<<grid, block>>>(out.data(), n);
  CUDA_CHECK_LAUNCH();
  verifier.exact(tutorial::format("write_grid_stride<<<%u, %u>>>, every byte", grid, block),
                 check_on_gpu(out, n).worst);

  // The int index: every element from 2^31 on is left unwritten (threads past
  // 2^32 wrap around to small non-negative indices and rewrite the first bytes
  // with the right values), so exactly n - 2^31 bytes must be wrong.
  out.poison();
  write_int_index<<<static_cast<unsigned>(blocks), block>>>(out.data(), n);
  CUDA_CHECK_LAUNCH();
  const unsigned long long unwritten = check_on_gpu(out, n).mismatches;
  const unsigned long long predicted = n > (1ull << 31) ? n - (1ull << 31) : 0;
  std::printf(
      "\nwrite_int_index (int i = blockIdx.x * blockDim.x + threadIdx.x): %llu of %zu bytes wrong\n",
      unwritten, n);
  verifier.expect(tutorial::format("the int index gets exactly n - 2^31 = %llu bytes wrong", predicted),
                  unwritten == predicted);
  return verifier.finish("03_big_index");
}
