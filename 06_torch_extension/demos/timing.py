"""Timing GPU work from Python, and the helpers every script in this chapter shares.

A CUDA launch only queues the kernel and returns: the CPU is back long before the GPU is done. So
time with CUDA events recorded on the same stream as the work (they time the GPU, not the CPU),
warm up first (the first call pays for module loading, caching-allocator growth, compilation), and
report the median of many trials (robust to the odd slow one). timing_demo.py shows what goes wrong
without each of these. triton.testing.do_bench(fn, return_mode="median") does the same job.
"""

import statistics
import sys
from collections.abc import Callable

import torch

EXIT_NO_GPU = 77  # the course's "skipped" exit code (CTest SKIP_RETURN_CODE)


def require_gpu() -> None:
    """Exits with 77 and a message when PyTorch sees no usable CUDA GPU."""
    if not torch.cuda.is_available():
        print("No usable CUDA GPU (torch.cuda.is_available() is False): skipping.", file=sys.stderr)
        sys.exit(EXIT_NO_GPU)


def require_triton() -> None:
    """Exits with 77 and a message when Triton is missing (PyTorch's Linux CUDA wheels bring it)."""
    try:
        import triton  # noqa: F401
    except ImportError as error:
        print(f"Triton is not installed ({error}): skipping. pip install triton", file=sys.stderr)
        sys.exit(EXIT_NO_GPU)


def benchmark(fn: Callable[[], object], *, warmup: int = 3, trials: int = 20) -> float:
    """Median time of fn() in milliseconds, measured with CUDA events on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
    for start, end in zip(starts, ends):
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()  # elapsed_time needs both events to have happened
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def require_device_memory(bytes_needed: int, what: str, headroom: int = 256 << 20) -> None:
    """Exits with 2 and a message when the GPU has too little free memory (like the C++ helper)."""
    free, total = torch.cuda.mem_get_info()
    if bytes_needed + headroom > free:
        print(f"{what} needs {bytes_needed / 2**30:.2f} GiB of GPU memory, but only {free / 2**30:.2f} GiB "
              f"of {total / 2**30:.2f} GiB is free: choose a smaller size.", file=sys.stderr)
        sys.exit(2)


def gb_per_s(bytes_moved: int, ms: float) -> float:
    return bytes_moved / (ms * 1e-3) / 1e9


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def kernel_names(run: Callable[[], object]) -> list[str]:
    """The GPU kernels one call of run() launches, by the names torch.profiler shows (after a warm-up
    call), "3 x " before a kernel launched three times."""
    run()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    return [(f"{e.count} x " if e.count > 1 else "") + e.key
            for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]


def short_kernel_name(name: str) -> str:
    """A profiler's kernel name without namespaces, `void` and the parameter list, for a table:
    "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" -> "vectorized_elementwise_kernel<4, ...>"."""
    for noise in ("void ", "at::native::", "(anonymous namespace)::", "at::", "std::"):
        name = name.replace(noise, "")
    if name.endswith(")"):  # cut the parameter list: the parentheses that close at the end
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                return name[:i] if i > 0 and name[i - 1] != " " else name  # "Memset (Device)" stays
    return name


def describe_gpu() -> str:
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    return (f"{p.name} (sm_{p.major}{p.minor}, {p.multi_processor_count} SMs, "
            f"{p.total_memory / 2**30:.0f} GiB), PyTorch {torch.__version__}")
