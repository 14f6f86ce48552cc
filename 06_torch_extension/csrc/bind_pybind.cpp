// Build route 1, the notes' way: a pybind11 module compiled on first use by
// torch.utils.cpp_extension.load (see routes.py). Each function becomes an
// attribute of the loaded Python module: module.add(a, b).
//
// Simple, but the functions are invisible to PyTorch itself: torch.compile
// cannot trace through them and torch.library.opcheck cannot test them.
// register_ops.cpp is the way that fixes both.
#include <torch/extension.h>

#include "ops.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "The chapter's CUDA operators as a pybind11 module";
  m.def("add", &cuda_course::add, "a + b for contiguous float32 CUDA tensors of the same shape");
  m.def("square", &cuda_course::square, "x * x");
  m.def("gelu", &cuda_course::gelu, "GELU, tanh approximation");
  m.def("mean", &cuda_course::mean, "mean of all elements, as a 0-dim tensor");
}
