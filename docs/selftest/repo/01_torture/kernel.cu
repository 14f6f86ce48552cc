/// \file kernel.cu
/// \brief A kernel, so that a link to this file becomes a link to its Doxygen page.

/// Adds \p x to \p y, one thread per element.
/// \param n number of elements
/// \param x input
/// \param y input and output
__global__ void __launch_bounds__(256) add(int n, const float* __restrict__ x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
