"""Chapter 08, part 5 in PyTorch: the same exact all-reduce, one process per GPU, torch.distributed.

    python3 08_multi_gpu/torch_allreduce.py [--runs 20]

mp.spawn starts one process per GPU (the count comes from the machine); each joins the NCCL
process group, runs the all-reduce of 08_process_per_gpu at the same sizes, checks its answer
exactly and times it with CUDA events. Rank 0 prints the table and the SUMMARY line.
Exit 77 without PyTorch, without CUDA, or with fewer than two GPUs.
"""
import argparse
import json
import os
import socket
import statistics
import sys

# NVLink multicast stays off, here and in every child (they inherit the environment).
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"

COUNTS = [1024, 262144, 16777216, 1000003]  # 4 KiB, 1 MiB, 64 MiB, an odd count (as the C++ launcher)


def exact_input(torch, rank, n, device):
    """Small whole numbers, as multi_gpu::exact_input: every sum is exact in float32."""
    i = torch.arange(n, device=device, dtype=torch.int64)
    return ((i * 7 + rank * 3) % 17 - 8).to(torch.float32)


# [excerpt:worker]
def worker(rank, world, port, runs):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    rows, errors = [], []
    for n in COUNTS:
        x = exact_input(torch, rank, n, "cuda")
        expected = sum(exact_input(torch, r, n, "cuda") for r in range(world))
        y = x.clone()
        dist.all_reduce(y)  # in place: y = sum over ranks
        errors.append((y - expected).abs().max().item())
        times = []
        for _ in range(3 + runs):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dist.all_reduce(y)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        rows.append((n, statistics.median(times[3:])))
    worst = torch.tensor(errors, device="cuda")
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)  # the worst error over all ranks
    # [/excerpt:worker]
    if rank == 0:
        report(world, runs, rows, worst.tolist())
    dist.destroy_process_group()


def report(world, runs, rows, worst):
    print("\n### torch.distributed all-reduce, %d processes (median of %d runs, rank 0)\n" % (world, runs))
    print("| Floats | Bytes | Time | Bus GB/s |\n|---|---|---|---|")
    figures = {"processes": world}
    for (n, ms) in rows:
        busbw = n * 4 / (ms * 1e6) * 2 * (world - 1) / world
        print("| %d | %d | %.1f us | %.1f |" % (n, n * 4, ms * 1e3, busbw))
        figures["us_%d" % n] = round(ms * 1e3, 1)
    print()
    failed = 0
    for (n, _), error in zip(rows, worst):
        print("Max error: %g  (all-reduce of %d floats, every rank)" % (error, n))
        failed += error != 0
    print("\nSUMMARY " + json.dumps({"program": "08_torch_allreduce", "checks": len(rows), "failed": failed,
                                      "exact": len(rows), "goals": [], "figures": figures}, separators=(",", ":")))
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per size (default 20)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError:
        print("PyTorch is not installed: skipping (exit code 77).", file=sys.stderr)
        return 77
    world = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if world < 2:
        print("This program needs two GPUs or more; this machine has %d. Skipping (exit code 77)." % world,
              file=sys.stderr)
        return 77
    with socket.socket() as s:  # a free port for rank 0's rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(world, port, args.runs), nprocs=world, join=True)  # raises if a rank fails
    return 0


if __name__ == "__main__":
    sys.exit(main())
