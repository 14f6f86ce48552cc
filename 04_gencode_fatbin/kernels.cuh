// The kernels of chapter 04 and their CPU references.
//
// The kernels themselves live in kernels.cu, a translation unit of their own:
// nvcc gives every .cu file its own fatbinary, and the CUDA driver loads each
// fatbinary as a separate *module*. With the kernels apart from main(), the
// program can time the one moment the driver loads them, which is when it
// compiles them first if all it has is PTX (JIT).
#pragma once

#include <vector>

namespace ch04 {

/// The polynomial kernels have degrees 1 to kPolynomialKernels.
inline constexpr int kPolynomialKernels = 32;

/// A kernel's host-side handle, as cudaFuncGetAttributes() and cudaLaunchKernel() take it.
struct Kernel {
  const char* name;
  const void* function;
};

/// Every kernel in kernels.cu: saxpy first, then polynomial<1> ... polynomial<32>.
std::vector<Kernel> all_kernels();

/// y = a * x + y for n elements. Launches and checks the launch.
void saxpy(int n, float a, const float* x, float* y);

/// y = p(x) for n elements, p of the given degree (1 to kPolynomialKernels).
void polynomial(int degree, int n, const float* x, float* y);

/// The k-th coefficient of every polynomial here: -2, -1, 0, 1, 2, -2, ...
/// Small integers, so that with x in {-1, 0, 1} every partial sum is an integer
/// float represents exactly: the GPU result must equal the reference exactly.
__host__ __device__ constexpr float coefficient(int k) { return static_cast<float>(k % 5 - 2); }

/// The CPU reference for polynomial(): Horner's rule in double.
inline double polynomial_reference(int degree, double x) {
  double sum = 0.0;
  for (int k = degree; k >= 0; --k) sum = sum * x + coefficient(k);
  return sum;
}

}  // namespace ch04
