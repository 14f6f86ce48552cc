"""Why a CPU timer without torch.cuda.synchronize() lies, and what to do instead.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/timing_demo.py [--log2n 26]

Times the same GELU (torch.ops.cuda_course.gelu) four ways and prints what each one measured.
"""

import argparse
import sys
import time

import torch

from timing import benchmark, describe_gpu, markdown_table, require_gpu

CALLS = 100


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=26, help="elements = 2^LOG2N, 10..28 (default 26)")
    args = parser.parse_args()
    if not 10 <= args.log2n <= 28:
        parser.error(f"--log2n must be between 10 and 28, got {args.log2n}")

    require_gpu()
    import cuda_course

    x = torch.randn(2**args.log2n, device="cuda")
    torch.cuda.synchronize()
    rows = []

    # 1. The very first call, synchronized: it also pays one-time costs (the kernel's module is
    #    loaded on first use, the caching allocator asks the driver for memory).
    start = time.perf_counter()
    cuda_course.gelu(x)
    torch.cuda.synchronize()
    rows.append(["CPU timer around the first call, with synchronize",
                 "one-time costs + one kernel", f"{(time.perf_counter() - start) * 1e3:.3f}"])

    # 2. CPU timer, no synchronize: the loop only *queues* the launches and returns while the GPU
    #    is still busy. This measures launch overhead, not the kernel.
    start = time.perf_counter()
    for _ in range(CALLS):
        cuda_course.gelu(x)
    queued = time.perf_counter() - start
    torch.cuda.synchronize()
    rows.append([f"CPU timer around {CALLS} calls, no synchronize", "the CPU queueing launches",
                 f"{queued / CALLS * 1e3:.3f}"])

    # 3. CPU timer, synchronize before stopping it: right on average, but it includes the launch
    #    gaps and the synchronize itself, and a single call is at the mercy of the CPU's jitter.
    start = time.perf_counter()
    for _ in range(CALLS):
        cuda_course.gelu(x)
    torch.cuda.synchronize()
    rows.append([f"CPU timer around {CALLS} calls, then synchronize", "GPU time + overheads, averaged",
                 f"{(time.perf_counter() - start) / CALLS * 1e3:.3f}"])

    # 4. CUDA events around each call, warm-up first, median: what timing.benchmark does.
    rows.append(["CUDA events, warm-up, median of 20 (timing.benchmark)", "the kernel on the GPU",
                 f"{benchmark(lambda: cuda_course.gelu(x)):.3f}"])

    print(f"GELU on 2^{args.log2n} floats, {describe_gpu()}\n")
    print(markdown_table(["how it was timed", "what that measures", "ms per call"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
