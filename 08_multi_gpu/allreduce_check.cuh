/// \file allreduce_check.cuh
/// \brief Inputs made on the GPU and answers checked on the GPU, so that a test can run a
/// hundred thousand all-reduces without the host copying anything.
///
/// GPU `rank`'s input for call `call` is a small whole number of (rank, index, call): every
/// call's inputs differ from the last call's, so a stale output cannot pass, and any sum of
/// them is exact in float, so the check asks for the exact answer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>

#include "multi_gpu.cuh"

namespace allreduce_check {

__host__ __device__ inline float input(int rank, size_t i, unsigned call) {
  return float(int((i * 7 + size_t(rank) * 3 + size_t(call) * 5) % 17) - 8);
}

__global__ void fill(float* in, size_t n, int rank, unsigned call) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    in[i] = input(rank, i, call);
}

/// Where check() keeps its findings, in one GPU's memory.
struct Findings {
  unsigned worst_bits;        // the largest |error| as float bits (NaN's bits are larger than inf's)
  unsigned long long wrong;   // outputs that were not exact
};

/// Compares out with the exact sum over `gpus` GPUs; with \p poison, then writes NaN over out,
/// so the next call must write every element again.
__global__ void check(float* out, size_t n, int gpus, unsigned call, Findings* findings, bool poison) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float expected = 0;
    for (int g = 0; g < gpus; ++g) expected += input(g, i, call);
    const float error = fabsf(out[i] - expected);
    if (!(error == 0)) {  // also true for NaN
      atomicAdd(&findings->wrong, 1ull);
      atomicMax(&findings->worst_bits, std::isnan(error) ? 0x7fc00000u : __float_as_uint(error));
    }
    if (poison) out[i] = NAN;
  }
}

inline int grid_for(size_t n) { return int(std::min<size_t>((n + 255) / 256, 1024)); }

/// Enqueues fill on \p stream (the current device must own \p in).
inline void fill_async(float* in, size_t n, int rank, unsigned call, cudaStream_t stream) {
  if (n == 0) return;
  fill<<<grid_for(n), 256, 0, stream>>>(in, n, rank, call);
  CUDA_CHECK_LAUNCH();
}
inline void check_async(float* out, size_t n, int gpus, unsigned call, Findings* findings, bool poison,
                        cudaStream_t stream) {
  if (n == 0) return;
  check<<<grid_for(n), 256, 0, stream>>>(out, n, gpus, call, findings, poison);
  CUDA_CHECK_LAUNCH();
}

/// The worst error recorded (NaN if an output was NaN), read after the GPU is done.
inline double worst_error(const Findings& f) {
  if (f.worst_bits == 0x7fc00000u) return NAN;
  float e;
  std::memcpy(&e, &f.worst_bits, sizeof e);
  return e;
}

}  // namespace allreduce_check
