"""torch.profiler three ways, and the older autograd profiler, on the chapter's add operator.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/profile_demo.py --trace-dir traces

(a) a plain profile of one call: the table, including the one-time costs of a first call;
(b) a schedule (wait, warm-up, active steps) with on_trace_ready, which prints the table and writes a
    Chrome trace (open it at https://ui.perfetto.dev or chrome://tracing);
(c) toggle_collection_dynamic: the input generation in each step is left out of the profile;
(d) torch.autograd.profiler.profile, which the notes also show.
"""

import argparse
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule

from timing import describe_gpu, require_gpu

N = 2**20  # about the notes' 1,024,000 elements: small, so launch overheads are visible
BOTH = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
SORT = "self_device_time_total"  # the notes' "self_cuda_time_total" is the older name of the same column


def table(prof) -> str:
    return prof.key_averages().table(sort_by=SORT, row_limit=8, max_name_column_width=60)


def gpu_kernels(prof) -> str:
    """The GPU kernels in a profile, full names (the table cuts them), with how often each ran."""
    # ProfilerStep* also has a GPU-side row (each step's span on the GPU timeline): not a kernel.
    kernels = [e for e in prof.key_averages()
               if e.device_type == torch.autograd.DeviceType.CUDA and not e.key.startswith("ProfilerStep")]
    return "\n".join(f"  {e.count} x {e.key}" for e in kernels) or "  (none)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace-dir", type=Path, default=Path("profiler_traces"),
                        help="where (b) writes its Chrome trace (default: ./profiler_traces)")
    args = parser.parse_args()

    require_gpu()
    import cuda_course

    print(f"Profiling torch.ops.cuda_course.add on {N} floats, {describe_gpu()}")
    a, b = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    torch.cuda.synchronize()

    print("\n## (a) Plain: one call, the first one")
    print("The first call also pays one-time costs (loading the kernel's module, CPU-side setup):")
    print("its CPU times are not the steady state. (b) fixes that with warm-up steps.")
    with profile(activities=BOTH) as prof:
        cuda_course.add(a, b)
        torch.cuda.synchronize()
    print(table(prof))

    print("## (b) Schedule: wait 1 step, warm up 1, record 5; on_trace_ready gets the result")
    args.trace_dir.mkdir(parents=True, exist_ok=True)

    def on_trace_ready(p) -> None:
        print(table(p))
        print(f"GPU kernels recorded:\n{gpu_kernels(p)}")
        trace = args.trace_dir / f"add_step{p.step_num}.json"
        p.export_chrome_trace(str(trace))
        print(f"Chrome trace written to {trace}")

    with profile(activities=BOTH, schedule=schedule(wait=1, warmup=1, active=5, repeat=1),
                 on_trace_ready=on_trace_ready, record_shapes=True) as prof:
        for _ in range(8):
            cuda_course.add(a, b)
            prof.step()  # tells the profiler a step ended: it moves through wait/warmup/active

    print("\n## (c) toggle_collection_dynamic: profile only part of each step")
    print("The inputs are made with collection off, so randn's kernel is not recorded.")
    with profile(activities=BOTH) as prof:
        for _ in range(5):
            prof.toggle_collection_dynamic(False, BOTH)
            x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
            prof.toggle_collection_dynamic(True, BOTH)
            cuda_course.add(x, y)
        torch.cuda.synchronize()
    print(table(prof))
    print(f"GPU kernels recorded:\n{gpu_kernels(prof)}")

    print("\n## (d) The autograd profiler (torch.autograd.profiler.profile)")
    print("The older API; use_device='cuda' replaces the notes' deprecated use_cuda=True.")
    with torch.autograd.profiler.profile(use_device="cuda") as prof:
        cuda_course.add(a, b)
        torch.cuda.synchronize()
    print(table(prof))
    return 0


if __name__ == "__main__":
    sys.exit(main())
