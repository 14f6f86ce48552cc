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

namespace cuda_course {
namespace {

constexpr int kThreads = 256;  // threads per block, a multiple of the 32-thread warp

// ---------------------------------------------------------------------------
// Input checks
// ---------------------------------------------------------------------------

// Contiguity is required, not repaired: a silent .contiguous() would copy the
// whole tensor first (an extra read and write of every byte) and hide that cost.
// The caller decides whether the copy is worth it.
void check_input(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.is_cuda(), op, ": ", name, " must be a CUDA tensor, got a tensor on ", t.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat, op, ": ", name, " must be float32, got ",
              t.scalar_type());
  TORCH_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous, got strides ", t.strides(),
              " for sizes ", t.sizes(), " (call .contiguous() first; it makes a copy)");
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

// Each thread handles one float4 (16 bytes) per step when every pointer is
// 16-byte aligned: fewer, wider memory instructions, which is what it takes to
// reach the bandwidth torch.add reaches. The leftover n % 4 elements, or all of
// them for an unaligned view such as x[1:], go one float at a time.
// Both loops are grid-stride loops, so any n fits in any grid.
template <typename Op>
__global__ void unary_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                             bool vectorized, Op op) {
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int64_t done = 0;
  if (vectorized) {
    const auto* x4 = reinterpret_cast<const float4*>(x);
    auto* y4 = reinterpret_cast<float4*>(y);
    for (int64_t i = first; i < n / 4; i += stride) {
      const float4 v = x4[i];
      y4[i] = make_float4(op(v.x), op(v.y), op(v.z), op(v.w));
    }
    done = n / 4 * 4;
  }
  for (int64_t i = done + first; i < n; i += stride) y[i] = op(x[i]);
}

template <typename Op>
__global__ void binary_kernel(const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ y, int64_t n, bool vectorized, Op op) {
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int64_t done = 0;
  if (vectorized) {
    const auto* a4 = reinterpret_cast<const float4*>(a);
    const auto* b4 = reinterpret_cast<const float4*>(b);
    auto* y4 = reinterpret_cast<float4*>(y);
    for (int64_t i = first; i < n / 4; i += stride) {
      const float4 u = a4[i];
      const float4 v = b4[i];
      y4[i] = make_float4(op(u.x, v.x), op(u.y, v.y), op(u.z, v.z), op(u.w, v.w));
    }
    done = n / 4 * 4;
  }
  for (int64_t i = done + first; i < n; i += stride) y[i] = op(a[i], b[i]);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// One thread per float4 (or per float), capped at the grid's x limit; the
// grid-stride loops cover whatever a capped grid does not.
int64_t blocks_for(int64_t n, bool vectorized) {
  const int64_t items = vectorized ? (n + 3) / 4 : n;
  return std::min<int64_t>((items + kThreads - 1) / kThreads, INT_MAX);
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
__global__ void __launch_bounds__(kThreads)
    sum_kernel(const float* __restrict__ x, int64_t n, bool vectorized, double divisor,
               float* __restrict__ out) {
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  float acc = 0.0f;
  int64_t done = 0;
  if (vectorized) {
    const auto* x4 = reinterpret_cast<const float4*>(x);
    for (int64_t i = first; i < n / 4; i += stride) {
      const float4 v = x4[i];
      acc += (v.x + v.y) + (v.z + v.w);
    }
    done = n / 4 * 4;
  }
  for (int64_t i = done + first; i < n; i += stride) acc += x[i];
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
  TORCH_CHECK(a.sizes() == b.sizes(), "add: a and b must have the same sizes, got ", a.sizes(),
              " and ", b.sizes());
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

  // Pass 1: 8 blocks of 256 threads per SM is 2048 threads, a full SM on
  // sm_80/sm_90, and one float4 load in flight per thread is enough to keep
  // HBM busy. Fewer blocks when x is small (each thread gets >= one float4).
  const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  const int64_t blocks = std::min<int64_t>((n + 4 * kThreads - 1) / (4 * kThreads), 8 * sms);
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
