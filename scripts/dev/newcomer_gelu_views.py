"""Development benchmark (issue 46), not part of the course: chapter 06's GELU and square on a fresh
tensor and on the views x[1:], x[2:], x[3:], ours against PyTorch's, interleaved round by round;
the median share and its spread. Run with PYTHONPATH=build/06_torch_extension/pkg and
06_torch_extension/demos on the path (for checks and timing)."""

import statistics
import sys

import torch

sys.path.insert(0, "06_torch_extension/demos")
import checks  # noqa: E402
from timing import benchmark, require_gpu  # noqa: E402

require_gpu()
import cuda_course  # noqa: E402

n = 2**28
torch.manual_seed(0)
a = torch.randn(n, device="cuda")
ops = {"gelu": (checks.PYTORCH["gelu"], cuda_course.gelu), "square": (torch.square, cuda_course.square)}
rounds = 9
for op, (theirs, ours) in ops.items():
    for k in (0, 1, 2, 3):
        x = a[k:]
        got, want = ours(x), theirs(x)
        close = torch.allclose(got, want, rtol=1e-5, atol=1e-6)
        shares = []
        for _ in range(rounds):
            shares.append(100 * benchmark(lambda: theirs(x), trials=10) / benchmark(lambda: ours(x), trials=10))
        print(f"{op:6} x[{k}:]  ours as % of PyTorch: median {statistics.median(shares):5.1f}% "
              f"[{min(shares):5.1f}, {max(shares):5.1f}] over {rounds} rounds; matches PyTorch: {close}")

# The 64-bit-index path of the one-float-at-a-time kernel: a view x[1:] longer than 2^30 floats.
big = torch.randn(2**30 + 8, device="cuda")
view = big[1:]
print(f"gelu of x[1:] at {view.numel()} floats (64-bit indices): matches PyTorch: "
      f"{torch.allclose(cuda_course.gelu(view), checks.PYTORCH['gelu'](view), rtol=1e-5, atol=1e-6)}")
