"""GPU tests: every build route's kernels against PyTorch, the C++ input checks, opcheck on the real
kernels, torch.compile, the current stream, the Triton versions and the chapter's scripts.

Run by run_gpu_tests.py (ctest: 06_torch_extension.gpu). The two JIT routes compile here, on first
use, into $CUDA_COURSE_JIT_DIR (ctest points it into the build tree).
"""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from torch.library import opcheck

import checks
import routes
import triton_kernels

pytestmark = pytest.mark.gpu

CHAPTER = Path(__file__).resolve().parents[1]
SIZES = [1, 1023, 1025, 2**24 + 1]
OPS = ["add", "square", "gelu", "mean"]


@pytest.fixture(scope="session")
def jit_builds():
    """Starts both JIT builds at once: each is mostly one long nvcc run on one core."""
    with ThreadPoolExecutor(2) as pool:
        yield {"pybind": pool.submit(routes.load_pybind_module),
               "inline": pool.submit(routes.load_inline_gelu)}


@pytest.fixture(params=["package", "pybind"])
def ops(request, package, jit_builds):
    """The four operators from route 3 (torch.ops) or route 1 (pybind11 module)."""
    return package if request.param == "package" else jit_builds["pybind"].result()


@pytest.fixture(params=["package", "pybind", "inline", "triton"])
def gelu(request, package, jit_builds):
    if request.param in jit_builds:
        module_or_fn = jit_builds[request.param].result()
        return module_or_fn.gelu if request.param == "pybind" else module_or_fn
    return {"package": package.gelu, "triton": triton_kernels.gelu}[request.param]


@pytest.fixture(params=["package", "pybind", "triton", "triton_notes"])
def mean(request, package, jit_builds):
    if request.param == "pybind":
        return jit_builds["pybind"].result().mean
    return {"package": package.mean, "triton": triton_kernels.mean,
            "triton_notes": triton_kernels.notes_mean}[request.param]


@pytest.fixture(autouse=True)
def nan_poisoned_outputs():
    """Deterministic mode makes torch.empty fill with NaN: an output element a kernel never writes
    stays NaN and fails the comparison, instead of holding a stale right answer from the cache."""
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(False)


def inputs(n: int) -> list[torch.Tensor]:
    """A fresh tensor and an unaligned contiguous view x[1:] (the float-by-float path)."""
    return [torch.randn(n, device="cuda"), torch.randn(n + 1, device="cuda")[1:]]


# --- Correctness ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
def test_add_and_square_are_exact(ops, n):
    for a, b in zip(inputs(n), inputs(n)):
        assert checks.max_abs_error(ops.add(a, b), a + b) == 0
        assert checks.max_abs_error(ops.square(a), a * a) == 0


@pytest.mark.parametrize("n", SIZES)
def test_triton_add_and_square_are_exact(n):
    for a, b in zip(inputs(n), inputs(n)):
        assert checks.max_abs_error(triton_kernels.add(a, b), a + b) == 0
        assert checks.max_abs_error(triton_kernels.square(a), a * a) == 0


@pytest.mark.parametrize("n", SIZES)
def test_gelu_matches_pytorch(gelu, n):
    for x in inputs(n):
        error, ok = checks.gelu_check(gelu(x * 4), x * 4)  # mostly within +-12: tails and middle
        assert ok, f"largest difference {error:.3g}"


def test_gelu_of_large_and_tiny_values(gelu):
    x = torch.tensor([-100.0, -20.0, -1e-30, 0.0, 1e-30, 20.0, 100.0, 3e38], device="cuda")
    assert checks.gelu_check(gelu(x), x)[1]


@pytest.mark.parametrize("n", SIZES)
def test_mean_matches_float64(mean, n):
    for x in inputs(n) + [torch.rand(n, device="cuda") + 100]:  # randn, and a mean far from 0
        error, bound, ok = checks.mean_check(mean(x), x)
        assert ok, f"error {error:.3g} > bound {bound:.3g}"


def test_mean_is_deterministic(package):
    x = torch.randn(2**24 + 1, device="cuda")
    assert package.mean(x).item() == package.mean(x).item()  # no atomics: same order, same bits


def test_empty_tensors(ops):
    x = torch.empty(0, device="cuda")
    assert ops.add(x, x).shape == (0,) and ops.square(x).shape == (0,) and ops.gelu(x).shape == (0,)
    assert ops.mean(x).isnan().item() and torch.mean(x).isnan().item()  # torch.mean agrees


def test_shapes_are_kept(ops):
    a, b = torch.randn(3, 5, 7, device="cuda"), torch.randn(3, 5, 7, device="cuda")
    assert ops.add(a, b).shape == (3, 5, 7) and ops.mean(a).shape == ()


# --- The C++ input checks ---------------------------------------------------------------------------

def bad_inputs():
    x = torch.randn(6, 4, device="cuda")
    return [
        ("cpu", x.cpu(), r"must be a CUDA tensor, got a tensor on cpu"),
        ("float64", x.double(), r"must be float32, got Double"),
        ("transposed", x.t(), r"must be contiguous, got strides \[1, 4\] for sizes \[4, 6\]"),
        ("every other", torch.randn(20, device="cuda")[::2], r"must be contiguous, got strides \[2\]"),
    ]


@pytest.mark.parametrize("op", OPS)
def test_bad_inputs_are_refused_clearly(ops, op):
    for what, bad, message in bad_inputs():
        good = torch.randn(bad.shape, device="cuda")
        args = (good, bad) if op == "add" else (bad,)  # for add: the *second* argument is wrong
        name = "b" if op == "add" else "x"
        with pytest.raises(RuntimeError, match=rf"{op}: {name} {message}"):
            getattr(ops, op)(*args)


def test_add_refuses_different_sizes(ops):
    a, b = torch.randn(2, 3, device="cuda"), torch.randn(3, 2, device="cuda")
    with pytest.raises(RuntimeError, match=r"add: a and b must have the same sizes, got \[2, 3\] and \[3, 2\]"):
        ops.add(a, b)


def test_contiguous_copy_is_the_callers_choice(package):
    x = torch.randn(6, 4, device="cuda").t()
    assert checks.max_abs_error(package.square(x.contiguous()), x * x) == 0


# --- PyTorch integration of the TORCH_LIBRARY operators --------------------------------------------

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(0,), (1025,), (3, 7)])
def test_opcheck(op, shape, package):
    if op == "mean" and shape == (0,):
        pytest.skip("mean of nothing is NaN, and opcheck compares with assert_close, where NaN != NaN")
    a, b = torch.randn(shape, device="cuda"), torch.randn(shape, device="cuda")
    opcheck(getattr(torch.ops.cuda_course, op), (a, b) if op == "add" else (a,))


def test_torch_compile(package):
    def model(a, b):
        return package.mean(package.gelu(package.add(package.square(a), b)))

    a, b = torch.randn(4097, device="cuda"), torch.randn(4097, device="cuda")
    compiled = torch.compile(model, fullgraph=True)  # fullgraph: no fallback to Python allowed
    assert compiled(a, b).item() == model(a, b).item()


def test_runs_on_the_current_stream(package):
    """On a side stream, the kernel must wait for the work queued before it on that stream.
    Launched on the default stream instead, it would read x before fill_ has run."""
    stream = torch.cuda.Stream()
    x = torch.zeros(2**20, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(50_000_000)  # ~25 ms of GPU clock cycles: holds the stream back
        x.fill_(3.0)
        y = package.square(x)
    stream.synchronize()
    assert (y == 9.0).all()


# --- The notes' Triton mean -------------------------------------------------------------------------

def test_notes_serial_mean_is_correct_just_slow():
    x = torch.randn(2**20 + 3, device="cuda")
    assert checks.mean_check(triton_kernels.notes_mean(x), x)[2]


# --- The scripts run ------------------------------------------------------------------------------

def run_script(*args: str) -> str:
    result = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_timing_demo_runs():
    assert "CUDA events" in run_script(CHAPTER / "timing_demo.py", "--log2n", "20")


def test_profile_demo_runs(tmp_path):
    output = run_script(CHAPTER / "profile_demo.py", "--trace-dir", tmp_path)
    assert "binary_kernel" in output  # the kernel shows up by name in the tables
    assert list(tmp_path.glob("add_step*.json"))


def test_sanitizer_check_runs():
    """The script the GPU check runs under compute-sanitizer; here without it."""
    assert run_script(CHAPTER / "sanitizer_check.py").rstrip().endswith(": ok")
