"""Build route 3: the installable package cuda_course, with its operators registered by TORCH_LIBRARY.

    python3 -m pip install "setuptools>=70.1,<82" ninja              # build requirements, first
    TORCH_CUDA_ARCH_LIST=9.0 python3 -m pip install --no-build-isolation ./06_torch_extension
    python3 setup.py build --build-lib <dir>             # what CMake does: into <dir>, in place

--no-build-isolation matters: pip otherwise builds in a fresh environment with whatever torch it
downloads, and the extension must be compiled against the torch it will be loaded into. Without
isolation pip installs no build requirements (pyproject.toml lists them): install them first.
On a machine without a GPU, set TORCH_CUDA_ARCH_LIST (e.g. "8.0;9.0+PTX"): PyTorch otherwise asks the
(absent) GPU which architecture to build for.
"""

import os
import sys
from importlib.metadata import PackageNotFoundError, version

import setuptools
from setuptools import setup


def require(condition: bool, message: str) -> None:
    """Stops the build with one clear line instead of a traceback from deep inside setuptools."""
    if not condition:
        sys.exit(f"cuda_course: {message}")


def has_wheel() -> bool:
    try:
        version("wheel")
        return True
    except PackageNotFoundError:
        return False


# pip builds a wheel (bdist_wheel; editable_wheel for pip install -e); setuptools older than 70.1 needs
# the separate `wheel` package for that, and fails with "invalid command 'bdist_wheel'" without it (a fresh
# Python 3.11 venv has setuptools 65). `setup.py build`, CMake's route, needs no wheel.
setuptools_version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
builds_a_wheel = any(command in sys.argv for command in ("bdist_wheel", "editable_wheel"))
require(not builds_a_wheel or setuptools_version >= (70, 1) or has_wheel(),
        f"setuptools {setuptools.__version__} cannot build a wheel without the `wheel` package: "
        'run python3 -m pip install "setuptools>=70.1,<82" ninja, then install again')
try:
    import torch
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension
except ImportError as error:
    require(False, f"cannot import torch ({error}). Build in the environment that has the torch you will "
                   "use, with pip install --no-build-isolation: the extension must match that torch")


class BuildForNamedArchitectures(BuildExtension):
    """PyTorch's build, after one check: without TORCH_CUDA_ARCH_LIST it asks the GPU which architecture
    to compile for, and where there is no GPU it fails with an IndexError in _get_cuda_arch_flags."""

    def build_extensions(self) -> None:
        require(bool(os.environ.get("TORCH_CUDA_ARCH_LIST")) or torch.cuda.is_available(),
                "no GPU here to ask which architecture to compile for: name it, e.g. "
                'TORCH_CUDA_ARCH_LIST="9.0" (H100) or "8.0;9.0+PTX" (A100, H100 and PTX for newer GPUs)')
        super().build_extensions()


setup(
    name="cuda_course",
    version="1.1",
    description="The CUDA course's chapter 06 kernels as PyTorch operators (torch.ops.cuda_course)",
    # The "src layout": the Python package lives in src/, so the chapter folder itself has no
    # cuda_course/ without the compiled _C to shadow the built one.
    packages=["cuda_course"],
    package_dir={"": "src"},
    ext_modules=[
        CUDAExtension(
            name="cuda_course._C",
            sources=["csrc/ops.cu", "csrc/register_ops.cpp"],
            # -lineinfo: compute-sanitizer and ncu can name the source line of a kernel's instruction.
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "-lineinfo"]},
            # The C++ runtime PyTorch itself loads: the shared libstdc++.so.6, named by file. A GCC
            # whose libstdc++.so link points at nothing (a relocated copy of the system's GCC) links
            # libstdc++.a without a word, and the second, static runtime in the process crashes when
            # numbers are streamed into a TORCH_CHECK message (docs/pitfalls.md: "Two C++ runtimes in
            # one process"). Named before the compiler's own -lstdc++, the shared one wins.
            extra_link_args=["-l:libstdc++.so.6"],
        )
    ],
    cmdclass={"build_ext": BuildForNamedArchitectures},
)
