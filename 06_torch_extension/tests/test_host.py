"""Tests that need no GPU: the built package's registration, its input checks on CPU and meta
tensors, opcheck (autograd included) and backward on meta tensors, the architecture-list
translation, the flame graph and SUMMARY helpers, and the scripts' exit codes without a GPU."""

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from torch.library import opcheck

import flamegraph
from arch_list import FALLBACK, torch_arch_list
from summary import Summary

CHAPTER = Path(__file__).resolve().parents[1]
DEMOS = CHAPTER / "demos"
OPS = ["add", "square", "gelu", "mean"]
SCRIPTS = ["verify.py", "bench.py", "timing_demo.py", "profile_demo.py", "profile_lectures.py",
           "sanitizer_check.py", "routes.py"]


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
    for op in OPS + ["square_backward", "gelu_backward", "mean_backward"]:
        assert hasattr(torch.ops.cuda_course, op)
    assert str(torch.ops.cuda_course.add.default._schema) == "cuda_course::add(Tensor a, Tensor b) -> Tensor"
    assert "SymInt[] size" in str(torch.ops.cuda_course.mean_backward.default._schema)


@pytest.mark.parametrize("op", OPS)
def test_every_operator_has_an_autograd_kernel(package, op):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"cuda_course::{op}", "Autograd")


@pytest.mark.parametrize("op", OPS)
def test_cpu_tensors_are_refused_clearly(package, op):
    x = torch.ones(8)
    with pytest.raises(RuntimeError, match=rf"^{op}: \w+ must be a CUDA tensor, got a tensor on cpu"):
        getattr(package, op)(*args_for(op, x, x))


def test_links_the_shared_cxx_runtime(package):
    """One C++ runtime per process: the extension must load the shared libstdc++ that PyTorch loads.
    A static copy inside it breaks number formatting in error messages (README: "Two C++ runtimes")."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    library = Path(package._C.__file__)
    dynamic = subprocess.run([readelf, "--dynamic", library], capture_output=True, text=True, check=True).stdout
    assert "[libstdc++.so.6]" in dynamic, (
        f"{library.name} does not load libstdc++.so.6, so it carries a static copy of the C++ runtime: "
        "the compiler found only libstdc++.a, or links it statically; setup.py's "
        "extra_link_args must name the shared library")


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


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(0,), (1,), (1025,), (3, 7)])
def test_opcheck_on_meta_tensors(package, op, shape, requires_grad):
    """Schema, fake implementation and dynamic-shape tracing; with inputs that require grad also the
    autograd registration and forward + backward through AOTAutograd. The GPU tests add the real kernels."""
    a, b = (torch.empty(shape, device="meta", requires_grad=requires_grad) for _ in range(2))
    result = opcheck(getattr(torch.ops.cuda_course, op), args_for(op, a, b))
    assert set(result.values()) == {"SUCCESS"}


@pytest.mark.parametrize("op", ["square_backward", "gelu_backward", "mean_backward"])
def test_opcheck_backward_kernels_on_meta_tensors(package, op):
    grad, x = torch.empty(3, 7, device="meta"), torch.empty(3, 7, device="meta")
    args = (torch.empty((), device="meta"), [3, 7]) if op == "mean_backward" else (grad, x)
    opcheck(getattr(torch.ops.cuda_course, op), args)


@pytest.mark.parametrize("op", OPS)
def test_backward_runs_on_meta_tensors_without_warnings(package, op):
    """The registered formulas and the backward kernels' fakes: shapes only, no GPU."""
    a, b = (torch.empty(3, 7, device="meta", requires_grad=True) for _ in range(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "an autograd kernel was not registered" would fail here
        getattr(package, op)(*args_for(op, a, b)).sum().backward()
    assert a.grad.shape == (3, 7) and (op != "add" or b.grad.shape == (3, 7))


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
@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_exit_77_without_gpu(script):
    result = subprocess.run([sys.executable, str(DEMOS / script)], capture_output=True, text=True)
    assert result.returncode == 77, result.stderr
    assert "No usable CUDA GPU" in result.stderr


@pytest.mark.parametrize("script", SCRIPTS + ["flamegraph.py"])
def test_scripts_print_usage(script):
    """--help prints usage and exits 0 at once: nothing is built or run."""
    result = subprocess.run([sys.executable, str(DEMOS / script), "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("usage:"), result.stdout + result.stderr


def test_bench_refuses_bad_sizes_before_touching_the_gpu():
    result = subprocess.run([sys.executable, str(DEMOS / "bench.py"), "--log2n", "40"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "must be between 10 and 30" in result.stderr


# --- The helpers: SUMMARY line and flame graph ------------------------------------------------------

def test_summary_line(capsys):
    summary = Summary()
    summary.exact("exact thing", 0.0)
    summary.within("close thing", 0.5, 1.0)
    summary.goal("speed", 97.34, 95, "%")
    summary.figure("key", 97.3)
    assert summary.finish("demo") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Max error: 0  (exact thing)"
    assert lines[-1].startswith("SUMMARY ")
    assert json.loads(lines[-1][len("SUMMARY "):]) == {
        "program": "demo", "checks": 2, "failed": 0, "exact": 1,
        "goals": [{"goal": "speed", "value": 97.3, "at_least": 95, "unit": "%", "met": True}],
        "figures": {"key": 97.3}}


def test_summary_fails_on_nan_and_on_no_checks(capsys):
    assert Summary().finish("nothing") == 1
    nan = Summary()
    nan.exact("nan", float("nan"))
    assert nan.finish("nan") == 1


FOLDED = ["a.py(1):_main;a.py(5):step;torch/functional.py(9):mm 700",
          "a.py(1):_main;a.py(5):step;ops.py(3):gelu 200",
          "a.py(1):_main;a.py(8):log 100",
          "not a stack line"]


def test_flamegraph_tree():
    root = flamegraph.read_folded(FOLDED)
    assert root.total == 1000
    tree = flamegraph.text_tree(root, min_share=15).splitlines()
    assert [line.split()[:2] for line in tree[1:]] == [
        ["100.0%", "0.0%"], ["100.0%", "0.0%"], ["90.0%", "0.0%"], ["70.0%", "70.0%"], ["20.0%", "20.0%"]]
    assert not any("log" in line for line in tree)  # 10% < 15%


def test_flamegraph_svg_boxes_are_proportional():
    drawing = flamegraph.svg(flamegraph.read_folded(FOLDED), "title", width=1000)
    assert drawing.startswith("<svg") and drawing.count("<rect") == 6
    assert 'width="700.0"' in drawing and 'width="1000.0"' in drawing


def test_flamegraph_command_line(tmp_path):
    stacks = tmp_path / "stacks.txt"
    stacks.write_text("\n".join(FOLDED))
    result = subprocess.run([sys.executable, str(DEMOS / "flamegraph.py"), str(stacks), "--svg",
                             str(tmp_path / "s.svg")], capture_output=True, text=True)
    assert result.returncode == 0 and "torch/functional.py(9):mm" in result.stdout
    assert json.loads(result.stdout.splitlines()[-1][len("SUMMARY "):])["failed"] == 0
    assert (tmp_path / "s.svg").read_text().startswith("<svg")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_routes_without_gpu_names_the_fix():
    result = subprocess.run([sys.executable, str(DEMOS / "routes.py"), "--build-only"], capture_output=True,
                            text=True, env={k: v for k, v in os.environ.items() if k != "TORCH_CUDA_ARCH_LIST"})
    assert result.returncode == 77 and "TORCH_CUDA_ARCH_LIST=9.0" in result.stderr
