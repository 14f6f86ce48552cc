"""The chapter's CUDA kernels as PyTorch operators: torch.ops.cuda_course.{add,square,gelu,mean}.

Importing this package loads the compiled library (cuda_course._C), whose TORCH_LIBRARY blocks
register the operators, and registers their *fake* implementations below.

A fake implementation computes only the output's metadata (shape, dtype, device) and never touches
data. torch.compile traces with fake tensors, and torch.library.opcheck compares the fake result with
the real one, so each fake repeats the C++ checks with the same messages (csrc/ops.cu).
"""

import torch

from . import _C  # noqa: F401  (imported for its side effect: the operators' registration)

add = torch.ops.cuda_course.add
square = torch.ops.cuda_course.square
gelu = torch.ops.cuda_course.gelu
mean = torch.ops.cuda_course.mean

__all__ = ["add", "square", "gelu", "mean"]


def _check_input(op: str, name: str, t: torch.Tensor) -> None:
    # No device check: fakes also run on "meta" tensors (opcheck, shape inference), which live on no
    # real device. The C++ code checks the device when the real kernel is called.
    torch._check(t.dtype == torch.float32, lambda: f"{op}: {name} must be float32, got {t.dtype}")
    torch._check(
        t.is_contiguous(),
        lambda: f"{op}: {name} must be contiguous, got strides {list(t.stride())} for sizes "
        f"{list(t.shape)} (call .contiguous() first; it makes a copy)",
    )


@torch.library.register_fake("cuda_course::add")
def _add_fake(a, b):
    _check_input("add", "a", a)
    _check_input("add", "b", b)
    torch._check(a.device == b.device,
                 lambda: f"add: a and b must be on the same device, got {a.device} and {b.device}")
    torch._check(a.shape == b.shape,
                 lambda: f"add: a and b must have the same sizes, got {list(a.shape)} and {list(b.shape)}")
    return torch.empty_like(a)


@torch.library.register_fake("cuda_course::square")
def _square_fake(x):
    _check_input("square", "x", x)
    return torch.empty_like(x)


@torch.library.register_fake("cuda_course::gelu")
def _gelu_fake(x):
    _check_input("gelu", "x", x)
    return torch.empty_like(x)


@torch.library.register_fake("cuda_course::mean")
def _mean_fake(x):
    _check_input("mean", "x", x)
    return x.new_empty(())
