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
