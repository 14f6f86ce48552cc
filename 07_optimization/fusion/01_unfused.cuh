// Fusion step 1: GELU as eight elementwise kernels, one per operation, the way eager PyTorch
// runs `0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x**3)))`.
//
//   gelu(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))     (the tanh approximation)
//
// Each kernel reads its inputs from memory and writes its result back: 10 arrays read and 8
// written, 18 passes of 4n bytes. The arithmetic is trivial; the time is all memory traffic.
// Prediction: 18 / 2 = 9x the time of one fused kernel (2 passes: read x, write y), if every
// kernel runs at the copy bandwidth (chapter 06 measures the same gap for unfused torch ops).
#pragma once

#include "../lab.cuh"

namespace fusion {

constexpr int kBlock = 256;

// One operation, one pass over memory: out = op(a) or out = op(a, b), grid-stride.
template <typename Op>
__global__ void map1(const float* a, float* out, int n, Op op) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = op(a[i]);
}
template <typename Op>
__global__ void map2(const float* a, const float* b, float* out, int n, Op op) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = op(a[i], b[i]);
}

// The operations. Float literals and tanhf throughout: one double literal makes the math FP64,
// which runs at a small fraction of the FP32 rate on most GPUs.
struct Cube {
  __device__ float operator()(float v) const { return v * v * v; }
};
struct Scale {
  float s;
  __device__ float operator()(float v) const { return s * v; }
};
struct AddScalar {
  float s;
  __device__ float operator()(float v) const { return s + v; }
};
struct Tanh {
  __device__ float operator()(float v) const { return tanhf(v); }
};
struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Mul {
  __device__ float operator()(float a, float b) const { return a * b; }
};

/// y = gelu(x) in eight passes; \p t and \p u are scratch arrays of n floats.
inline void launch_unfused(const float* x, float* y, int n, float* t, float* u) {
  // Every map kernel is tiny and has the same occupancy: one grid size serves them all.
  const int resident = lab::resident_blocks(map1<Tanh>, kBlock);
  const int blocks = lab::grid_for(n, kBlock, resident);
  const auto run1 = [=](const float* a, float* out, auto op) {
    map1<<<blocks, kBlock>>>(a, out, n, op);
    CUDA_CHECK_LAUNCH();
  };
  const auto run2 = [=](const float* a, const float* b, float* out, auto op) {
    map2<<<blocks, kBlock>>>(a, b, out, n, op);
    CUDA_CHECK_LAUNCH();
  };
  // [excerpt:passes]
  run1(x, t, Cube{});                // t = x^3                 read 1, write 1
  run1(t, t, Scale{0.044715f});      // t = 0.044715 * t        read 1, write 1
  run2(x, t, t, Add{});              // t = x + t               read 2, write 1
  run1(t, t, Scale{0.7978845608f});  // t = sqrt(2/pi) * t      read 1, write 1
  run1(t, t, Tanh{});                // t = tanh(t)             read 1, write 1
  run1(t, t, AddScalar{1.0f});       // t = 1 + t               read 1, write 1
  run1(x, u, Scale{0.5f});           // u = 0.5 * x             read 1, write 1
  run2(u, t, y, Mul{});              // y = u * t               read 2, write 1
  // [/excerpt:passes]
}

}  // namespace fusion
