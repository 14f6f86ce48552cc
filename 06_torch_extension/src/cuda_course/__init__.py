"""The chapter's CUDA kernels as PyTorch operators: torch.ops.cuda_course.{add,square,gelu,mean},
differentiable, traceable by torch.compile.

Importing this package loads the compiled library (cuda_course._C), whose TORCH_LIBRARY blocks
register the operators and their backward kernels, and then registers two things in Python:

- a *fake* implementation per operator: it computes only the output's metadata (shape, dtype,
  device) and never touches data. torch.compile traces with fake tensors, and
  torch.library.opcheck compares the fake result with the real one, so each fake repeats the C++
  checks with the same messages (csrc/ops.cu).
- a *backward* per operator (torch.library.register_autograd): what autograd calls with dL/dy to
  get dL/dx. Without it, autograd has no formula for the operator: backward() only warns that "an
  autograd kernel was not registered" and the inputs get no gradient from it.
"""

import torch

from . import _C  # noqa: F401  (imported for its side effect: the operators' registration)

add = torch.ops.cuda_course.add
square = torch.ops.cuda_course.square
gelu = torch.ops.cuda_course.gelu
mean = torch.ops.cuda_course.mean
square_backward = torch.ops.cuda_course.square_backward
gelu_backward = torch.ops.cuda_course.gelu_backward
mean_backward = torch.ops.cuda_course.mean_backward

__all__ = ["add", "square", "gelu", "mean", "square_backward", "gelu_backward", "mean_backward"]


# --- Fake implementations -------------------------------------------------------------------------

def _check_input(op: str, name: str, t: torch.Tensor) -> None:
    # No device check: fakes also run on "meta" tensors (opcheck, shape inference), which live on no
    # real device. The C++ code checks the device when the real kernel is called.
    torch._check(t.dtype == torch.float32, lambda: f"{op}: {name} must be float32, got {t.dtype}")
    torch._check(
        t.is_contiguous(),
        lambda: f"{op}: {name} must be contiguous, got strides {list(t.stride())} for sizes "
        f"{list(t.shape)} (call .contiguous() first; it makes a copy)",
    )


def _check_pair(op: str, name_a: str, a: torch.Tensor, name_b: str, b: torch.Tensor) -> None:
    _check_input(op, name_a, a)
    _check_input(op, name_b, b)
    torch._check(a.device == b.device, lambda: f"{op}: {name_a} and {name_b} must be on the same device, "
                                               f"got {a.device} and {b.device}")
    torch._check(a.shape == b.shape, lambda: f"{op}: {name_a} and {name_b} must have the same sizes, "
                                             f"got {list(a.shape)} and {list(b.shape)}")


@torch.library.register_fake("cuda_course::add")
def _add_fake(a, b):
    _check_pair("add", "a", a, "b", b)
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


@torch.library.register_fake("cuda_course::square_backward")
def _square_backward_fake(grad, x):
    _check_pair("square_backward", "grad", grad, "x", x)
    return torch.empty_like(x)


@torch.library.register_fake("cuda_course::gelu_backward")
def _gelu_backward_fake(grad, x):
    _check_pair("gelu_backward", "grad", grad, "x", x)
    return torch.empty_like(x)


@torch.library.register_fake("cuda_course::mean_backward")
def _mean_backward_fake(grad, size):
    _check_input("mean_backward", "grad", grad)
    torch._check(grad.dim() == 0, lambda: f"mean_backward: grad must be 0-dim (mean's result), got sizes "
                                          f"{list(grad.shape)}")
    return grad.new_empty(size)


# --- Backward formulas ----------------------------------------------------------------------------
# setup_context runs after the forward and keeps what the backward needs; backward gets dL/dy and
# returns dL/dx for each input. The incoming gradient can be any layout: for y.sum().backward() it
# is a single 1 expanded to y's shape (stride 0). Our kernels take contiguous tensors only, so the
# backward asks for that explicitly (a copy only when the gradient is not contiguous already).

# [excerpt:save-inputs]
def _save_inputs(ctx, inputs, output):
    ctx.save_for_backward(*inputs)
# [/excerpt:save-inputs]


def _add_backward(ctx, grad):
    return grad, grad  # d(a + b)/da = d(a + b)/db = 1: the gradient passes through, no kernel


def _square_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return square_backward(grad.contiguous(), x)


# [excerpt:gelu-backward]
def _gelu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return gelu_backward(grad.contiguous(), x)
# [/excerpt:gelu-backward]


def _mean_setup(ctx, inputs, output):
    ctx.size = inputs[0].shape  # only the shape: mean's gradient does not depend on x's values


def _mean_backward(ctx, grad):
    return mean_backward(grad.contiguous(), ctx.size)


torch.library.register_autograd("cuda_course::add", _add_backward)
torch.library.register_autograd("cuda_course::square", _square_backward, setup_context=_save_inputs)
# [excerpt:register-gelu]
torch.library.register_autograd("cuda_course::gelu", _gelu_backward, setup_context=_save_inputs)
# [/excerpt:register-gelu]
torch.library.register_autograd("cuda_course::mean", _mean_backward, setup_context=_mean_setup)
