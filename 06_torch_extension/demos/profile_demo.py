"""The notes' torch.profiler patterns, and the older autograd profiler, on the chapter's add operator.

    PYTHONPATH=build/06_torch_extension/pkg python3 06_torch_extension/demos/profile_demo.py --trace-dir traces

(a) a plain profile of one call: the table, including the one-time costs of a first call;
(b) a schedule (wait, warm-up, active steps) with on_trace_ready, which prints the table and writes a
    Chrome trace (open it at https://ui.perfetto.dev or chrome://tracing);
(c) toggle_collection_dynamic: the notes' example and their four variants, side by side;
(d) tensorboard_trace_handler: the notes' commented-out alternative, a folder of traces;
(e) torch.autograd.profiler.profile, which the notes also show.
"""

import argparse
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

from summary import Summary
from timing import describe_gpu, markdown_table, require_gpu

N = 2**20  # about the notes' 1,024,000 elements: small, so launch overheads are visible
CPU, CUDA = ProfilerActivity.CPU, ProfilerActivity.CUDA
BOTH = [CPU, CUDA]
SORT = "self_device_time_total"  # the notes' "self_cuda_time_total" is the older name of the same column

# The notes' toggle_collection_dynamic examples: what each step does around the inputs' generation
# (two torch.randn) and the add. (switch, activities) pairs; None: no call.
TOGGLES = {
    "the notes' example": ((False, BOTH), (True, [CUDA])),
    "type 1": ((False, BOTH), None),
    "type 2": ((False, BOTH), (True, [CPU])),
    "type 3": ((False, BOTH), (True, BOTH)),
    "type 4": ((True, BOTH), (True, BOTH)),
}


def table(prof) -> str:
    return prof.key_averages().table(sort_by=SORT, row_limit=8, max_name_column_width=60)


def gpu_kernels(prof) -> list:
    """The GPU kernels in a profile (ProfilerStep* also has a GPU-side row, each step's span: not a kernel)."""
    return [e for e in prof.key_averages()
            if e.device_type == torch.autograd.DeviceType.CUDA and not e.key.startswith("ProfilerStep")]


def kernel_list(prof) -> str:
    """Full names (the table cuts them), with how often each ran."""
    return "\n".join(f"  {e.count} x {e.key}" for e in gpu_kernels(prof)) or "  (none)"


def describe_toggles(toggle) -> str:
    if toggle is None:
        return "-"
    enable, activities = toggle
    return f"{'on' if enable else 'off'}: {'+'.join(a.name for a in activities)}"


def run_toggled(prof, add, before_inputs, before_add, steps: int = 5) -> None:
    """The notes' loop: collection switched before the inputs are made and before the add."""
    for _ in range(steps):
        prof.toggle_collection_dynamic(*before_inputs)
        x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
        if before_add is not None:
            prof.toggle_collection_dynamic(*before_add)
        add(x, y)
        prof.step()
    torch.cuda.synchronize()


def is_add_kernel(event) -> bool:
    """The chapter's float4 kernel (a GPU event; the CPU-side launch has another name)."""
    return event.device_type == torch.autograd.DeviceType.CUDA and "cuda_course::vector_kernel" in event.key


def count(prof, predicate) -> int:
    return sum(e.count for e in prof.key_averages() if predicate(e))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace-dir", type=Path, default=Path("profiler_traces"),
                        help="where (b) and (d) write their traces (default: ./profiler_traces)")
    args = parser.parse_args()

    require_gpu()
    import cuda_course

    summary = Summary()
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
    summary.expect("(a) recorded one add kernel", count(prof, is_add_kernel) == 1)

    print("## (b) Schedule: wait 1 step, warm up 1, record 5; on_trace_ready gets the result")
    args.trace_dir.mkdir(parents=True, exist_ok=True)
    written = []

    def on_trace_ready(p) -> None:
        print(table(p))
        print(f"GPU kernels recorded:\n{kernel_list(p)}")
        trace = args.trace_dir / f"add_step{p.step_num}.json"
        p.export_chrome_trace(str(trace))
        written.append(trace)
        print(f"Chrome trace written to {trace}")

    with profile(activities=BOTH, schedule=schedule(wait=1, warmup=1, active=5, repeat=1),
                 on_trace_ready=on_trace_ready, record_shapes=True) as prof:
        for _ in range(8):
            cuda_course.add(a, b)
            prof.step()  # tells the profiler a step ended: it moves through wait/warmup/active
    summary.expect("(b) wrote a Chrome trace", bool(written) and written[0].stat().st_size > 0)

    print("\n## (c) toggle_collection_dynamic: the notes' example and their four variants")
    print("Each step: switch, make two inputs with torch.randn, switch, add them. What was recorded in 5 steps:\n")
    rows = []
    for name, (before_inputs, before_add) in TOGGLES.items():
        with profile(activities=BOTH) as prof:
            run_toggled(prof, cuda_course.add, before_inputs, before_add)
        kernels = gpu_kernels(prof)
        rows.append([name, describe_toggles(before_inputs), describe_toggles(before_add),
                     str(count(prof, lambda e: e.key == "aten::randn")),
                     str(count(prof, lambda e: e.key == "cuda_course::add")),
                     str(sum(e.count for e in kernels if is_add_kernel(e))),
                     str(sum(e.count for e in kernels if not is_add_kernel(e)))])
    print(markdown_table(["variant", "before randn", "before add", "CPU: aten::randn", "CPU: cuda_course::add",
                          "GPU: add kernels", "GPU: other kernels (randn's)"], rows))
    notes_row = rows[0]
    summary.expect("(c) the notes' example records the add's kernels and none of randn's",
                   notes_row[5] == "5" and notes_row[6] == "0")

    print("\n## (d) tensorboard_trace_handler: one trace file per recorded cycle, in a folder")
    board_dir = args.trace_dir / "tensorboard"
    with profile(activities=BOTH, schedule=schedule(wait=1, warmup=1, active=3, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(board_dir), worker_name="add")) as prof:
        for _ in range(10):
            cuda_course.add(a, b)
            prof.step()
    traces = sorted(board_dir.glob("*.pt.trace.json*"))
    for trace in traces:
        print(f"  {trace.name}  ({trace.stat().st_size / 1024:.0f} KiB)")
    print("TensorBoard's profiler plugin (torch-tb-profiler) that read this folder is deprecated. Open a file at")
    print("https://ui.perfetto.dev (or chrome://tracing), or analyze the folder with Holistic Trace Analysis:")
    print(f"  pip install HolisticTraceAnalysis; python3 -c \"from hta.trace_analysis import TraceAnalysis; "
          f"print(TraceAnalysis(trace_dir='{board_dir}').get_temporal_breakdown())\"")
    summary.expect("(d) the handler wrote one trace per cycle (2)", len(traces) == 2)

    print("\n## (e) The autograd profiler (torch.autograd.profiler.profile)")
    print("The older API; use_device='cuda' replaces the notes' deprecated use_cuda=True.")
    with torch.autograd.profiler.profile(use_device="cuda") as prof:
        cuda_course.add(a, b)
        torch.cuda.synchronize()
    print(table(prof))
    return summary.finish("06_torch_extension_profile")


if __name__ == "__main__":
    sys.exit(main())
