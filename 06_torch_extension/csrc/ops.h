// The chapter's operators and their gradients, as plain C++ functions on tensors.
//
// ops.cu defines them once. Each build route only adds a binding on top:
//   bind_pybind.cpp   -> torch.utils.cpp_extension.load   (pybind11 module)
//   load_inline       -> generates its own pybind11 binding from a declaration
//   register_ops.cpp  -> TORCH_LIBRARY, the installable package (torch.ops.cuda_course.*),
//                        whose Python side (src/cuda_course/__init__.py) connects each
//                        forward to its backward with torch.library.register_autograd
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymIntArrayRef.h>

namespace cuda_course {

// Every function takes contiguous float32 CUDA tensors and refuses anything
// else with a message that names the operator and the offending argument.
at::Tensor add(const at::Tensor& a, const at::Tensor& b);  // a + b, same shapes
at::Tensor square(const at::Tensor& x);                    // x * x
at::Tensor gelu(const at::Tensor& x);                      // GELU, tanh approximation
at::Tensor mean(const at::Tensor& x);                      // mean of all elements (0-dim tensor)

// Backward kernels: given grad = dL/dy, they return dL/dx. (add needs none:
// its gradient passes through unchanged.)
at::Tensor square_backward(const at::Tensor& grad, const at::Tensor& x);  // 2 x grad
at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& x);    // GELU'(x) grad, fused
at::Tensor mean_backward(const at::Tensor& grad, c10::SymIntArrayRef size);  // grad / n everywhere

}  // namespace cuda_course
