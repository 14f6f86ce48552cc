"""The same four operations in Triton, for the side-by-side benchmark (bench.py).

Triton programs are written per *block*, not per thread: a program loads a vector of BLOCK elements
(tl.arange), computes on the vector, stores it. The compiler splits the vector over the program's
threads and picks the vector widths itself (for float32 here: 16-byte loads, like ops.cu's float4).
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024  # elements per program in the elementwise kernels


@triton.jit
def _add_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n  # the last program may run past the end
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, a + b, mask=mask)


# [excerpt:square-kernel]
@triton.jit
def _square_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, x * x, mask=mask)
# [/excerpt:square-kernel]


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * (x * x * x))
    # 0.5 x (1 + tanh(a)) = x * sigmoid(2a) = x / (1 + exp(-2a)): one exp, no cancellation for
    # negative x, and exp overflowing to inf gives the right limit (x / inf = -0). The lecture wrote
    # tanh(a) = (exp(2a) - 1) / (exp(2a) + 1), which is inf / inf = NaN once exp(2a) overflows float32,
    # i.e. for x above about 10 (tests/test_host.py shows it).
    tl.store(y_ptr + offsets, x / (1.0 + tl.exp(-2.0 * inner)), mask=mask)


@triton.jit
def _sum_kernel(x_ptr, out_ptr, n, divisor, BLOCK: tl.constexpr):
    # Program p adds the tiles p, p + P, p + 2P, ... (P programs in all) into a vector of BLOCK
    # partial sums, then reduces that vector with tl.sum, a tree across the program's threads.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(acc, axis=0) / divisor)


@triton.jit
def _notes_mean_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # The notes' kernel, kept to be measured: one scalar load and add per loop trip. Scalars are not
    # split over threads, so every program walks its BLOCK elements one after another: no vector
    # loads, one dependent add per element, the GPU's parallelism inside a program unused.
    start = tl.program_id(0) * BLOCK
    end = tl.minimum(start + BLOCK, n)
    acc = 0.0
    for i in range(start, end):
        acc += tl.load(x_ptr + i)
    tl.store(out_ptr + tl.program_id(0), acc / n)


def _grid(n: int, block: int) -> tuple[int]:
    return (triton.cdiv(n, block),)


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(a)
    _add_kernel[_grid(a.numel(), BLOCK)](a, b, y, a.numel(), BLOCK=BLOCK)
    return y


def square(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    _square_kernel[_grid(x.numel(), BLOCK)](x, y, x.numel(), BLOCK=BLOCK)
    return y


def gelu(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    _gelu_kernel[_grid(x.numel(), BLOCK)](x, y, x.numel(), BLOCK=BLOCK)
    return y


def mean(x: torch.Tensor) -> torch.Tensor:
    """Two passes, like ops.cu: partial sums from a GPU-filling number of programs, then one program."""
    n = x.numel()
    block = 4096  # 16 floats per thread per trip with num_warps=8: several loads in flight each
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    programs = max(1, min(triton.cdiv(n, block), 8 * sms))
    partials = torch.empty(programs, device=x.device, dtype=torch.float32)
    _sum_kernel[(programs,)](x, partials, n, 1.0, BLOCK=block, num_warps=8)
    result = torch.empty((), device=x.device, dtype=torch.float32)
    # The same kernel, one program: it loops over the partial sums. For n == 0: 0 / 0 = NaN.
    _sum_kernel[(1,)](partials, result, programs, float(n), BLOCK=1024)
    return result


def notes_mean(x: torch.Tensor) -> torch.Tensor:
    """The notes' version: per-program means from a serial loop, summed by PyTorch."""
    n = x.numel()
    partials = torch.empty(triton.cdiv(n, BLOCK), device=x.device, dtype=torch.float32)
    _notes_mean_kernel[_grid(n, BLOCK)](x, partials, n, BLOCK=BLOCK)
    return partials.sum()
