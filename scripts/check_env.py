#!/usr/bin/env python3
"""Checks the course's environment: prints the versions that matter, then computes on the GPU.

    python3 scripts/check_env.py [--nvcc PATH]

Versions: Python, nvcc, CMake, the NVIDIA driver (nvidia-smi, and the CUDA version the
driver supports), the GPU and its compute capability, PyTorch (and the CUDA it was built
with), Triton. Then a small computation through PyTorch: a + b on the GPU against the
same sum on the CPU, which must agree exactly (small whole numbers are exact in float32),
and, where Triton is installed, the same sum by a Triton kernel.

Exit codes, as the course's programs: 0 all checks passed, 1 a result was wrong or a
computation failed, 77 no usable GPU (no PyTorch, a PyTorch without CUDA, or no GPU).
"""
import argparse
import ctypes
import json
import platform
import re
import shutil
import subprocess
import sys

SKIPPED = 77


def run(command):
    """The output of a command, or None if it cannot be run."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def show(name, value):
    print("  %-28s %s" % (name, value))


def nvcc_version(nvcc):
    out = run([nvcc, "--version"]) if nvcc else None
    m = re.search(r"release (\d+)\.(\d+), (V[\d.]+)", out or "")
    return (int(m.group(1)), int(m.group(2)), m.group(3)) if m else None


def driver_cuda_version():
    """The newest CUDA version the installed driver supports (cuDriverGetVersion), or None."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int(0)
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return version.value // 1000, (version.value % 1000) // 10


def print_versions(nvcc):
    print("Versions")
    show("python", "%s (%s)" % (platform.python_version(), sys.executable))
    toolkit = nvcc_version(nvcc)
    show("nvcc", "%s (%s)" % (toolkit[2], nvcc) if toolkit else "not found (install the CUDA toolkit; "
         "put its bin/ on PATH)")
    cmake = run(["cmake", "--version"])
    show("cmake", cmake.splitlines()[0].replace("cmake version ", "") if cmake else "not found")
    smi = run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total",
               "--format=csv,noheader"]) if shutil.which("nvidia-smi") else None
    if smi:
        for i, line in enumerate(smi.splitlines()):
            show("GPU %d (nvidia-smi)" % i, line)
    else:
        show("nvidia-smi", "not found or no GPU (the NVIDIA driver is not installed or sees no device)")
    driver = driver_cuda_version()
    show("driver supports CUDA up to", "%d.%d" % driver if driver else "unknown (no libcuda.so.1)")
    if driver and toolkit and driver < toolkit[:2]:
        print("  WARNING: the driver supports CUDA %d.%d, older than this nvcc (%d.%d): programs built "
              "with it stop with cudaErrorInsufficientDriver. Update the driver." % (driver + toolkit[:2]))
    return toolkit


def print_python_packages(toolkit):
    """Versions of PyTorch and Triton; returns the torch module, or None."""
    try:
        import torch
    except ImportError:
        show("torch", "not installed (pip install torch==2.11.0: CUDA 13.0 wheels from PyPI)")
        torch = None
    if torch is not None:
        show("torch", torch.__version__)
        show("torch.version.cuda", torch.version.cuda or "None (a CPU-only build)")
        cuda = torch.version.cuda
        if cuda and toolkit and int(cuda.split(".")[0]) != toolkit[0]:
            print("  WARNING: PyTorch was built with CUDA %s but nvcc is %d.%d: building a PyTorch "
                  "extension (chapter 06) needs the same CUDA major version." % (cuda, toolkit[0], toolkit[1]))
    if triton is not None:
        show("triton", triton.__version__)
    else:
        show("triton", "not installed (it comes with torch on Linux x86-64; pip install triton)")
    return torch


try:  # Triton is optional: without it the check runs PyTorch's sum only
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
        """c = a + b, one block of BLOCK elements per program."""
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        a = tl.load(a_ptr + offsets, mask=mask)
        b = tl.load(b_ptr + offsets, mask=mask)
        tl.store(c_ptr + offsets, a + b, mask=mask)
except ImportError:
    triton = None


def triton_add(torch, a, b):
    """a + b by the Triton kernel (compiled for this GPU at the first call)."""
    c = torch.empty_like(a)
    n = a.numel()
    add_kernel[(triton.cdiv(n, 1024),)](a, b, c, n, BLOCK=1024)
    return c


def gpu_check(torch):
    """The computation; returns the exit code."""
    print("GPU computation")
    if torch is None:
        print("  skipped: PyTorch is not installed, so there is nothing to compute with.")
        return SKIPPED
    if not torch.version.cuda:
        print("  skipped: this PyTorch is a CPU-only build (torch.version.cuda is None).")
        return SKIPPED
    if not torch.cuda.is_available():
        print("  skipped: PyTorch sees no usable CUDA GPU (no driver, no device, or "
              "CUDA_VISIBLE_DEVICES hides it; nvidia-smi tells which).")
        return SKIPPED
    props = torch.cuda.get_device_properties(0)
    show("device", "%s, compute capability %d.%d, %d SMs, %.1f GiB"
         % (props.name, props.major, props.minor, props.multi_processor_count, props.total_memory / 2**30))
    show("PyTorch built for", " ".join(torch.cuda.get_arch_list()))

    # Whole numbers below 2^24 are exact in float32, so the sums must match bit for bit.
    n = (1 << 20) + 3
    a = torch.arange(n, dtype=torch.float32)
    b = 2 * torch.arange(n, dtype=torch.float32)
    expected = a + b
    try:
        results = {"a + b, PyTorch on the GPU": (a.cuda() + b.cuda()).cpu()}
        if triton is not None:
            results["a + b, a Triton kernel"] = triton_add(torch, a.cuda(), b.cuda()).cpu()
    except Exception as err:  # any CUDA or compiler failure is a failed check, reported as such
        print("  FAILED: the computation raised %s: %s" % (type(err).__name__, err))
        return 1
    failures = 0
    for what, got in results.items():
        error = (got.double() - expected.double()).abs().max().item()
        if error != error or not torch.equal(got, expected):
            failures += 1
        print("Max error: %g  (%s, %d elements, against the CPU)" % (error, what, n))
    print("Environment check %s." % ("FAILED" if failures else "passed"))
    # The course's machine-readable last line (see common/include/tutorial/verify.hpp).
    summary = {"program": "check_env", "checks": len(results), "failed": failures,
               "exact": len(results), "goals": [], "figures": {}}
    print("\nSUMMARY " + json.dumps(summary, separators=(",", ":")))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc",
                        help="the nvcc to report (default: the one on PATH)")
    args = parser.parse_args()
    toolkit = print_versions(args.nvcc)
    torch = print_python_packages(toolkit)
    return gpu_check(torch)


if __name__ == "__main__":
    sys.exit(main())
