"""Why a CPU timer without torch.cuda.synchronize() lies, and which innocent-looking calls synchronize.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/demos/timing_demo.py [--log2n 26]

Part 1 times the same GELU (torch.ops.cuda_course.gelu) four ways and says what each one measured.
Part 2 shows implicit synchronization: .item() and print(tensor) need the value on the CPU, so they
wait for the GPU to finish everything queued before them, every time they run.
"""

import argparse
import io
import sys
import time
import warnings

import torch

import checks
from summary import Summary
from timing import benchmark, describe_gpu, markdown_table, require_gpu

CALLS = 100
STEP_N = 2**23  # part 2: a GELU of some 20 us, a little longer than a launch takes on the CPU


def loop_ms(step) -> float:
    """Wall time of CALLS steps, then a synchronize: everything the loop queued has run."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def flagged_by_sync_debug_mode(step) -> bool:
    """Does torch.cuda.set_sync_debug_mode("warn") report that step() synchronizes?"""
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            step()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return any("synchronizing" in str(w.message) for w in caught)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=26, help="elements = 2^LOG2N, 10..28 (default 26)")
    args = parser.parse_args()
    if not 10 <= args.log2n <= 28:
        parser.error(f"--log2n must be between 10 and 28, got {args.log2n}")

    require_gpu()
    import cuda_course

    summary = Summary()
    x = torch.randn(2**args.log2n, device="cuda")
    torch.cuda.synchronize()
    rows = []

    # 1. The very first call, synchronized: it also pays one-time costs (the kernel's module is
    #    loaded on first use, the caching allocator asks the driver for memory).
    start = time.perf_counter()
    y = cuda_course.gelu(x)
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - start) * 1e3
    rows.append(["CPU timer around the first call, with synchronize", "one-time costs + one kernel", f"{first_ms:.3f}"])

    # 2. CPU timer, no synchronize: the loop only *queues* the launches and returns while the GPU
    #    is still busy. This measures launch overhead, not the kernel.
    start = time.perf_counter()
    for _ in range(CALLS):
        cuda_course.gelu(x)
    queued_ms = (time.perf_counter() - start) * 1e3 / CALLS
    torch.cuda.synchronize()
    rows.append([f"CPU timer around {CALLS} calls, no synchronize", "the CPU queueing launches", f"{queued_ms:.3f}"])

    # 3. CPU timer, synchronize before stopping it: right on average, but it includes the launch
    #    gaps and the synchronize itself, and a single call is at the mercy of the CPU's jitter.
    synced_ms = loop_ms(lambda: cuda_course.gelu(x)) / CALLS
    rows.append([f"CPU timer around {CALLS} calls, then synchronize", "GPU time + overheads, averaged",
                 f"{synced_ms:.3f}"])

    # 4. CUDA events around each call, warm-up first, median: what timing.benchmark does.
    events_ms = benchmark(lambda: cuda_course.gelu(x))
    rows.append(["CUDA events, warm-up, median of 20 (timing.benchmark)", "the kernel on the GPU", f"{events_ms:.3f}"])

    print(f"GELU on 2^{args.log2n} floats, {describe_gpu()}\n")
    print(markdown_table(["how it was timed", "what that measures", "ms per call"], rows))
    summary.expect("the timed GELU is right (checks.gelu_check)", checks.gelu_check(y, x)[1])

    # Part 2. Each step launches one short GELU; some steps also look at the result on the CPU.
    small = torch.randn(STEP_N, device="cuda")
    sink = io.StringIO()  # print(tensor) formats the values; the text itself is not needed here
    steps = {
        "nothing else (the CPU runs ahead, queueing)": lambda: cuda_course.gelu(small),
        "y[0].item()": lambda: cuda_course.gelu(small)[0].item(),
        "print(y[:4])": lambda: print(cuda_course.gelu(small)[:4], file=sink),
    }
    per_step_us = {name: 1e3 * loop_ms(step) / CALLS for name, step in steps.items()}
    flagged = {name: flagged_by_sync_debug_mode(step) for name, step in steps.items()}
    print(f"\nImplicit synchronization: {CALLS} steps, each a GELU on 2^{STEP_N.bit_length() - 1} floats "
          f"({1e3 * benchmark(steps[next(iter(steps))]):.1f} us each, CUDA events), then a synchronize\n")
    print(markdown_table(
        ["each step also does", "us per step", "set_sync_debug_mode('warn') says it synchronizes"],
        [[name, f"{us:.1f}", "yes" if flagged[name] else "no"] for name, us in per_step_us.items()]))
    names = list(steps)
    print(f"\n.item() made each step {per_step_us[names[1]] / per_step_us[names[0]]:.1f}x as long: the CPU "
          "waits for the kernel, copies 4 bytes back, and only then launches the next one, so the GPU "
          "idles while the CPU works and the CPU idles while the GPU works.")
    summary.expect(".item() and print(tensor) are reported as synchronizing, the plain launch is not",
                   flagged[names[1]] and flagged[names[2]] and not flagged[names[0]])

    # Part 3. What one call costs the CPU: CALLS launches on a tiny tensor, queued, timed on the CPU.
    tiny = torch.randn(1024, device="cuda")
    calls = {
        "F.gelu (PyTorch's operator, C++ all the way)": lambda: checks.PYTORCH["gelu"](tiny),
        "cuda_course.gelu (its backward registered in Python)": lambda: cuda_course.gelu(tiny),
        "cuda_course.gelu under torch.inference_mode()": lambda: cuda_course.gelu(tiny),
    }
    cost_us = {}
    for name, call in calls.items():
        with torch.inference_mode(name.endswith("inference_mode()")):
            for _ in range(10):
                call()
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(CALLS):
                call()
            cost_us[name] = (time.perf_counter() - start) / CALLS * 1e6
            torch.cuda.synchronize()
    print(f"\nWhat one call costs the CPU ({CALLS} calls on 1024 floats, queued without waiting)\n")
    print(markdown_table(["call", "us per call"], [[name, f"{us:.1f}"] for name, us in cost_us.items()]))
    costs = list(cost_us.values())

    summary.figure("first_call_ms", round(first_ms, 3))
    summary.figure("queued_ms", round(queued_ms, 3))
    summary.figure("events_ms", round(events_ms, 3))
    summary.figure("async_step_us", round(per_step_us[names[0]], 1))
    summary.figure("item_step_us", round(per_step_us[names[1]], 1))
    summary.figure("print_step_us", round(per_step_us[names[2]], 1))
    summary.figure("item_slowdown", round(per_step_us[names[1]] / per_step_us[names[0]], 1))
    summary.figure("call_us_builtin", round(costs[0], 1))
    summary.figure("call_us_ours", round(costs[1], 1))
    summary.figure("call_us_ours_inference", round(costs[2], 1))
    return summary.finish("06_torch_extension_timing")


if __name__ == "__main__":
    sys.exit(main())
