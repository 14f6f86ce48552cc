// The chapter's operators and their backward kernels: the C++ functions that check their
// inputs and launch the kernels of elementwise.cuh and reduce.cuh. Written once, compiled by
// all three build routes (see ops.h).
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

#include "elementwise.cuh"
#include "reduce.cuh"

namespace cuda_course {
namespace {

// ---------------------------------------------------------------------------
// Input checks
// ---------------------------------------------------------------------------

// Contiguity is required, not repaired: a silent .contiguous() would copy the
// whole tensor first (an extra read and write of every byte) and hide that cost.
// The caller decides whether the copy is worth it.
void check_input(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.is_cuda(), op, ": ", name, " must be a CUDA tensor, got a tensor on ", t.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat, op, ": ", name, " must be float32, got ", t.scalar_type());
  TORCH_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous, got strides ", t.strides(),
              " for sizes ", t.sizes(), " (call .contiguous() first; it makes a copy)");
}

// Two inputs of an elementwise operator: each checked, then the pair.
void check_pair(const char* op, const char* name_a, const at::Tensor& a, const char* name_b,
                const at::Tensor& b) {
  check_input(op, name_a, a);
  check_input(op, name_b, b);
  TORCH_CHECK(a.device() == b.device(), op, ": ", name_a, " and ", name_b,
              " must be on the same device, got ", a.device(), " and ", b.device());
  TORCH_CHECK(a.sizes() == b.sizes(), op, ": ", name_a, " and ", name_b, " must have the same sizes, got ",
              a.sizes(), " and ", b.sizes());
}

// ---------------------------------------------------------------------------
// The operations, one functor each (the kernels are templates over them)
// ---------------------------------------------------------------------------

struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};

struct Square {
  __device__ float operator()(float x) const { return x * x; }
};

// d(x^2)/dx = 2x. (2x) g, in the order of PyTorch's own backward of x * x and torch.square,
// so the gradients agree bit for bit.
struct SquareBackward {
  __device__ float operator()(float grad, float x) const { return grad * (2.0f * x); }
};

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Float literals and tanhf keep it in float: with double literals (0.5, 1.0)
// the whole expression, tanh included, is computed in FP64, about 2x slower on
// an H100 (see the README's pitfalls). The order of operations follows
// PyTorch's own kernel (x_cube first), so results agree to an ulp or two.
constexpr float kBeta = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kKappa = 0.044715f;

struct GeluTanh {
  __device__ float operator()(float x) const {
    const float x_cube = x * x * x;
    const float inner = kBeta * (x + kKappa * x_cube);
    return 0.5f * x * (1.0f + tanhf(inner));
  }
};

// The derivative of the GELU above, times grad, in one pass: read grad and x, write one
// float. With t = tanh(inner):
//   d/dx [0.5 x (1 + t)] = 0.5 (1 + t) + 0.5 x (1 - t^2) kBeta (1 + 3 kKappa x^2).
// Written as separate PyTorch operations it would be a dozen kernels, each reading and
// writing whole tensors. The order follows PyTorch's gelu_backward kernel.
// [excerpt:gelu-backward-functor]
struct GeluTanhBackward {
  __device__ float operator()(float grad, float x) const {
    const float x_sq = x * x;
    const float x_cube = x_sq * x;
    const float t = tanhf(kBeta * (x + kKappa * x_cube));
    const float left = 0.5f * x;
    const float right = 1.0f + t;
    const float left_derivative = 0.5f * right;
    const float tanh_derivative = 1.0f - t * t;
    const float inner_derivative = kBeta * (1.0f + 3.0f * kKappa * x_sq);
    const float right_derivative = left * tanh_derivative * inner_derivative;
    return grad * (left_derivative + right_derivative);
  }
};
// [/excerpt:gelu-backward-functor]

// The backward of mean: d mean / d x_i = 1/n, so every element of the gradient is the one
// incoming gradient times 1/n, a broadcast. The gradient is a 0-dim tensor on the GPU: each
// thread reads it there (no copy to the CPU, no synchronization). Computed as grad * (1/n) with
// 1/n rounded from double, as PyTorch's division by a number does, so the two agree bit for bit. y is our own fresh
// allocation, 16-byte aligned: float4 stores, then the last n % 4 floats.
__global__ void __launch_bounds__(kThreads)
    broadcast_kernel(const float* __restrict__ grad, float inv_n, float* __restrict__ y, int64_t n) {
  const float value = *grad * inv_n;
  auto* y4 = reinterpret_cast<float4*>(y);
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  for (int64_t i = first; i < n / 4; i += stride) y4[i] = make_float4(value, value, value, value);
  for (int64_t i = n / 4 * 4 + first; i < n; i += stride) y[i] = value;
}

// ---------------------------------------------------------------------------
// Launching
// ---------------------------------------------------------------------------

// Blocks for one trip of a kernel's loop over n floats, each block taking per_block floats per
// trip, capped at the grid's x limit: the grid-stride loops cover the rest.
int64_t blocks_for(int64_t n, int64_t per_block = kChunk) {
  return std::min<int64_t>((n + per_block - 1) / per_block, INT_MAX);
}

// y = op(inputs...) elementwise, on the inputs' GPU and PyTorch's current stream.
template <typename Op, int N>
at::Tensor launch_elementwise(Op op, const at::Tensor (&inputs)[N]) {
  const c10::cuda::CUDAGuard device_guard(inputs[0].device());  // inputs on cuda:1? launch there
  at::Tensor y = at::empty_like(inputs[0]);  // same shape as the input (the notes returned 1-D)
  const int64_t n = y.numel();
  if (n == 0) return y;  // a grid of zero blocks is an invalid launch, not a no-op
  Operands<N> t{};
  const void* pointers[N + 1];
  for (int j = 0; j < N; ++j) pointers[j] = t.x[j] = inputs[j].template const_data_ptr<float>();
  pointers[N] = t.y = y.mutable_data_ptr<float>();
  t.n = n;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  // The widest vectors every pointer's alignment allows: float4s, float2s, or one float at a time.
  if ((t.split = split(pointers, N + 1, n, 4)).aligned_alike) {
    vector_kernel<4><<<blocks_for(n, chunk(4)), kThreads, 0, stream>>>(op, t);
  } else if ((t.split = split(pointers, N + 1, n, 2)).aligned_alike) {
    vector_kernel<2><<<blocks_for(n, chunk(2)), kThreads, 0, stream>>>(op, t);
  } else if (n <= kMaxInt32Elements) {
    scalar_kernel<int32_t><<<blocks_for(n, int64_t{kThreads} * kScalarUnroll), kThreads, 0, stream>>>(op, t);
  } else {
    scalar_kernel<int64_t><<<blocks_for(n, int64_t{kThreads} * kScalarUnroll), kThreads, 0, stream>>>(op, t);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

}  // namespace

// ---------------------------------------------------------------------------
// The operators
// ---------------------------------------------------------------------------

at::Tensor add(const at::Tensor& a, const at::Tensor& b) {
  check_pair("add", "a", a, "b", b);
  return launch_elementwise(Add{}, {a, b});
}

at::Tensor square(const at::Tensor& x) {
  check_input("square", "x", x);
  return launch_elementwise(Square{}, {x});
}

// [excerpt:gelu]
at::Tensor gelu(const at::Tensor& x) {
  check_input("gelu", "x", x);
  return launch_elementwise(GeluTanh{}, {x});
}
// [/excerpt:gelu]

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
  C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, sum_kernel, kThreads, 0));
  const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  const int64_t blocks = std::min<int64_t>(blocks_for(n), int64_t{blocks_per_sm} * sms);
  at::Tensor partials = at::empty({blocks}, x.options());
  const void* input[] = {in};
  if (blocks > 0) {
    sum_kernel<<<blocks, kThreads, 0, stream>>>(in, n, split(input, 1, n), 1.0,
                                                partials.mutable_data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }

  // Pass 2: one block adds the partial sums and divides by n. For n == 0 that
  // is 0 / 0 = NaN, which is what torch.mean returns for an empty tensor.
  at::Tensor result = at::empty({}, x.options());
  const float* partial_sums = partials.const_data_ptr<float>();
  const void* second[] = {partial_sums};
  sum_kernel<<<1, kThreads, 0, stream>>>(partial_sums, blocks, split(second, 1, blocks),
                                         static_cast<double>(n), result.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return result;
}

// ---------------------------------------------------------------------------
// The backward kernels' operators
// ---------------------------------------------------------------------------

at::Tensor square_backward(const at::Tensor& grad, const at::Tensor& x) {
  check_pair("square_backward", "grad", grad, "x", x);
  return launch_elementwise(SquareBackward{}, {grad, x});
}

at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& x) {
  check_pair("gelu_backward", "grad", grad, "x", x);
  return launch_elementwise(GeluTanhBackward{}, {grad, x});
}

at::Tensor mean_backward(const at::Tensor& grad, c10::SymIntArrayRef size) {
  check_input("mean_backward", "grad", grad);
  TORCH_CHECK(grad.dim() == 0, "mean_backward: grad must be 0-dim (mean's result), got sizes ", grad.sizes());
  const c10::cuda::CUDAGuard device_guard(grad.device());
  at::Tensor y = at::empty_symint(size, grad.options());
  const int64_t n = y.numel();
  if (n == 0) return y;
  TORCH_INTERNAL_ASSERT(misalignment(y.const_data_ptr()) == 0, "a fresh allocation is 16-byte aligned");
  broadcast_kernel<<<blocks_for(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      grad.const_data_ptr<float>(), static_cast<float>(1.0 / static_cast<double>(n)), y.mutable_data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

}  // namespace cuda_course
