"""Build routes 1 and 2: compile csrc/ops.cu when Python asks for it (JIT), with ninja and nvcc.

    python3 06_torch_extension/demos/routes.py                # build both (verbose), then try them
    TORCH_CUDA_ARCH_LIST=9.0 python3 06_torch_extension/demos/routes.py --build-only   # no GPU needed

Route 3, the installable package, is setup.py + src/cuda_course/. As a module:

    import routes
    module = routes.load_pybind_module()   # the notes' way: cpp_extension.load of a pybind11 module
    gelu = routes.load_inline_gelu()       # the lectures' way: cpp_extension.load_inline from strings

The first call compiles (tens of seconds); later calls find the build up to date and only load it.
The build goes to $CUDA_COURSE_JIT_DIR/<name> if that is set (the ctest run sets it inside the build
tree), else to PyTorch's default, ~/.cache/torch_extensions/<python>_<cuda>/<name>.
"""

import argparse
import os
import sys
from pathlib import Path

CSRC = Path(__file__).resolve().parents[1] / "csrc"
NVCC_FLAGS = ["-O3", "-lineinfo"]  # -lineinfo: compute-sanitizer and ncu name a kernel's source lines
LINK_FLAGS = ["-l:libstdc++.so.6"]  # the shared C++ runtime, as PyTorch's: setup.py says why


def _build_directory(name: str) -> str | None:
    root = os.environ.get("CUDA_COURSE_JIT_DIR")
    if not root:
        return None  # PyTorch's default location
    path = Path(root) / name
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def load_pybind_module(verbose: bool = False):
    """Route 1: compiles ops.cu and bind_pybind.cpp into a Python module with add/square/gelu/mean."""
    from torch.utils import cpp_extension

    name = "cuda_course_pybind"
    return cpp_extension.load(
        name=name,
        sources=[str(CSRC / "ops.cu"), str(CSRC / "bind_pybind.cpp")],
        extra_cuda_cflags=NVCC_FLAGS,
        extra_ldflags=LINK_FLAGS,
        build_directory=_build_directory(name),
        verbose=verbose,
    )


def load_inline_gelu(verbose: bool = False):
    """Route 2: the CUDA source and a C++ declaration as strings; load_inline writes the binding.

    The lecture pasted its kernel into a Python string; here the string is read from the same file the
    other routes compile, so the kernel exists once. `functions` names what to expose: load_inline
    generates the pybind11 module for it from the declaration in cpp_sources.
    """
    from torch.utils import cpp_extension

    name = "cuda_course_inline"
    return cpp_extension.load_inline(
        name=name,
        cpp_sources='#include "ops.h"\nusing cuda_course::gelu;',
        cuda_sources=(CSRC / "ops.cu").read_text(),
        functions=["gelu"],
        extra_include_paths=[str(CSRC)],
        extra_cuda_cflags=NVCC_FLAGS,
        extra_ldflags=LINK_FLAGS,
        build_directory=_build_directory(name),
        verbose=verbose,
    ).gelu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-only", action="store_true",
                        help="compile both routes and stop (works without a GPU if TORCH_CUDA_ARCH_LIST is set)")
    parser.add_argument("--quiet", action="store_true", help="do not show ninja's and nvcc's command lines")
    args = parser.parse_args()  # --help and bad options end here, before anything is built

    import torch

    from summary import Summary
    from timing import EXIT_NO_GPU, describe_gpu

    has_gpu = torch.cuda.is_available()
    if not has_gpu and not (args.build_only and os.environ.get("TORCH_CUDA_ARCH_LIST")):
        # Without a GPU, PyTorch cannot ask the device which architecture to compile for: cpp_extension
        # would fail with an IndexError in _get_cuda_arch_flags. TORCH_CUDA_ARCH_LIST answers instead.
        print("No usable CUDA GPU (torch.cuda.is_available() is False): skipping. To compile the routes "
              "anyway, name the architectures: TORCH_CUDA_ARCH_LIST=9.0 python3 routes.py --build-only",
              file=sys.stderr)
        return EXIT_NO_GPU

    summary = Summary()
    module = load_pybind_module(verbose=not args.quiet)
    inline_gelu = load_inline_gelu(verbose=not args.quiet)
    summary.expect("route 1 (cpp_extension.load) built a module with add, square, gelu and mean",
                   all(hasattr(module, f) for f in ("add", "square", "gelu", "mean")))
    if has_gpu and not args.build_only:
        import checks

        print(f"Trying them on {describe_gpu()}")
        x = torch.linspace(-3, 3, 7, device="cuda")
        print("x            ", [round(v, 4) for v in x.tolist()])
        print("module.gelu  ", [round(v, 4) for v in module.gelu(x).tolist()])
        print("inline gelu  ", [round(v, 4) for v in inline_gelu(x).tolist()])
        summary.exact("route 1: module.add(x, x) vs x + x", checks.max_abs_error(module.add(x, x), x + x))
        summary.expect("routes 1 and 2: gelu within tolerance of F.gelu",
                       checks.gelu_check(module.gelu(x), x)[1] and checks.gelu_check(inline_gelu(x), x)[1])
    return summary.finish("06_torch_extension_routes")


if __name__ == "__main__":
    sys.exit(main())
