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

Python's standard library only; test_alpha_beta.py checks it on made-up measurements.

    python3 08_multi_gpu/model/alpha_beta.py [08_allreduce.json]

prints the fit and the predictions as a table, and a SUMMARY line (the GPU check records it
right after 08_allreduce's run). Exit 77 when there is no recorded run to fit.
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


def measured_points(record_json):
    """(bytes, seconds) of NCCL's all-reduce from a run of 08_allreduce: its SUMMARY figures
    nccl_us_<size> (as docs/results/data/08_allreduce.json keeps them)."""
    data = json.loads(Path(record_json).read_text(encoding="utf-8"))
    figures = data["summaries"][-1]["figures"] if "summaries" in data else data["figures"]
    units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    points = []
    for key, value in figures.items():
        if not key.startswith("nccl_us_") or value is None:
            continue
        label = key[len("nccl_us_"):]
        number = label.rstrip("BKMGi")
        points.append((int(number) * units[label[len(number):]], value * 1e-6))
    if len(points) < 2:
        raise ValueError("%s holds fewer than two nccl_us_<size> figures" % record_json)
    return sorted(points)


def main(argv=None):
    default = Path(__file__).resolve().parents[2] / "docs" / "results" / "data" / "08_allreduce.json"
    parser = argparse.ArgumentParser(description="Fits the alpha-beta model to 08_allreduce's NCCL times "
                                                 "and predicts 4 and 8 GPUs and two hosts.")
    parser.add_argument("record", nargs="?", default=str(default), help="08_allreduce's record (default: %(default)s)")
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
    print("\nSUMMARY " + json.dumps({"program": "08_model", "checks": 1, "failed": 0 if ok else 1, "exact": 0,
                                     "goals": [], "figures": figures}, separators=(",", ":")))
    return 0 if ok else 1


def label(size):
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit and size % unit == 0:
            return "%d %s" % (size // unit, name)
    return "%d B" % size


if __name__ == "__main__":
    sys.exit(main())
