// Build route 3, the current way: register the functions as PyTorch operators.
//
// TORCH_LIBRARY declares each operator's schema in the namespace cuda_course;
// TORCH_LIBRARY_IMPL attaches our function to a dispatch key. The operators are
// then torch.ops.cuda_course.add and so on, known to the dispatcher: callable
// from Python and C++, traceable by torch.compile (with the fake implementations
// in cuda_course/__init__.py), testable with torch.library.opcheck. The backward
// kernels are operators too; __init__.py tells autograd to call them
// (torch.library.register_autograd).
#include <Python.h>
#include <torch/library.h>

#include "ops.h"

// Importing cuda_course._C from Python loads this shared library, which runs
// the static registrations below. Python needs an init function to import it;
// the module itself stays empty (the operators live in torch.ops, not here).
extern "C" PyObject* PyInit__C(void) {
  static PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C",
                                   "Registers the torch.ops.cuda_course operators", -1, nullptr};
  return PyModule_Create(&module_def);
}

// [excerpt:library]
TORCH_LIBRARY(cuda_course, m) {
  m.def("add(Tensor a, Tensor b) -> Tensor");
  m.def("square(Tensor x) -> Tensor");
  m.def("gelu(Tensor x) -> Tensor");
  m.def("mean(Tensor x) -> Tensor");
  m.def("square_backward(Tensor grad, Tensor x) -> Tensor");
  m.def("gelu_backward(Tensor grad, Tensor x) -> Tensor");
  m.def("mean_backward(Tensor grad, SymInt[] size) -> Tensor");  // SymInt: torch.compile may trace sizes
}
// [/excerpt:library]

// CPU tensors reach the same functions, whose first check refuses them with
// "must be a CUDA tensor". Without the CPU block the dispatcher's own, longer
// message ("Could not run 'cuda_course::add' with arguments from the 'CPU'
// backend...") would be the answer.
namespace {
void register_kernels(torch::Library& m) {
  m.impl("add", &cuda_course::add);
  m.impl("square", &cuda_course::square);
  m.impl("gelu", &cuda_course::gelu);
  m.impl("mean", &cuda_course::mean);
  m.impl("square_backward", &cuda_course::square_backward);
  m.impl("gelu_backward", &cuda_course::gelu_backward);
  m.impl("mean_backward", &cuda_course::mean_backward);
}
}  // namespace

TORCH_LIBRARY_IMPL(cuda_course, CUDA, m) { register_kernels(m); }
TORCH_LIBRARY_IMPL(cuda_course, CPU, m) { register_kernels(m); }
