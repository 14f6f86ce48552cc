"""A latency-plus-bandwidth (alpha-beta) model of the all-reduce, fitted to measured runs.

A message of S bytes costs t(S) = alpha + S / beta: alpha is what every call pays whatever its
size (launch, handshakes, the links' latency), beta the bandwidth that large messages reach.
Fitted to the two-GPU runs, the model predicts other machines by counting steps and bytes:

- a ring all-reduce over n GPUs takes 2 (n - 1) steps, and each GPU's links carry
  2 (n - 1) / n * S bytes: t = 2 (n - 1) alpha_step + 2 (n - 1) / n * S / B;
- on two GPUs that is 2 steps and S bytes, so B = beta (the bus bandwidth), and alpha_step is
  at most alpha / 2 (all of alpha per step) and at least alpha / (2 (n - 1)) (alpha per call,
  none per step): the prediction is a band. Through an NVSwitch every H100 keeps its own 18
  NVLinks, so B stays;
- two hosts: reduce-scatter inside each host over NVLink, an all-reduce of each GPU's 1/g
  slice with its peer on the other host over that GPU's own InfiniBand NIC, then an all-gather
  inside the host (NCCL's hierarchical pattern when each GPU has a NIC).

NCCL's own choice changes protocol with the size (LL for small messages, LL128, then Simple),
so one line through its times bends; each protocol, forced (08_nccl_protocols), gets its own fit,
checked against every measured time from 64 KiB up (below that, launch and handshakes are all
there is). The network's own alpha and beta come from NCCL forced onto its socket transport
(08_nccl_network), when that run exists.

Python's standard library only; test_alpha_beta.py checks it on made-up measurements.

    python3 08_multi_gpu/model/alpha_beta.py [08_allreduce.json] [--protocols 08_nccl_protocols.json]
                                             [--network 08_nccl_network.json]

prints the fits and the predictions as tables, and a SUMMARY line (the GPU check records it
right after the runs it reads). Exit 77 when there is no recorded run to fit.
"""
import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

# Assumptions for two hosts, stated, not measured here: one ConnectX-7 NIC per GPU at
# 400 Gb/s (NVIDIA DGX H100 datasheet) = 50 GB/s each way, and a few microseconds per network step.
IB_NIC_BYTES_PER_S = 50e9
IB_STEP_SECONDS = 5e-6


@dataclass
class Fit:
    alpha: float  # seconds per call
    beta: float   # bytes per second (bus bandwidth on two GPUs)

    def time(self, size):
        return self.alpha + size / self.beta


def fit(sizes, seconds):
    """Least squares on relative error (small and large messages count alike):
    minimizes sum(((alpha + s / beta) - t) / t)^2 over alpha and 1 / beta."""
    if len(sizes) != len(seconds) or len(sizes) < 2:
        raise ValueError("need at least two (size, time) pairs of equal length")
    if any(s <= 0 for s in sizes) or any(t <= 0 for t in seconds):
        raise ValueError("sizes and times must be positive")
    # Weighted normal equations for t = a + b s with weights 1 / t^2.
    w = [1 / t ** 2 for t in seconds]
    sw = sum(w)
    sws = sum(wi * s for wi, s in zip(w, sizes))
    swss = sum(wi * s * s for wi, s in zip(w, sizes))
    swt = sum(wi * t for wi, t in zip(w, seconds))
    swst = sum(wi * s * t for wi, s, t in zip(w, sizes, seconds))
    det = sw * swss - sws * sws
    if det <= 0:
        raise ValueError("need at least two different sizes")
    a = (swss * swt - sws * swst) / det
    b = (sw * swst - sws * swt) / det
    if b <= 0:
        raise ValueError("the times do not grow with the size: no bandwidth to fit")
    return Fit(alpha=max(a, 0.0), beta=1 / b)


# [excerpt:ring]
def ring(n, size, alpha_step, bandwidth):
    """A ring all-reduce over n GPUs: 2 (n - 1) steps, 2 (n - 1) / n of the message per GPU."""
    return 2 * (n - 1) * alpha_step + 2 * (n - 1) / n * size / bandwidth
# [/excerpt:ring]


def one_host(n, size, two_gpu_fit, per_step=True):
    """n GPUs behind an NVSwitch, predicted from the fit to two GPUs. Two GPUs cannot tell how
    alpha splits into a fixed cost per call (launch) and a cost per step (a hop's latency):
    per_step=True charges all of it per step (2 (n - 1) alpha / 2: the slow end), False charges
    it once (alpha whatever n: the fast end). A run on n GPUs says where between them it lies."""
    alpha_step = two_gpu_fit.alpha / 2 if per_step else two_gpu_fit.alpha / (2 * (n - 1))
    return ring(n, size, alpha_step, two_gpu_fit.beta)


def two_hosts(gpus_per_host, size, two_gpu_fit, nic=IB_NIC_BYTES_PER_S, net_step=IB_STEP_SECONDS):
    """2 hosts of g GPUs: reduce-scatter in the host, all-reduce of S / g across hosts, all-gather."""
    g = gpus_per_host
    half = (g - 1) * two_gpu_fit.alpha / 2 + (g - 1) / g * size / two_gpu_fit.beta  # one of RS, AG
    across = ring(2, size / g, net_step, nic)
    return 2 * half + across


def record_figures(record_json):
    """The figures of a run's last SUMMARY line ({} when the run printed none, e.g. it failed)."""
    data = json.loads(Path(record_json).read_text(encoding="utf-8"))
    if "summaries" not in data:
        return data["figures"]
    return data["summaries"][-1]["figures"] if data["summaries"] else {}


def size_of(label):
    units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    number = label.rstrip("BKMGi")
    return int(number) * units[label[len(number):]]


def measured_points(record_json, prefix="nccl_us_"):
    """(bytes, seconds) from a run's SUMMARY figures <prefix><size> (as docs/results/data/*.json
    keep them): 08_allreduce's and 08_nccl_network's nccl_us_<size>."""
    points = [(size_of(key[len(prefix):]), value * 1e-6) for key, value in record_figures(record_json).items()
              if key.startswith(prefix) and value is not None]
    if len(points) < 2:
        raise ValueError("%s holds fewer than two %s<size> figures" % (record_json, prefix))
    return sorted(points)


PROTOCOL_FLOOR = 64 << 10  # the fits cover messages from here up


def protocol_points(record_json):
    """{"Ring Simple": [(bytes, seconds), ...], ...} from 08_nccl_protocols' figures
    <algo>_<proto>_us_<size> (ring_ll_us_4KiB, tree_simple_us_1GiB, ...)."""
    names = {"ring": "Ring", "tree": "Tree", "ll": "LL", "ll128": "LL128", "simple": "Simple"}
    found = {}
    for key, value in record_figures(record_json).items():
        parts = key.split("_")
        if len(parts) != 4 or parts[2] != "us" or parts[0] not in ("ring", "tree") or value is None:
            continue
        found.setdefault("%s %s" % (names[parts[0]], names[parts[1]]), []).append((size_of(parts[3]), value * 1e-6))
    return {k: sorted(v) for k, v in found.items() if len(v) >= 2}


def worst_error(f, points):
    """The largest |model - measured| / measured over points."""
    return max(abs(f.time(s) - t) / t for s, t in points)


def protocol_fits(points_by_protocol, floor=PROTOCOL_FLOOR):
    """One fit per protocol over its times from `floor` bytes up: {name: (Fit, worst error)}."""
    fits = {}
    for name, points in points_by_protocol.items():
        covered = [(s, t) for s, t in points if s >= floor]
        if len(covered) < 2:
            continue
        f = fit([s for s, _ in covered], [t for _, t in covered])
        fits[name] = (f, worst_error(f, covered))
    return fits


def main(argv=None):
    default = Path(__file__).resolve().parents[2] / "docs" / "results" / "data" / "08_allreduce.json"
    parser = argparse.ArgumentParser(description="Fits the alpha-beta model to 08_allreduce's NCCL times "
                                                 "and predicts 4 and 8 GPUs and two hosts.")
    parser.add_argument("record", nargs="?", default=str(default), help="08_allreduce's record (default: %(default)s)")
    parser.add_argument("--protocols", help="08_nccl_protocols' record: one fit per forced algorithm and protocol")
    parser.add_argument("--network", help="08_nccl_network's record: NCCL over sockets, the network's alpha and beta")
    parser.add_argument("--torch", help="08_torch_symm_mem's record: PyTorch's one-shot in CUDA graphs, against ours")
    args = parser.parse_args(argv)
    if not Path(args.record).exists():
        print("No recorded run of 08_allreduce at %s: nothing to fit. Skipping (exit code 77)." % args.record,
              file=sys.stderr)
        return 77
    points = measured_points(args.record)
    f = fit([s for s, _ in points], [t for _, t in points])
    worst = max(abs(f.time(s) - t) / t for s, t in points)
    print("Fit to NCCL's all-reduce on two GPUs: alpha = %.1f us, beta = %.0f GB/s; worst point %.0f%% off the fit.\n"
          % (f.alpha * 1e6, f.beta / 1e9, 100 * worst))
    print("### Predicted all-reduce time (fp32): 4 and 8 GPUs behind an NVSwitch (alpha once per call .. alpha per "
          "step), two hosts of 8 over InfiniBand\n")
    print("| Size | measured, 2 GPUs | fit, 2 GPUs | 4 GPUs | 8 GPUs | 2 hosts x 8 |")
    print("|---|---|---|---|---|---|")
    us = lambda seconds: "%.1f us" % (seconds * 1e6) if seconds < 1e-3 else "%.2f ms" % (seconds * 1e3)  # noqa: E731
    for size, measured in points:
        band = ["%s .. %s" % (us(one_host(n, size, f, per_step=False)), us(one_host(n, size, f))) for n in (4, 8)]
        print("| %s | %s | %s | %s | %s | %s |" % (label(size), us(measured), us(f.time(size)), band[0], band[1],
                                                   us(two_hosts(8, size, f))))
    ok = worst < 1.0  # the shape is right: every measured point within a factor of two of the fit
    print("\nCheck %s: every measured time within a factor of two of the fit" % ("ok" if ok else "FAILED"))
    figures = {"alpha_us": round(f.alpha * 1e6, 1), "beta_gbs": round(f.beta / 1e9), "worst_pct": round(100 * worst),
               "gpus8_1GiB_ms": round(one_host(8, 1 << 30, f) * 1e3, 2),
               "hosts2_1GiB_ms": round(two_hosts(8, 1 << 30, f) * 1e3, 2)}
    goals = protocols_section(args.protocols, figures)
    network_section(args.network, f, figures)
    goals += torch_section(args.torch, args.record, figures)
    print("\nSUMMARY " + json.dumps({"program": "08_model", "checks": 1, "failed": 0 if ok else 1, "exact": 0,
                                     "goals": goals, "figures": figures}, separators=(",", ":")))
    return 0 if ok else 1


def protocols_section(record, figures):
    """Prints one fit per forced protocol and returns its goal lines: within 10% from 64 KiB up."""
    if not record or not Path(record).exists():
        print("\nNo record of 08_nccl_protocols%s: no fit per protocol." % (" at " + record if record else ""))
        return []
    fits = protocol_fits(protocol_points(record))
    if not fits:
        print("\n%s holds no times to fit per protocol (did the sweep fail?)." % record)
        return []
    print("\n### One fit per NCCL algorithm and protocol, forced (CUDA graphs), over %s and up\n" % label(PROTOCOL_FLOOR))
    print("| Algorithm, protocol | alpha | beta (bus) | worst point off the fit |")
    print("|---|---|---|---|")
    goals = []
    for name, (pf, err) in sorted(fits.items()):
        print("| %s | %.1f us | %.0f GB/s | %.1f%% |" % (name, pf.alpha * 1e6, pf.beta / 1e9, 100 * err))
        key = name.lower().replace(" ", "_")
        figures.update({key + "_alpha_us": round(pf.alpha * 1e6, 1), key + "_beta_gbs": round(pf.beta / 1e9),
                        key + "_worst_pct": round(100 * err, 1)})
        goal = "model within 10%% of NCCL %s at every size from %s up" % (name, label(PROTOCOL_FLOOR))
        value = round(100 - 100 * err, 1)
        goals.append({"goal": goal, "value": value, "at_least": 90, "unit": "%", "met": value >= 90})
    print()
    for g in goals:
        print("Goal: %s >= 90%%: %.1f%%, %s" % (g["goal"], g["value"], "met" if g["met"] else "NOT met"))
    return goals


TORCH_LIMIT = 1 << 20  # the goal covers every size up to this


def torch_section(torch_record, ours_record, figures):
    """Ours (08_allreduce's mine_graph_us_<size>) against PyTorch's one_shot_all_reduce (08_torch_symm_mem's
    symm_one_shot_graph_us_<size>, from torch_allreduce.py --symm-mem), both in CUDA graphs, up to 1 MiB.
    Two programs, so two runs of the same GPU check, not one: said beside the goal."""
    if not torch_record or not Path(torch_record).exists():
        print("\nNo record of 08_torch_symm_mem%s: no comparison with PyTorch's one-shot."
              % (" at " + torch_record if torch_record else ""))
        return []
    theirs = dict(measured_points(torch_record, "symm_one_shot_graph_us_")) if any(
        k.startswith("symm_one_shot_graph_us_") for k in record_figures(torch_record)) else {}
    ours = dict(measured_points(ours_record, "mine_graph_us_")) if any(
        k.startswith("mine_graph_us_") for k in record_figures(ours_record)) else {}
    sizes = sorted(s for s in theirs if s in ours and s <= TORCH_LIMIT)
    if not sizes:
        print("\nNo sizes up to 1 MiB with graph times from both ours and PyTorch's one-shot: no comparison.")
        return []
    print("\n### In CUDA graphs: ours against PyTorch's one_shot_all_reduce (two runs of one GPU check)\n")
    print("| Size | ours | PyTorch one-shot | PyTorch / ours |")
    print("|---|---|---|---|")
    for s in sizes:
        print("| %s | %.2f us | %.2f us | %.2fx |" % (label(s), ours[s] * 1e6, theirs[s] * 1e6, theirs[s] / ours[s]))
    worst = min(theirs[s] / ours[s] for s in sizes)
    figures["vs_torch_one_shot_worst"] = round(worst, 2)
    goal = "in CUDA graphs, PyTorch's one-shot time over ours, worst size up to 1 MiB (two runs)"
    print("\nGoal: %s >= 1x: %.2fx, %s" % (goal, worst, "met" if worst >= 1 else "NOT met"))
    return [{"goal": goal, "value": round(worst, 3), "at_least": 1, "unit": "x", "met": worst >= 1}]


def network_section(record, two_gpu_fit, figures):
    """The socket transport's alpha and beta (NCCL forced off NVLink), and two hosts joined by it."""
    if not record or not Path(record).exists():
        print("\nNo record of 08_nccl_network%s: the network's terms stay the stated InfiniBand assumptions."
              % (" at " + record if record else ""))
        return
    if sum(k.startswith("nccl_us_") for k in record_figures(record)) < 2:
        print("\n%s holds fewer than two times: no network terms." % record)
        return
    points = measured_points(record)
    net = fit([s for s, _ in points], [t for _, t in points])
    print("\nNCCL over its socket transport (loopback, one process per GPU): alpha = %.1f us, beta = %.2f GB/s; "
          "worst point %.0f%% off the fit." % (net.alpha * 1e6, net.beta / 1e9, 100 * worst_error(net, points)))
    hosts = two_hosts(8, 1 << 30, two_gpu_fit, nic=net.beta, net_step=net.alpha / 2)
    print("Two hosts of 8 GPUs joined by such a network: 1 GiB in %.1f ms (InfiniBand as assumed: %.2f ms)."
          % (hosts * 1e3, two_hosts(8, 1 << 30, two_gpu_fit) * 1e3))
    figures.update({"net_alpha_us": round(net.alpha * 1e6, 1), "net_beta_gbs": round(net.beta / 1e9, 2),
                    "hosts2_socket_1GiB_ms": round(hosts * 1e3, 1)})


def label(size):
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit and size % unit == 0:
            return "%d %s" % (size // unit, name)
    return "%d B" % size


if __name__ == "__main__":
    sys.exit(main())
