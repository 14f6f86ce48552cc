// What every SGEMM step shares. The problem, for every step and for cuBLAS:
//
//   C = alpha * A * B + beta * C,   A is M x K, B is K x N, C is M x N, all ROW-MAJOR fp32
//   (element (r, c) of an R x C matrix X is X[r * C + c]).
//
// Threads that go past the edge of a matrix (sizes that are not multiples of a tile: 33, 4097)
// load zeros, which add nothing to a dot product, and store nothing.
#pragma once

#include <cstdint>
#include <tutorial/check.cuh>

namespace sgemm {

using Launch = void (*)(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                        float* C);

/// The largest M, N and K the runner accepts. The kernels index with int on purpose: 32-bit
/// index math takes fewer instructions in the inner loops than 64-bit, and with every side at
/// most 2^14, the largest product (r * cols, row * K) is below 2^28, far from int's 2^31.
constexpr int kMaxSide = 16384;
static_assert(int64_t(kMaxSide) * kMaxSide < (int64_t(1) << 31),
              "int indices: every product of two sides must stay below 2^31");

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// alpha * acc + beta * c, with the BLAS rule that beta == 0 means C is an output only: it is not
/// read, so NaN or garbage in it (our poison) does not leak into the result (NaN * 0 is NaN).
__device__ inline float scale_add(float alpha, float acc, float beta, const float& c) {
  return beta == 0.0f ? alpha * acc : alpha * acc + beta * c;
}

/// X[r][c] of a rows x cols row-major matrix, or 0 outside it.
__device__ inline float load_or_zero(const float* X, int rows, int cols, int r, int c) {
  return (r < rows && c < cols) ? X[r * cols + c] : 0.0f;
}

}  // namespace sgemm
