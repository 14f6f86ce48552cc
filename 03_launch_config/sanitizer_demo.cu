// Chapter 03: two bugs that the program's own check cannot see, and compute-sanitizer can.
//
//   --bug out-of-bounds  an add with one thread per element and no bounds check: the last
//                        block's spare threads read past the ends of x and y and write past
//                        the end of z (memcheck finds it);
//   --bug race           a reversal through shared memory without __syncthreads(): threads
//                        read elements other threads may not have written yet (racecheck);
//   --bug none           the same two kernels, fixed (the default; both tools find nothing).
// Either way every result is checked exactly. The buggy kernels usually still pass that
// check: an out-of-bounds access lands in memory nobody else uses, and a race is lost only when
// the timing is unlucky. That is the point: run new kernels under compute-sanitizer.
//   compute-sanitizer --tool memcheck ./03_sanitizer_demo --bug out-of-bounds
//   compute-sanitizer --tool racecheck ./03_sanitizer_demo --bug race
// (sanitizer_demo.sh runs all four and checks that each finds what it should.)
#include <cstdio>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/verify.hpp>

constexpr int kBlock = 256;

// [excerpt:add-unchecked]
__global__ void add_unchecked(int n, const float* x, const float* y, float* z) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  z[i] = x[i] + y[i];
}
// [/excerpt:add-unchecked]

// [excerpt:add-checked]
__global__ void add_checked(int n, const float* x, const float* y, float* z) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}
// [/excerpt:add-checked]

// Each block reverses its kBlock elements: thread t stages element t, then writes out the
// element that thread kBlock - 1 - t staged. (n is a multiple of kBlock.)
// [excerpt:reverse-racy]
__global__ void reverse_racy(const int* in, int* out) {
  __shared__ int staged[kBlock];
  const int t = threadIdx.x, base = blockIdx.x * kBlock;
  staged[t] = in[base + t];
  out[base + t] = staged[kBlock - 1 - t];
}
// [/excerpt:reverse-racy]

// [excerpt:reverse-synced]
__global__ void reverse_synced(const int* in, int* out) {
  __shared__ int staged[kBlock];
  const int t = threadIdx.x, base = blockIdx.x * kBlock;
  staged[t] = in[base + t];
  __syncthreads();
  out[base + t] = staged[kBlock - 1 - t];
}
// [/excerpt:reverse-synced]

int main(int argc, char** argv) {
  tutorial::Cli cli("03_sanitizer_demo",
                    "An out-of-bounds write and a shared-memory race, planted for compute-sanitizer "
                    "to find (--bug none: both fixed).");
  cli.add_string("bug", "which kernels to run", "none", {"none", "out-of-bounds", "race"});
  cli.parse_or_exit(argc, argv);
  const std::string bug = cli.get_string("bug");
  tutorial::require_gpu();
  tutorial::Verifier verifier;

  // 1000 elements in 4 blocks of 256 threads: threads 1000 to 1023 have no element.
  const int n = 1000;
  const unsigned blocks = (n + kBlock - 1) / kBlock;
  tutorial::DeviceBuffer<float> x(n), y(n), z(n);
  x.upload(std::vector<float>(n, 1.0f));
  y.upload(std::vector<float>(n, 2.0f));
  z.poison();
  if (bug == "out-of-bounds")
    add_unchecked<<<blocks, kBlock>>>(n, x.data(), y.data(), z.data());
  else
    add_checked<<<blocks, kBlock>>>(n, x.data(), y.data(), z.data());
  CUDA_CHECK_LAUNCH();
  verifier.exact(tutorial::format("z = x + y on %d elements, %u x %d threads", n, blocks, kBlock),
                 tutorial::max_abs_error_from(z.download().data(), 3.0, n));

  // 8 blocks: in[i] = i, so out must hold each block's slice backwards.
  const int m = 8 * kBlock;
  std::vector<int> values(m), want(m);
  for (int i = 0; i < m; ++i) values[i] = i;
  for (int i = 0; i < m; ++i) want[i] = (i / kBlock) * kBlock + kBlock - 1 - i % kBlock;
  tutorial::DeviceBuffer<int> in(m), out(m);
  in.upload(values);
  out.poison();
  if (bug == "race")
    reverse_racy<<<m / kBlock, kBlock>>>(in.data(), out.data());
  else
    reverse_synced<<<m / kBlock, kBlock>>>(in.data(), out.data());
  CUDA_CHECK_LAUNCH();
  verifier.exact(tutorial::format("each block of %d reversed through shared memory", kBlock),
                 tutorial::max_abs_error(out.download().data(), want.data(), m));
  return verifier.finish("03_sanitizer_demo");
}
