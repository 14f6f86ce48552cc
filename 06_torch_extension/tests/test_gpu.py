"""GPU tests: every build route's kernels against PyTorch, the gradients against PyTorch's autograd,
the C++ input checks, opcheck (autograd included) on the real kernels, torch.compile forward and
backward, the current stream, the Triton versions and the chapter's scripts.

Run by tests/run_gpu_tests.py (ctest: 06_torch_extension.gpu). The two JIT routes compile here, on first
use, into $CUDA_COURSE_JIT_DIR (ctest points it into the build tree).
"""

import json
import subprocess
import sys
import warnings
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
DEMOS = CHAPTER / "demos"
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
    """A fresh tensor and the unaligned contiguous views x[1:], x[2:], x[3:]."""
    return [torch.randn(n, device="cuda")] + [torch.randn(n + k, device="cuda")[k:] for k in (1, 2, 3)]


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


# --- Gradients: the registered backward kernels against PyTorch's own autograd -------------------

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", SIZES)
def test_gradients_match_pytorch_autograd(package, op, n):
    for a, b in zip(inputs(n), inputs(n)):
        args = (a, b) if op == "add" else (a,)
        grad = torch.randn(n, device="cuda")[0] if op == "mean" else torch.randn(n, device="cuda")
        ours = checks.gradients(getattr(package, op), args, grad)
        theirs = checks.gradients(checks.PYTORCH[op], args, grad)
        for got, ref in zip(ours, theirs):
            if op == "gelu":
                error, ok = checks.gelu_grad_check(got, ref, grad)
                assert ok, f"largest difference {error:.3g}"
            else:
                assert checks.max_abs_error(got, ref) == 0  # the same float operations in the same order


def test_backward_is_registered(package):
    """Without register_autograd this warned "an autograd kernel was not registered" and x.grad was not 2x."""
    x = torch.randn(1000, device="cuda", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        package.square(x).sum().backward()
    assert torch.equal(x.grad, 2 * x.detach())


def test_backward_of_empty_tensors(package):
    x = torch.empty(0, device="cuda", requires_grad=True)
    package.gelu(x).sum().backward()
    package.mean(x).backward()  # mean of nothing is NaN; its gradient has no elements
    assert x.grad.shape == (0,)


def test_gradients_under_torch_compile(package):
    def model(a, b):
        return package.mean(package.gelu(package.add(package.square(a), b)))

    def eager_reference(a, b):
        return checks.PYTORCH["mean"](checks.PYTORCH["gelu"](torch.square(a) + b))

    a, b = torch.randn(4097, device="cuda"), torch.randn(4097, device="cuda")
    compiled = torch.compile(model, fullgraph=True)
    got = checks.gradients(compiled, (a, b), torch.tensor(1.0, device="cuda"))
    want = checks.gradients(eager_reference, (a, b), torch.tensor(1.0, device="cuda"))
    for g, w in zip(got, want):  # gradients of about 1/4097 each: GELU's tolerance, scaled
        torch.testing.assert_close(g, w, rtol=checks.GELU_RTOL, atol=checks.GELU_ATOL / 100)


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


@pytest.mark.parametrize("op", ["square_backward", "gelu_backward"])
def test_backward_kernels_refuse_bad_inputs(package, op):
    x = torch.randn(6, 4, device="cuda")
    with pytest.raises(RuntimeError, match=rf"{op}: grad must be contiguous, got strides \[1, 4\]"):
        getattr(package, op)(x.t(), x.t().contiguous())
    with pytest.raises(RuntimeError, match=rf"{op}: grad and x must have the same sizes, got \[6, 4\] and \[4, 6\]"):
        getattr(package, op)(x, x.t().contiguous())


def test_mean_backward_wants_a_0_dim_gradient(package):
    with pytest.raises(RuntimeError, match=r"mean_backward: grad must be 0-dim \(mean's result\), got sizes \[3\]"):
        package.mean_backward(torch.ones(3, device="cuda"), [3])


def test_add_refuses_different_sizes(ops):
    a, b = torch.randn(2, 3, device="cuda"), torch.randn(3, 2, device="cuda")
    with pytest.raises(RuntimeError, match=r"add: a and b must have the same sizes, got \[2, 3\] and \[3, 2\]"):
        ops.add(a, b)


def test_contiguous_copy_is_the_callers_choice(package):
    x = torch.randn(6, 4, device="cuda").t()
    assert checks.max_abs_error(package.square(x.contiguous()), x * x) == 0


# --- PyTorch integration of the TORCH_LIBRARY operators --------------------------------------------

@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(0,), (1025,), (3, 7)])
def test_opcheck(op, shape, requires_grad, package):
    """With inputs that require grad, opcheck also tests the autograd registration and compares
    forward and backward through AOTAutograd (test_aot_dispatch_dynamic) with eager mode."""
    if op == "mean" and shape == (0,):
        pytest.skip("mean of nothing is NaN, and opcheck compares with assert_close, where NaN != NaN")
    a, b = (torch.randn(shape, device="cuda", requires_grad=requires_grad) for _ in range(2))
    result = opcheck(getattr(torch.ops.cuda_course, op), (a, b) if op == "add" else (a,))
    assert set(result.values()) == {"SUCCESS"}, result


@pytest.mark.parametrize("op", ["square_backward", "gelu_backward", "mean_backward"])
def test_opcheck_backward_kernels(op, package):
    grad, x = torch.randn(3, 7, device="cuda"), torch.randn(3, 7, device="cuda")
    args = (grad[0, 0].clone(), [3, 7]) if op == "mean_backward" else (grad, x)
    opcheck(getattr(torch.ops.cuda_course, op), args)


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
    """Runs a demo; it must exit 0 and end with a SUMMARY line that reports no failed check."""
    result = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    last = result.stdout.rstrip().splitlines()[-1]
    assert last.startswith("SUMMARY "), last
    summary = json.loads(last.removeprefix("SUMMARY "))
    assert summary["checks"] > 0 and summary["failed"] == 0, last
    return result.stdout


def test_timing_demo_runs():
    output = run_script(DEMOS / "timing_demo.py", "--log2n", "20")
    assert "CUDA events" in output and "y[0].item()" in output


def test_profile_demo_runs(tmp_path):
    output = run_script(DEMOS / "profile_demo.py", "--trace-dir", tmp_path)
    assert "vector_kernel" in output  # the kernel shows up by name in the tables
    assert list(tmp_path.glob("add_step*.json"))
    assert list((tmp_path / "tensorboard").glob("*.pt.trace.json*"))


def test_profile_lectures_runs(tmp_path):
    output = run_script(CHAPTER / "part1" / "profile_lectures.py", "--out-dir", tmp_path)
    assert "matmul(dim=4096)" in output
    assert (tmp_path / "stacks_mlp.svg").read_text().startswith("<svg")


def test_routes_script_runs():
    assert "route 1" in run_script(DEMOS / "routes.py", "--quiet")


def test_sanitizer_check_runs():
    """The script the GPU check runs under compute-sanitizer; here without it."""
    run_script(DEMOS / "sanitizer_check.py")
