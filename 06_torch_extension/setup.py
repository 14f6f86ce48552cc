"""Build route 3: the installable package cuda_course, with its operators registered by TORCH_LIBRARY.

    pip install --no-build-isolation ./06_torch_extension      # into the current environment
    python3 setup.py build --build-lib <dir>                   # what CMake does: into <dir>, in place

--no-build-isolation matters: pip otherwise builds in a fresh environment with whatever torch it
downloads, and the extension must be compiled against the torch it will be loaded into.
On a machine without a GPU, set TORCH_CUDA_ARCH_LIST (e.g. "8.0;9.0+PTX"): PyTorch otherwise asks the
(absent) GPU which architecture to build for.
"""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="cuda_course",
    version="1.0",
    description="The CUDA course's chapter 06 kernels as PyTorch operators (torch.ops.cuda_course)",
    # The "src layout": the Python package lives in src/, so the chapter folder itself (on sys.path
    # for the scripts and tests) has no cuda_course/ without the compiled _C to shadow the built one.
    packages=["cuda_course"],
    package_dir={"": "src"},
    ext_modules=[
        CUDAExtension(
            name="cuda_course._C",
            sources=["csrc/ops.cu", "csrc/register_ops.cpp"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
