// The chapter's kernels and the C++ functions that check their inputs and
// launch them. Written once, compiled by all three build routes (see ops.h).
//
// Three habits of a well-behaved PyTorch operator, all below:
//   1. check the inputs and say clearly what is wrong (the notes' CHECK_INPUT, extended);
//   2. run on the tensor's GPU (CUDAGuard) and on PyTorch's *current* stream,
//      so the kernel is ordered with the work around it (torch.cuda.stream(...));
//   3. check every launch (C10_CUDA_KERNEL_LAUNCH_CHECK raises a Python exception).
#include "ops.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace cuda_course {
namespace {

constexpr int kThreads = 256;  // threads per block, a multiple of the 32-thread warp

// ---------------------------------------------------------------------------
// Input checks
// ---------------------------------------------------------------------------

// Contiguity is required, not repaired: a silent .contiguous() would copy the
// whole tensor first (an extra read and write of every byte) and hide that cost.
// The caller decides whether the copy is worth it.
// "[2, 3]". Spelled out here rather than streaming an IntArrayRef into TORCH_CHECK:
// that crashed (SIGSEGV) in this extension on the course's GPU machine, built with
// its nvcc 13.0 and PyTorch 2.11.
std::string dims(at::IntArrayRef values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

void check_input(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.is_cuda(), op, ": ", name, " must be a CUDA tensor, got a tensor on ", t.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat, op, ": ", name, " must be float32, got ",
              t.scalar_type());
  TORCH_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous, got strides ", dims(t.strides()),
              " for sizes ", dims(t.sizes()), " (call .contiguous() first; it makes a copy)");
}

// ---------------------------------------------------------------------------
// Elementwise kernels: one template per arity, the operation is a functor
// ---------------------------------------------------------------------------

struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};

struct Square {
  __device__ float operator()(float x) const { return x * x; }
};

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Float literals and tanhf keep it in float: with double literals (0.5, 1.0)
// the whole expression, tanh included, is computed in FP64, which the GUIDE
// measured at 2.2x slower than F.gelu on an H100. The order of operations
// follows PyTorch's own kernel (x_cube first), so results agree to an ulp or two.
struct GeluTanh {
  __device__ float operator()(float x) const {
    constexpr float kBeta = 0.7978845608028654f;  // sqrt(2 / pi)
    constexpr float kKappa = 0.044715f;
    const float x_cube = x * x * x;
    const float inner = kBeta * (x + kKappa * x_cube);
    return 0.5f * x * (1.0f + tanhf(inner));
  }
};

// The vector path, taken when every pointer is 16-byte aligned: a thread moves
// float4s (16 bytes per memory instruction), kUnroll of them per trip, and
// issues all its loads before it needs any of them. That keeps enough bytes in
// flight to saturate HBM, as torch.add's own kernel does. In each of the kUnroll
// steps a block's threads touch consecutive float4s, so accesses are coalesced.
// The vector loop covers whole chunks only (kUnroll float4s for every thread of
// a block), so it needs no bounds check between the loads: a check per load
// lets the compiler interleave load, add, store, one float4 at a time.
// The scalar loop takes the rest (fewer than 4096 floats), or everything for an
// unaligned view such as x[1:]. Both are grid-stride loops: any n fits any grid.
constexpr int kUnroll = 4;

// Floats in the whole chunks the vector loop covers; the scalar loop starts there.
__device__ int64_t vector_part(int64_t n) {
  const int64_t chunk = int64_t{blockDim.x} * kUnroll * 4;
  return n / chunk * chunk;
}

template <typename Op>
__device__ float4 apply(Op op, float4 v) {
  return make_float4(op(v.x), op(v.y), op(v.z), op(v.w));
}

template <typename Op>
__device__ float4 apply(Op op, float4 u, float4 v) {
  return make_float4(op(u.x, v.x), op(u.y, v.y), op(u.z, v.z), op(u.w, v.w));
}

template <typename Op>
__global__ void unary_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                             bool vectorized, Op op) {
  const int64_t done = vectorized ? vector_part(n) : 0;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  auto* y4 = reinterpret_cast<float4*>(y);
  const int64_t trip = int64_t{gridDim.x} * blockDim.x * kUnroll;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} * kUnroll + threadIdx.x; i < done / 4;
       i += trip) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = x4[i + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) y4[i + u * blockDim.x] = apply(op, v[u]);
  }
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = done + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    y[i] = op(x[i]);
  }
}

template <typename Op>
__global__ void binary_kernel(const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ y, int64_t n, bool vectorized, Op op) {
  const int64_t done = vectorized ? vector_part(n) : 0;
  const auto* a4 = reinterpret_cast<const float4*>(a);
  const auto* b4 = reinterpret_cast<const float4*>(b);
  auto* y4 = reinterpret_cast<float4*>(y);
  const int64_t trip = int64_t{gridDim.x} * blockDim.x * kUnroll;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} * kUnroll + threadIdx.x; i < done / 4;
       i += trip) {
    float4 u4[kUnroll], v4[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      u4[u] = a4[i + u * blockDim.x];
      v4[u] = b4[i + u * blockDim.x];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) y4[i + u * blockDim.x] = apply(op, u4[u], v4[u]);
  }
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = done + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    y[i] = op(a[i], b[i]);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Blocks for one trip of the loops above over n floats, capped at the grid's x
// limit (the grid-stride loops cover the rest).
int64_t blocks_for(int64_t n, bool vectorized) {
  const int64_t per_block = vectorized ? int64_t{kThreads} * kUnroll * 4 : kThreads;
  return std::min<int64_t>((n + per_block - 1) / per_block, INT_MAX);
}

template <typename Op>
at::Tensor launch_unary(const char* name, const at::Tensor& x, Op op) {
  check_input(name, "x", x);
  const c10::cuda::CUDAGuard device_guard(x.device());  // launch on x's GPU, not on GPU 0
  at::Tensor y = at::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;  // a grid of zero blocks is an invalid launch, not a no-op
  const float* in = x.const_data_ptr<float>();
  float* out = y.mutable_data_ptr<float>();
  const bool vectorized = aligned16(in) && aligned16(out);
  unary_kernel<<<blocks_for(n, vectorized), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      in, out, n, vectorized, op);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

// ---------------------------------------------------------------------------
// Reduction: block sums with warp shuffles, then a second pass over the partials
// ---------------------------------------------------------------------------

// Sum over the 32 lanes of a warp: five shuffle steps, no shared memory.
// Afterwards lane 0 holds the warp's total.
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over a block of kThreads threads; the total is valid in thread 0.
// Every thread must call it (it contains __syncthreads).
__device__ float block_sum(float v) {
  __shared__ float warp_totals[kThreads / 32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < kThreads / 32 ? warp_totals[lane] : 0.0f);
  return v;
}

// Block b writes (sum of its grid-stride share of x[0..n)) / divisor to out[b].
// Launched twice by mean(): many blocks over x (divisor 1), then one block over
// their partial sums (divisor n). No atomics, so the result is the same on
// every run: the order of the additions is fixed by n and the grid size.
// Loads as in the elementwise kernels: kUnroll float4s in flight per thread.
__global__ void __launch_bounds__(kThreads)
    sum_kernel(const float* __restrict__ x, int64_t n, bool vectorized, double divisor,
               float* __restrict__ out) {
  const int64_t done = vectorized ? vector_part(n) : 0;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const int64_t trip = int64_t{gridDim.x} * blockDim.x * kUnroll;
  float acc = 0.0f;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} * kUnroll + threadIdx.x; i < done / 4;
       i += trip) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = x4[i + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = done + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    acc += x[i];
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<float>(acc / divisor);
}

}  // namespace

// ---------------------------------------------------------------------------
// The operators
// ---------------------------------------------------------------------------

at::Tensor add(const at::Tensor& a, const at::Tensor& b) {
  check_input("add", "a", a);
  check_input("add", "b", b);
  TORCH_CHECK(a.device() == b.device(), "add: a and b must be on the same device, got ",
              a.device(), " and ", b.device());
  TORCH_CHECK(a.sizes() == b.sizes(), "add: a and b must have the same sizes, got ", dims(a.sizes()),
              " and ", dims(b.sizes()));
  const c10::cuda::CUDAGuard device_guard(a.device());
  at::Tensor y = at::empty_like(a);
  const int64_t n = a.numel();
  if (n == 0) return y;
  const float* pa = a.const_data_ptr<float>();
  const float* pb = b.const_data_ptr<float>();
  float* out = y.mutable_data_ptr<float>();
  const bool vectorized = aligned16(pa) && aligned16(pb) && aligned16(out);
  binary_kernel<<<blocks_for(n, vectorized), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      pa, pb, out, n, vectorized, Add{});
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

at::Tensor square(const at::Tensor& x) { return launch_unary("square", x, Square{}); }

at::Tensor gelu(const at::Tensor& x) { return launch_unary("gelu", x, GeluTanh{}); }

at::Tensor mean(const at::Tensor& x) {
  check_input("mean", "x", x);
  const c10::cuda::CUDAGuard device_guard(x.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int64_t n = x.numel();
  const float* in = x.const_data_ptr<float>();

  // Pass 1: exactly as many blocks as fit on the GPU at once (one wave that
  // stays resident and loops over x; a second, partial wave would leave most
  // SMs idle at the end). The runtime knows how many blocks of this kernel fit
  // on an SM, given its registers and shared memory. Fewer blocks for small x.
  int blocks_per_sm = 0;
  C10_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, sum_kernel, kThreads, 0));
  const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  const int64_t blocks =
      std::min<int64_t>(blocks_for(n, aligned16(in)), int64_t{blocks_per_sm} * sms);
  at::Tensor partials = at::empty({blocks}, x.options());
  if (blocks > 0) {
    sum_kernel<<<blocks, kThreads, 0, stream>>>(in, n, aligned16(in), 1.0,
                                                partials.mutable_data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }

  // Pass 2: one block adds the partial sums and divides by n. For n == 0 that
  // is 0 / 0 = NaN, which is what torch.mean returns for an empty tensor.
  at::Tensor result = at::empty({}, x.options());
  sum_kernel<<<1, kThreads, 0, stream>>>(partials.const_data_ptr<float>(), blocks, true,
                                         static_cast<double>(n), result.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return result;
}

}  // namespace cuda_course
