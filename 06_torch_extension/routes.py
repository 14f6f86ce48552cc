"""Build routes 1 and 2: compile csrc/ops.cu when Python asks for it (JIT), with ninja and nvcc.

Route 3, the installable package, is setup.py + cuda_course/.

    import routes
    module = routes.load_pybind_module()   # the notes' way: cpp_extension.load of a pybind11 module
    gelu = routes.load_inline_gelu()       # the lectures' way: cpp_extension.load_inline from strings

The first call compiles (tens of seconds); later calls find the build up to date and only load it.
The build goes to $CUDA_COURSE_JIT_DIR/<name> if that is set (the ctest run sets it inside the build
tree), else to PyTorch's default, ~/.cache/torch_extensions/<python>_<cuda>/<name>.
"""

import os
from pathlib import Path

import torch
from torch.utils import cpp_extension

CSRC = Path(__file__).resolve().parent / "csrc"
NVCC_FLAGS = ["-O3"]


def _build_directory(name: str) -> str | None:
    root = os.environ.get("CUDA_COURSE_JIT_DIR")
    if not root:
        return None  # PyTorch's default location
    path = Path(root) / name
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def load_pybind_module(verbose: bool = False):
    """Route 1: compiles ops.cu and bind_pybind.cpp into a Python module with add/square/gelu/mean."""
    name = "cuda_course_pybind"
    return cpp_extension.load(
        name=name,
        sources=[str(CSRC / "ops.cu"), str(CSRC / "bind_pybind.cpp")],
        extra_cuda_cflags=NVCC_FLAGS,
        build_directory=_build_directory(name),
        verbose=verbose,
    )


def load_inline_gelu(verbose: bool = False):
    """Route 2: the CUDA source and a C++ declaration as strings; load_inline writes the binding.

    The lecture pasted its kernel into a Python string; here the string is read from the same file the
    other routes compile, so the kernel exists once. `functions` names what to expose: load_inline
    generates the pybind11 module for it from the declaration in cpp_sources.
    """
    name = "cuda_course_inline"
    return cpp_extension.load_inline(
        name=name,
        cpp_sources='#include "ops.h"\nusing cuda_course::gelu;',
        cuda_sources=(CSRC / "ops.cu").read_text(),
        functions=["gelu"],
        extra_include_paths=[str(CSRC)],
        extra_cuda_cflags=NVCC_FLAGS,
        build_directory=_build_directory(name),
        verbose=verbose,
    ).gelu


if __name__ == "__main__":
    # Builds both (verbose: you see ninja and nvcc at work), then tries them if there is a GPU.
    # Without a GPU, set TORCH_CUDA_ARCH_LIST (e.g. "9.0") or PyTorch cannot pick an architecture.
    module = load_pybind_module(verbose=True)
    inline_gelu = load_inline_gelu(verbose=True)
    if torch.cuda.is_available():
        x = torch.linspace(-3, 3, 7, device="cuda")
        print("x            ", x.tolist())
        print("module.add   ", module.add(x, x).tolist())
        print("module.gelu  ", module.gelu(x).tolist())
        print("inline gelu  ", inline_gelu(x).tolist())
