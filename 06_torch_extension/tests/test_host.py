"""Tests that need no GPU: the built package's registration, its input checks on CPU and meta
tensors, opcheck on meta tensors, the architecture-list translation, and the no-GPU exit code."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.library import opcheck

from arch_list import FALLBACK, torch_arch_list

CHAPTER = Path(__file__).resolve().parents[1]
OPS = ["add", "square", "gelu", "mean"]


def args_for(op: str, *tensors: torch.Tensor) -> tuple:
    return tensors[:2] if op == "add" else tensors[:1]


# --- CMAKE_CUDA_ARCHITECTURES -> TORCH_CUDA_ARCH_LIST ---------------------------------------------

@pytest.mark.parametrize("cmake, torch_list", [
    ("80-real;90", "8.0;9.0+PTX"),     # the course default
    ("90", "9.0+PTX"),                 # plain = machine code + PTX
    ("90-real", "9.0"),
    ("75;80-real;86-real;89", "7.5+PTX;8.0;8.6;8.9+PTX"),
    ("90a-real;100a-real", "9.0a;10.0a"),
    ("120-real", "12.0"),               # two-digit major
    ("80-real;80", "8.0+PTX"),          # duplicates merge
])
def test_arch_list_translates(cmake, torch_list):
    assert torch_arch_list(cmake) == (torch_list, [])


@pytest.mark.parametrize("cmake, note", [
    ("90-virtual", "cannot build PTX alone"),
    ("100f-real", "no family"),
])
def test_arch_list_notes_what_it_cannot_translate(cmake, note):
    _, notes = torch_arch_list(cmake)
    assert any(note in n for n in notes)


@pytest.mark.parametrize("cmake", ["native", "all", "all-major", "OFF", "", "90;native"])
def test_arch_list_falls_back(cmake):
    value, notes = torch_arch_list(cmake)
    assert value == FALLBACK and notes


def test_arch_list_command_line():
    result = subprocess.run([sys.executable, str(CHAPTER / "arch_list.py"), "80-real;90"],
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "8.0;9.0+PTX"


# --- The package: registration and input checks ----------------------------------------------------

def test_operators_are_registered(package):
    for op in OPS:
        assert hasattr(torch.ops.cuda_course, op)
    assert str(torch.ops.cuda_course.add.default._schema) == "cuda_course::add(Tensor a, Tensor b) -> Tensor"


@pytest.mark.parametrize("op", OPS)
def test_cpu_tensors_are_refused_clearly(package, op):
    x = torch.ones(8)
    with pytest.raises(RuntimeError, match=rf"^{op}: \w+ must be a CUDA tensor, got a tensor on cpu"):
        getattr(package, op)(*args_for(op, x, x))


# Meta tensors have shapes and dtypes but no data: the fake implementations run, with the same
# checks and messages as the C++ code (the GPU tests check the C++ side).
@pytest.mark.parametrize("op", OPS)
def test_wrong_dtype_is_refused(package, op):
    x = torch.empty(8, device="meta", dtype=torch.float64)
    with pytest.raises(RuntimeError, match=rf"{op}: \w+ must be float32, got torch.float64"):
        getattr(package, op)(*args_for(op, x, x))


@pytest.mark.parametrize("op", OPS)
def test_non_contiguous_is_refused(package, op):
    x = torch.empty(4, 6, device="meta").t()
    with pytest.raises(RuntimeError, match=rf"{op}: \w+ must be contiguous, got strides \[1, 6\] for sizes \[6, 4\]"):
        getattr(package, op)(*args_for(op, x, x))


def test_add_refuses_different_sizes(package):
    a, b = torch.empty(2, 3, device="meta"), torch.empty(3, 2, device="meta")  # same numel, other shape
    with pytest.raises(RuntimeError, match=r"add: a and b must have the same sizes, got \[2, 3\] and \[3, 2\]"):
        package.add(a, b)


def test_fake_results_have_the_right_shapes(package):
    x = torch.empty(3, 5, device="meta")
    assert package.add(x, x).shape == (3, 5)
    assert package.gelu(x).shape == (3, 5)
    assert package.mean(x).shape == ()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(0,), (1,), (1025,), (3, 7)])
def test_opcheck_on_meta_tensors(package, op, shape):
    """Schema, fake implementation and dynamic-shape tracing; the GPU tests add the real kernels."""
    x = torch.empty(shape, device="meta")
    opcheck(getattr(torch.ops.cuda_course, op), args_for(op, x, x))


# --- Errata and exit codes -------------------------------------------------------------------------

def test_lecture_tanh_formula_overflows():
    """The lecture's Triton GELU used tanh(a) = (e^2a - 1)/(e^2a + 1): inf/inf = NaN for large a.
    triton_kernels.py uses 0.5 x (1 + tanh(a)) = x / (1 + e^-2a) instead: here, in float32 on the CPU."""
    x = torch.tensor([-100.0, -5.0, -0.5, 0.0, 0.5, 5.0, 20.0, 100.0])
    a = 0.7978845608028654 * (x + 0.044715 * x**3)
    lecture_tanh = (torch.exp(2 * a) - 1) / (torch.exp(2 * a) + 1)
    assert lecture_tanh[-2:].isnan().all()
    ours = x / (1 + torch.exp(-2 * a))
    torch.testing.assert_close(ours, torch.nn.functional.gelu(x, approximate="tanh"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without a GPU")
@pytest.mark.parametrize("script", ["verify.py", "bench.py", "timing_demo.py", "profile_demo.py",
                                    "sanitizer_check.py"])
def test_scripts_exit_77_without_gpu(script):
    result = subprocess.run([sys.executable, str(CHAPTER / script)], capture_output=True, text=True)
    assert result.returncode == 77, result.stderr
    assert "No usable CUDA GPU" in result.stderr


def test_bench_refuses_bad_sizes_before_touching_the_gpu():
    result = subprocess.run([sys.executable, str(CHAPTER / "bench.py"), "--log2n", "40"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "must be between 10 and 30" in result.stderr
