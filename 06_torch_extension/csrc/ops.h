// The chapter's four operators, as plain C++ functions on tensors.
//
// ops.cu defines them once. Each build route only adds a binding on top:
//   bind_pybind.cpp   -> torch.utils.cpp_extension.load   (pybind11 module)
//   load_inline       -> generates its own pybind11 binding from a declaration
//   register_ops.cpp  -> TORCH_LIBRARY, the installable package (torch.ops.cuda_course.*)
#pragma once

#include <ATen/core/Tensor.h>

namespace cuda_course {

// Every function takes contiguous float32 CUDA tensors and refuses anything
// else with a message that names the operator and the offending argument.
at::Tensor add(const at::Tensor& a, const at::Tensor& b);  // a + b, same shapes
at::Tensor square(const at::Tensor& x);                    // x * x
at::Tensor gelu(const at::Tensor& x);                      // GELU, tanh approximation
at::Tensor mean(const at::Tensor& x);                      // mean of all elements (0-dim tensor)

}  // namespace cuda_course
