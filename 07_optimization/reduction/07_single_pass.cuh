// Reduction step 7: one pass. The last block to finish adds up the partial sums.
// Change: step 6's two launches become one. Each block writes its partial sum, then counts
// itself done with an atomic add on a counter in global memory; the block that sees the count
// reach gridDim.x - 1 is the last, and every other partial sum is already visible to it, so it
// sums them and resets the counter for the next launch. (CUDA's threadFenceReduction sample does
// the same with __threadfence() and atomicInc; cuda::atomic_ref says what is needed directly:
// a release by every block that wrote a partial, an acquire by the one that reads them all.)
// Atomics adding every block's sum into *out would also be one pass, but a float atomicAdd
// lands in whatever order blocks finish: the result could change from run to run. This order
// is fixed.
// Prediction: saves one launch and its gap (a few microseconds) out of ~0.3 ms at 2^28:
// about the same as step 6; it matters for small n, where launches dominate.
#pragma once

#include <cuda/atomic>

#include "06_grid_stride.cuh"

namespace reduction {

// [excerpt:kernel]
/// \p partials holds gridDim.x floats; \p blocks_done is 0 before the launch, and 0 after.
__global__ void sum_single_pass(const float* in, float* out, int n, float* partials,
                                unsigned int* blocks_done) {
  const float total = block_sum(thread_sum(in, n));
  // [excerpt:last-block]
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = total;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> done(*blocks_done);
    // release: our partial is visible before our count; acquire: so are the others' to the last.
    is_last = done.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();  // shares is_last, and separates the two block_sum calls
  if (!is_last) return;
  // [/excerpt:last-block]

  float sum = 0.0f;
  for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x) sum += __ldcg(&partials[b]);  // L2, not L1
  sum = block_sum(sum);
  if (threadIdx.x == 0) {
    *out = sum;
    *blocks_done = 0;  // ready for the next launch (kernels in one stream run one after another)
  }
}
// [/excerpt:kernel]

/// Partial sums go to scratch.a; scratch.counter is zero before and after.
inline void launch_single_pass(const float* in, int n, float* out, Scratch& scratch) {
  sum_single_pass<<<first_pass_blocks(n), kBlock>>>(in, out, n, scratch.a.data(),
                                                     scratch.counter.data());
  CUDA_CHECK_LAUNCH();
}

}  // namespace reduction
