// What every reduction step shares: the block size, the scratch memory, and the host loop that
// Harris's first
// kernels need. A kernel that turns each block's slice into one partial sum must be run again
// on the partial sums, and again, until one value is left: 2^28 floats -> 2^20 partials
// -> 2^12 -> 16 -> 1 with 256 elements a block. Every pass after the first is small, but each
// is a launch, and each reads and writes memory.
// Indices are int, safe because the runner caps n at lab::kMaxElements = 2^30 (lab.cuh): no
// index or index + kBlock reaches 2^31 (chapter 03's big_index.cu shows what happens past it).
#pragma once

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>

namespace reduction {

constexpr int kBlock = 256;  // a power of two: the tree loops halve it down to 1

/// Device memory a step may use, allocated once per size, outside the timed runs: two ping-pong
/// arrays of partial sums (one per block of the first pass), a zeroed done-counter (step 7),
/// and the temporary storage CUB asks for. Every launcher takes it, so all have one signature.
struct Scratch {
  explicit Scratch(int n) : a((n + kBlock - 1) / kBlock), b(a.size()), counter(1) {
    CUDA_CHECK(cudaMemset(counter.data(), 0, counter.bytes()));
  }
  tutorial::DeviceBuffer<float> a, b;
  tutorial::DeviceBuffer<unsigned int> counter;
  tutorial::DeviceBuffer<unsigned char> cub_temp;
};

using ReduceKernel = void (*)(const float* in, float* out, int n);

// [excerpt:passes]
/// Sums in[0, n) into *out with \p kernel, which reduces each run of \p per_block inputs to one
/// partial sum. \p scratch_a and \p scratch_b hold ceil(n / per_block) floats each.
inline void reduce_in_passes(ReduceKernel kernel, int per_block, const float* in, int n, float* out,
                             float* scratch_a, float* scratch_b) {
  const float* src = in;
  float* dst = scratch_a;
  for (int count = n;;) {
    const int blocks = (count + per_block - 1) / per_block;
    if (blocks == 1) dst = out;  // the last pass writes the answer
    kernel<<<blocks, kBlock>>>(src, dst, count);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    src = dst;
    dst = (dst == scratch_a) ? scratch_b : scratch_a;  // never read and write one buffer in a pass
    count = blocks;
  }
}
// [/excerpt:passes]

}  // namespace reduction
