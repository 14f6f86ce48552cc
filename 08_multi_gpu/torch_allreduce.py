"""Chapter 08, part 5 in PyTorch: the same exact all-reduce, one process per GPU, started by torchrun.

    torchrun --nproc-per-node=<gpus> 08_multi_gpu/torch_allreduce.py [--runs 20] [--rounds 3]
    torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=<host a>:29500 \\
        08_multi_gpu/torch_allreduce.py        # on each of two hosts

torchrun starts the processes and sets RANK, WORLD_SIZE and LOCAL_RANK; init_process_group
finds the others through env:// (MASTER_ADDR, MASTER_PORT, set by torchrun too). Each rank
checks the all-reduce exactly at every size, then times it as 08_mpi_allreduce does: batches of
back-to-back calls between CUDA events, started together behind a sleeping kernel while the host
queues them. The time of one call with a synchronize after it (the host's work included) is
printed beside it. Rank 0 prints the table and the SUMMARY line.
--symm-mem: instead, PyTorch's own one-shot all-reduce over symmetric memory
(torch.ops.symm_mem.one_shot_all_reduce, multicast off), checked exactly and timed per call in a
CUDA graph from 4 KiB to 1 MiB, for comparison with 08_allreduce's kernels in graphs.
--require-gpus N (no torchrun): exit 0 if this machine has N GPUs for PyTorch, else 77 and why.
Every wait is under --deadline-ms (default 20 s), as in the C++ programs: a watchdog thread names the
ranks that never arrived (from their progress in torchrun's key-value store) and ends the process;
torchrun then ends the others. PyTorch's own NCCL watchdog gets the same deadline.
"""
import argparse
import contextlib
import datetime
import json
import os
import statistics
import sys
import threading
import time

# NVLink multicast stays off, here and in every child (they inherit the environment).
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"

SIZES = [4 << 10, 256 << 10, 1 << 20, 16 << 20, 64 << 20]  # bytes, timed
ODD = [1, 7, 1000003]  # floats, checked exactly too
GATE_CYCLES = 20_000_000  # ~10 ms at 2 GHz: longer than the host needs to queue a batch
SYMM_SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20]  # bytes, --symm-mem
GRAPH_CALLS = 100  # calls captured in one CUDA graph: launch gaps out of the time
DEFAULT_DEADLINE_MS = 20_000  # as the C++ programs' --deadline-ms


class Watchdog:
    """Every wait under one deadline (the C++ programs' watchdog.hpp, in Python). The main thread
    marks its waits (`with watchdog.waiting("..."):`) and posts its progress to torchrun's store
    once per check or batch; a thread looks ten times a deadline and, past it, says which wait,
    which ranks are behind or silent, and ends this process (exit 1; torchrun ends the others)."""

    def __init__(self, deadline_ms, rank, world):
        self.deadline_s, self.rank, self.world = deadline_ms / 1000, rank, world
        self.what, self.since, self.count, self.store = None, None, 0, None
        threading.Thread(target=self._watch, daemon=True).start()

    @contextlib.contextmanager
    def waiting(self, what):
        self.what, self.since = what, time.monotonic()
        try:
            yield
        finally:
            self.since = None

    def step(self):
        """This rank reached its next check or batch: posted where every rank can read it."""
        self.count += 1
        if self.store is not None:
            self.store.set("progress/%d" % self.rank, str(self.count))

    def _who(self):
        if self.store is None:
            return "the process group was not set up yet"
        self.store.set_timeout(datetime.timedelta(seconds=2))  # the store lives in rank 0's process
        behind = []
        try:
            for r in range(self.world):
                if r != self.rank:
                    theirs = int(self.store.get("progress/%d" % r)) if self.store.check(["progress/%d" % r]) else 0
                    if theirs < self.count:
                        behind.append("%d (at step %d)" % (r, theirs))
        except Exception:  # noqa: BLE001 -- a store that does not answer is the answer
            return "torchrun's store (served by rank 0's process) does not answer: rank 0 stopped or died"
        return ("rank %s never arrived (this rank is at step %d)" % (", ".join(behind), self.count) if behind
                else "every rank reached this step")

    def _watch(self):
        while True:
            time.sleep(min(0.1, self.deadline_s / 10))
            since = self.since
            if since is not None and time.monotonic() - since > self.deadline_s:
                print("rank %d: %s not done after %.1f s (deadline %.1f s, --deadline-ms): %s. Aborting."
                      % (self.rank, self.what, time.monotonic() - since, self.deadline_s, self._who()),
                      file=sys.stderr, flush=True)
                os._exit(1)


def label(size):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d%s" % (size >> shift, unit)
    return "%dB" % size


def exact_input(torch, rank, n):
    """Small whole numbers, as multi_gpu::exact_input: every sum is exact in float32."""
    i = torch.arange(n, device="cuda", dtype=torch.int64)
    return ((i * 7 + rank * 3) % 17 - 8).to(torch.float32)


def batch_times(torch, dist, y, runs, watchdog):
    """runs back-to-back all-reduces between events, queued behind a sleeping kernel: GPU times."""
    watchdog.step()
    dist.all_reduce(y)  # warm-up
    with watchdog.waiting("the warm-up all-reduce and the barrier"):
        torch.cuda.synchronize()
        dist.barrier(device_ids=[torch.cuda.current_device()])  # every rank starts its batch together
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(runs + 1)]
    torch.cuda._sleep(GATE_CYCLES)  # the gate: the GPU waits while the host queues the batch
    marks[0].record()
    for i in range(runs):
        dist.all_reduce(y)
        marks[i + 1].record()
    with watchdog.waiting("a timed batch"):
        torch.cuda.synchronize()
    return [marks[i].elapsed_time(marks[i + 1]) for i in range(runs)]


def per_call_times(torch, dist, y, runs, watchdog):
    """One call at a time, a synchronize after each: what a loop in Python sees, host included."""
    times = []
    watchdog.step()
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dist.all_reduce(y)
        stop.record()
        with watchdog.waiting("an all-reduce timed per call"):
            stop.synchronize()
        times.append(start.elapsed_time(stop))
    return times


def run(args):
    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    count, why = gpus_for_pytorch()
    if count <= local:  # one line per rank, no traceback (bare torchrun then reports its own failure)
        print("rank %d: %s (GPU %d wanted, %d usable). Skipping (exit code 77); 08_multi_gpu/torchrun.sh decides "
              "the skip before torchrun starts." % (rank, why or "too few GPUs", local, count), flush=True)
        return 77
    import torch
    import torch.distributed as dist
    watchdog = Watchdog(args.deadline_ms, rank, world)
    torch.cuda.set_device(local)
    with watchdog.waiting("init_process_group (it waits until every rank joins)"):
        dist.init_process_group("nccl", device_id=torch.device("cuda", local),  # env://, from torchrun
                                timeout=datetime.timedelta(milliseconds=args.deadline_ms))  # PyTorch's own watchdog too
    watchdog.store = dist.distributed_c10d._get_default_store()
    if args.symm_mem:
        return run_symm_mem(torch, dist, rank, world, args, watchdog)
    errors = []
    for n in [s // 4 for s in SIZES] + ODD:
        watchdog.step()
        y = exact_input(torch, rank, n)
        dist.all_reduce(y)  # in place: y = sum over ranks
        expected = sum(exact_input(torch, r, n) for r in range(world))
        with watchdog.waiting("an all-reduce being checked"):
            errors.append((n, (y - expected).abs().max().item()))
    rows = []
    for size in SIZES:
        y = exact_input(torch, rank, size // 4)
        batches = [statistics.median(batch_times(torch, dist, y, args.runs, watchdog)) for _ in range(args.rounds)]
        rows.append((size, statistics.median(batches), min(batches), max(batches),
                     statistics.median(per_call_times(torch, dist, y, args.runs, watchdog))))
    worst = torch.tensor([e for _, e in errors], device="cuda")
    watchdog.step()
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)  # the worst error over all ranks
    if rank == 0:
        report(world, args, rows, [(n, e) for (n, _), e in zip(errors, worst.tolist())])
    dist.destroy_process_group()
    return 0 if all(e == 0 for e in worst.tolist()) else 1  # every rank knows every rank's errors


def run_symm_mem(torch, dist, rank, world, args, watchdog):
    """PyTorch's one-shot all-reduce over symmetric memory, exact, then per call in a CUDA graph."""
    import torch.distributed._symmetric_memory as symm_mem
    group = dist.group.WORLD
    errors, rows = [], []
    for size in SYMM_SIZES:
        n = size // 4
        watchdog.step()
        x = symm_mem.empty(n, device="cuda", dtype=torch.float32)
        with watchdog.waiting("the symmetric-memory rendezvous"):
            symm_mem.rendezvous(x, group)  # every rank maps every other rank's buffer
        x.copy_(exact_input(torch, rank, n))
        out = torch.full_like(x, float("nan"))  # poisoned
        with watchdog.waiting("a barrier"):
            torch.cuda.synchronize()
            dist.barrier(device_ids=[torch.cuda.current_device()])
        torch.ops.symm_mem.one_shot_all_reduce_out(x, "sum", group.group_name, out)
        expected = sum(exact_input(torch, r, n) for r in range(world))
        with watchdog.waiting("a one-shot all-reduce being checked"):
            errors.append((n, (out - expected).abs().max().item()))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(GRAPH_CALLS):
                torch.ops.symm_mem.one_shot_all_reduce_out(x, "sum", group.group_name, out)
        graph.replay()  # warm-up
        with watchdog.waiting("a graph replay"):
            torch.cuda.synchronize()
        per_call = []
        for _ in range(args.rounds):
            watchdog.step()
            with watchdog.waiting("a barrier"):
                dist.barrier(device_ids=[torch.cuda.current_device()])
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            stop.record()
            with watchdog.waiting("a graph replay"):
                stop.synchronize()
            per_call.append(start.elapsed_time(stop) / GRAPH_CALLS)
        rows.append((size, statistics.median(per_call), min(per_call), max(per_call)))
    worst = torch.tensor([e for _, e in errors], device="cuda")
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    if rank == 0:
        print("\n### PyTorch's one-shot all-reduce (symmetric memory), %d processes, %d calls in a CUDA graph "
              "(median of %d graphs, rank 0's clock)\n" % (world, GRAPH_CALLS, args.rounds))
        print("| Size | Per call | Spread |\n|---|---|---|")
        figures = {"gpus": world}
        for size, ms, low, high in rows:
            print("| %s | %.2f us | %.0f%% |" % (label(size), ms * 1e3, 100 * (high - low) / ms))
            figures["symm_one_shot_graph_us_" + label(size)] = round(ms * 1e3, 2)
        print_checks_and_summary([(n, e) for (n, _), e in zip(errors, worst.tolist())], figures)
    dist.destroy_process_group()
    return 0 if all(e == 0 for e in worst.tolist()) else 1


def print_checks_and_summary(errors, figures):
    print()
    failed = 0
    for n, error in errors:
        print("Max error: %g  (all-reduce of %d floats, every rank)" % (error, n))
        failed += error != 0
    print("\nSUMMARY " + json.dumps({"program": "08_torch_allreduce", "checks": len(errors), "failed": failed,
                                      "exact": len(errors), "goals": [], "figures": figures}, separators=(",", ":")))
    sys.stdout.flush()


def report(world, args, rows, errors):
    print("\n### torch.distributed all-reduce, %d processes (median of %d batches of %d runs, rank 0's clock)\n"
          % (world, args.rounds, args.runs))
    print("Batch: back-to-back calls between events, as the C++ programs time them. Per call: one call, then a\n"
          "synchronize, so each time also holds the host's work to issue it.\n")
    print("| Size | Batch | Spread | Bus GB/s | Per call (host included) |\n|---|---|---|---|---|")
    figures = {"gpus": world}
    for size, ms, low, high, per_call in rows:
        busbw = size / (ms * 1e6) * 2 * (world - 1) / world
        print("| %s | %.1f us | %.0f%% | %.1f | %.1f us |" % (label(size), ms * 1e3, 100 * (high - low) / ms, busbw,
                                                           per_call * 1e3))
        figures["nccl_us_" + label(size)] = round(ms * 1e3, 1)
        figures["per_call_us_" + label(size)] = round(per_call * 1e3, 1)
    print_checks_and_summary(errors, figures)


def gpus_for_pytorch():
    """(count, why not) for this machine: PyTorch installed, CUDA usable, how many GPUs."""
    try:
        import torch
    except ImportError:
        return 0, "PyTorch is not installed"
    if not torch.cuda.is_available():
        return 0, "PyTorch sees no usable CUDA GPU"
    return torch.cuda.device_count(), ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per batch (default 20)")
    parser.add_argument("--rounds", type=int, default=3, help="batches per size (default 3)")
    parser.add_argument("--symm-mem", action="store_true",
                        help="PyTorch's one-shot all-reduce over symmetric memory, in CUDA graphs, instead")
    parser.add_argument("--require-gpus", type=int, metavar="N", help="only check that N GPUs are usable")
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS,
                        help="longest any wait may take before this rank names who did not arrive and ends "
                             "(default %d)" % DEFAULT_DEADLINE_MS)
    args = parser.parse_args()
    if args.runs < 1 or args.rounds < 1:
        parser.error("--runs and --rounds must be at least 1")
    if args.deadline_ms < 100:
        parser.error("--deadline-ms must be at least 100")
    if args.require_gpus is not None:
        count, why = gpus_for_pytorch()
        if count < args.require_gpus:
            print("%s: %d processes need %d GPUs, this machine has %d. Skipping (exit code 77)."
                  % (why or "Too few GPUs", args.require_gpus, args.require_gpus, count))
            return 77
        return 0
    if "LOCAL_RANK" not in os.environ:
        parser.error("start it with torchrun, one process per GPU: "
                     "torchrun --nproc-per-node=<gpus> 08_multi_gpu/torch_allreduce.py")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
