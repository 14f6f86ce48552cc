// The GPU code of chapter 04 (see kernels.cuh for why it has a file of its own).
//
// saxpy is the kernel the lesson is about. The 32 polynomial kernels are there
// for the JIT timing: one small kernel is too little PTX for its compile time to
// stand out clearly, while real programs ship many kernels (a library such as
// cuBLAS ships thousands). They are checked exactly all the same.
#include <utility>

#include <tutorial/check.cuh>

#include "kernels.cuh"

namespace ch04 {
namespace {

constexpr int kThreadsPerBlock = 256;

int blocks_for(int n) { return (n + kThreadsPerBlock - 1) / kThreadsPerBlock; }

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// p(x) = c_Degree x^Degree + ... + c_1 x + c_0 by Horner's rule. The loop is
// unrolled at compile time, so each degree is a kernel with its own code.
template <int Degree>
__global__ void polynomial_kernel(int n, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  float sum = 0.0f;
#pragma unroll
  for (int k = Degree; k >= 0; --k) sum = sum * v + coefficient(k);
  y[i] = sum;
}

using PolynomialKernel = void (*)(int, const float*, float*);

// polynomial_kernel<1>, ..., polynomial_kernel<kPolynomialKernels>, indexed by degree - 1.
template <int... Index>
const PolynomialKernel* polynomial_table(std::integer_sequence<int, Index...>) {
  static const PolynomialKernel table[] = {polynomial_kernel<Index + 1>...};
  return table;
}

const PolynomialKernel* polynomial_kernels() {
  return polynomial_table(std::make_integer_sequence<int, kPolynomialKernels>{});
}

}  // namespace

std::vector<Kernel> all_kernels() {
  std::vector<Kernel> kernels = {{"saxpy", reinterpret_cast<const void*>(saxpy_kernel)}};
  for (int degree = 1; degree <= kPolynomialKernels; ++degree)
    kernels.push_back({"polynomial", reinterpret_cast<const void*>(polynomial_kernels()[degree - 1])});
  return kernels;
}

void saxpy(int n, float a, const float* x, float* y) {
  saxpy_kernel<<<blocks_for(n), kThreadsPerBlock>>>(n, a, x, y);
  CUDA_CHECK_LAUNCH();
}

void polynomial(int degree, int n, const float* x, float* y) {
  polynomial_kernels()[degree - 1]<<<blocks_for(n), kThreadsPerBlock>>>(n, x, y);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch04
