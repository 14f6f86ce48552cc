"""Tests that need no GPU: the built package's registration, its input checks on CPU and meta
tensors, opcheck (autograd included) and backward on meta tensors, the architecture-list
translation, setup.py's messages, the flame graph, SUMMARY and ncu-CSV helpers, the scripts the
README shows whole, and the scripts' exit codes without a GPU."""

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
from timing import short_kernel_name

CHAPTER = Path(__file__).resolve().parents[1]
DEMOS = CHAPTER / "demos"
PART1 = CHAPTER / "part1"
OPS = ["add", "square", "gelu", "mean"]
# Part 1's scripts need no package; Part 2's (demos/) import the one CMake builds.
PART1_SCRIPTS = [PART1 / s for s in ("square_inline.py", "profile_squares.py", "ncu_squares.py", "profile_lectures.py")]
SCRIPTS = PART1_SCRIPTS + [DEMOS / s for s in ("verify.py", "bench.py", "timing_demo.py", "profile_demo.py",
                                                 "sanitizer_check.py", "routes.py")]


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


def find_cuobjdump() -> str | None:
    """cuobjdump from the toolkit (CUDA_HOME), the nvidia-cuda-cuobjdump wheel, then PATH, as chapter 04 looks.

    PATH comes last because an older cuobjdump there (Debian's is CUDA 11.8's) cannot read what
    nvcc 13 writes: it stops at the first cubin of an architecture it does not know.
    """
    candidates = [str(Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "cuobjdump")]
    try:
        import nvidia

        candidates += [str(path) for folder in nvidia.__path__ for path in Path(folder).glob("*/bin/cuobjdump")]
    except ImportError:
        pass
    candidates.append(shutil.which("cuobjdump"))
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def test_kernels_carry_line_information(package):
    """setup.py compiles with -lineinfo, so compute-sanitizer and ncu can name a kernel's source lines."""
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        pytest.skip("cuobjdump not found (python3 -m pip install nvidia-cuda-cuobjdump)")
    elf = subprocess.run([cuobjdump, "-elf", package._C.__file__], capture_output=True, text=True, check=True).stdout
    assert ".nv_debug_line_sass" in elf, "the kernels carry no line table: is -lineinfo in setup.py's nvcc flags?"


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
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_scripts_exit_77_without_gpu(script):
    env = {**os.environ, "NCU": sys.executable}  # ncu_squares.py looks for ncu first: pretend there is one
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert result.returncode == 77, result.stderr
    assert "No usable CUDA GPU" in result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_part1_runs_from_one_command_and_skips_without_gpu():
    result = subprocess.run(["bash", str(PART1 / "run.sh")], capture_output=True, text=True)
    assert result.returncode == 77 and "No usable CUDA GPU" in result.stderr, result.stdout + result.stderr


def test_ncu_squares_without_ncu_is_skipped():
    result = subprocess.run([sys.executable, str(PART1 / "ncu_squares.py")], capture_output=True, text=True,
                            env={**os.environ, "NCU": "/no/such/ncu"})
    assert result.returncode == 77 and "ncu is not installed (looked for '/no/such/ncu')" in result.stderr


# The start of a real export: `ncu --import squares.ncu-rep --csv --page details --print-units base`
# on the course's GPU machine (H100, ncu of CUDA 13.0), the NVTX columns shortened.
NCU_CSV = """\
==PROF== a line of ncu's own
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","575","python3.12","127.0.0.1","square_kernel(const float *, float *, long)","1","7","(256, 1, 1)","(1048576, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","1,073,764,096"
"0","575","python3.12","127.0.0.1","square_kernel(const float *, float *, long)","1","7","(256, 1, 1)","(1048576, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","903,264"
"1","575","python3.12","127.0.0.1","triton_poi_fused_mul_0","1","7","(128, 1, 1)","(262144, 1, 1)","0","9.0","Command line profiler metrics","dram__throughput.avg.pct_of_peak_sustained_elapsed","%","89.71"
"1","575","python3.12","127.0.0.1","triton_poi_fused_mul_0","1","7","(128, 1, 1)","(262144, 1, 1)","0","9.0","Command line profiler metrics","device__attribute_display_name","","NVIDIA H100 80GB HBM3"
"""


def test_ncu_csv_is_read_with_the_csv_module():
    sys.path.insert(0, str(PART1))
    import ncu_squares

    kernels = ncu_squares.read_ncu_csv(NCU_CSV)
    assert kernels == {
        "square_kernel(const float *, float *, long)": {"dram__bytes_read.sum": (1073764096.0, "byte"),
                                                        "gpu__time_duration.sum": (903264.0, "ns")},
        "triton_poi_fused_mul_0": {"dram__throughput.avg.pct_of_peak_sustained_elapsed": (89.71, "%")}}
    assert ncu_squares.read_ncu_csv("==ERROR== no report") == {}


@pytest.mark.parametrize("name, short", [
    ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor"
     "<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)",
     "vectorized_elementwise_kernel<4, BinaryFunctor<float, float, float, binary_internal::MulFunctor<float> >, "
     "array<char*, 3ul> >"),
    ("square_kernel(float const*, float*, long)", "square_kernel"),
    ("2 x void at::native::f<float>(float)", "2 x f<float>"),
    ("triton_poi_fused_mul_0", "triton_poi_fused_mul_0"),
    ("Memset (Device)", "Memset (Device)"),
])
def test_short_kernel_names(name, short):
    assert short_kernel_name(name) == short


def code_blocks(markdown: str) -> list[str]:
    return [block.split("\n", 1)[1] for block in markdown.split("```")[1::2]]


def test_part1_readme_shows_the_load_inline_script_whole():
    assert (PART1 / "square_inline.py").read_text() in code_blocks((PART1 / "README.md").read_text())


def test_part1_readme_shows_the_triton_kernel_as_it_is():
    """Each paragraph of the README's Triton block is in triton_kernels.py, verbatim."""
    source = (DEMOS / "triton_kernels.py").read_text()
    blocks = [b for b in code_blocks((PART1 / "README.md").read_text()) if "@triton.jit" in b]
    assert len(blocks) == 1
    for paragraph in blocks[0].strip().split("\n\n\n"):
        assert paragraph.strip() in source, paragraph


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.name != "square_inline.py"] + [DEMOS / "flamegraph.py"],
                         ids=lambda path: path.name)
def test_scripts_print_usage(script):
    """--help prints usage and exits 0 at once: nothing is built or run."""
    result = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("usage:"), result.stdout + result.stderr


def test_tests_import_their_helpers_from_anywhere(tmp_path):
    """`pytest -m gpu -k gradients` at the repository root reads no pytest.ini of this chapter (an empty
    one stands in for it here); conftest.py must still put demos/ and the chapter on sys.path."""
    (tmp_path / "empty.ini").write_text("[pytest]\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-c", str(tmp_path / "empty.ini"), "--rootdir",
                             str(CHAPTER.parent), "-p", "no:cacheprovider", "--collect-only", "-q", "-m", "gpu",
                             "-k", "gradients", str(CHAPTER / "tests")], cwd=CHAPTER.parent, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "test_gradients_match_pytorch_autograd" in result.stdout and "ModuleNotFoundError" not in result.stdout


# --- setup.py's messages --------------------------------------------------------------------------------

@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_setup_names_the_architecture_setting_without_a_gpu(tmp_path):
    """Not PyTorch's IndexError from _get_cuda_arch_flags: one line that says what to set."""
    env = {k: v for k, v in os.environ.items() if k != "TORCH_CUDA_ARCH_LIST"}
    result = subprocess.run([sys.executable, "setup.py", "--quiet", "build", "--build-base", str(tmp_path / "build"),
                             "--build-lib", str(tmp_path / "lib")], cwd=CHAPTER, capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode != 0 and "IndexError" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        'cuda_course: no GPU here to ask which architecture to compile for: name it, e.g. TORCH_CUDA_ARCH_LIST="9.0" '
        '(H100) or "8.0;9.0+PTX" (A100, H100 and PTX for newer GPUs)')


def test_setup_wants_the_wheel_package_only_to_build_a_wheel(tmp_path):
    """Python 3.11's bundled setuptools 65.5.0, without `wheel`: a wheel cannot be built, but CMake's
    `setup.py build` can. sitecustomize.py makes this Python look like that one."""
    (tmp_path / "sitecustomize.py").write_text(
        "import importlib.metadata as metadata\nimport setuptools\nsetuptools.__version__ = '65.5.0'\n"
        "found = metadata.version\n"
        "def version(name):\n"
        "    if name == 'wheel':\n        raise metadata.PackageNotFoundError(name)\n    return found(name)\n"
        "metadata.version = version\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def setup(*args):
        return subprocess.run([sys.executable, "setup.py", *args, "--help"], cwd=CHAPTER, capture_output=True,
                              text=True, env=env, timeout=120)

    wheel = setup("bdist_wheel")
    assert wheel.returncode != 0 and "setuptools 65.5.0 cannot build a wheel without the `wheel` package" in wheel.stderr
    build = setup("build")
    assert build.returncode == 0, build.stderr


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
