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

Our own kernels follow the model 08_allreduce fits before its timed sizes (allreduce.cuh: one
alpha and beta per kernel, t = alpha + bytes sent per GPU / beta, the pick the fastest line). Given
the same program's run on two GPUs of the machine (--two-gpus), its fits predict every kernel on
the machine's n GPUs, beside what the n-GPU run measured, with the likely reason wherever the two
differ by more than 20%; the n-GPU fits then predict eight GPUs, beside a public figure for eight.

    python3 08_multi_gpu/model/alpha_beta.py [08_allreduce.json] [--two-gpus 08_allreduce_2gpus.json]
                                             [--protocols 08_nccl_protocols.json]
                                             [--network 08_nccl_network.json] [--torch 08_torch_symm_mem.json]

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


def ring_terms(f, fitted_on):
    """A fit to a ring on m GPUs (t = alpha + S / beta) as the ring's own terms: alpha per step if all
    of alpha is paid per step (alpha / (2 (m - 1))), and the bus bandwidth beta * 2 (m - 1) / m."""
    m = fitted_on
    return f.alpha / (2 * (m - 1)), f.beta * 2 * (m - 1) / m


def one_host(n, size, f, per_step=True, fitted_on=2):
    """n GPUs behind an NVSwitch, predicted from a fit to m GPUs (two unless fitted_on says). One GPU
    count cannot tell how alpha splits into a fixed cost per call (launch) and a cost per step (a
    hop's latency): per_step=True charges all of it per step (2 (n - 1) alpha / (2 (m - 1)): the
    slow end), False charges it once (alpha whatever n: the fast end). A run on n GPUs says where
    between them it lies."""
    alpha_step, bus = ring_terms(f, fitted_on)
    return ring(n, size, alpha_step if per_step else f.alpha / (2 * (n - 1)), bus)


def two_hosts(gpus_per_host, size, f, nic=IB_NIC_BYTES_PER_S, net_step=IB_STEP_SECONDS, fitted_on=2):
    """2 hosts of g GPUs: reduce-scatter in the host, all-reduce of S / g across hosts, all-gather."""
    g = gpus_per_host
    alpha_step, bus = ring_terms(f, fitted_on)
    half = (g - 1) * alpha_step + (g - 1) / g * size / bus  # one of the reduce-scatter and the all-gather
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
    parser.add_argument("--two-gpus", help="08_allreduce_2gpus' record: the same program on two GPUs of the machine; "
                                           "NCCL's fit and our kernels' predictions start from it (default: "
                                           "08_allreduce_2gpus.json beside the record, where there is one)")
    parser.add_argument("--protocols", help="08_nccl_protocols' record: one fit per forced algorithm and protocol")
    parser.add_argument("--network", help="08_nccl_network's record: NCCL over sockets, the network's alpha and beta")
    parser.add_argument("--torch", help="08_torch_symm_mem's record: PyTorch's one-shot in CUDA graphs, against ours")
    args = parser.parse_args(argv)
    if not Path(args.record).exists():
        print("No recorded run of 08_allreduce at %s: nothing to fit. Skipping (exit code 77)." % args.record,
              file=sys.stderr)
        return 77
    # NCCL's fit: to the two-GPU run where there is one, predicting the record's own GPU count beside it.
    two_path = args.two_gpus or str(Path(args.record).with_name("08_allreduce_2gpus.json"))
    two = two_path if Path(two_path).exists() and sum(
        k.startswith("nccl_us_") for k in record_figures(two_path)) >= 2 else None
    fit_record = two or args.record
    m, n = record_figures(fit_record).get("gpus", 2), record_figures(args.record).get("gpus", 2)
    points = measured_points(fit_record)
    f = fit([s for s, _ in points], [t for _, t in points])
    worst = max(abs(f.time(s) - t) / t for s, t in points)
    beside = dict(measured_points(args.record)) if n != m else {}
    print("Fit to NCCL's all-reduce on %d GPUs: alpha = %.1f us, beta = %.0f GB/s; worst point %.0f%% off the fit.\n"
          % (m, f.alpha * 1e6, f.beta / 1e9, 100 * worst))
    print("### Predicted all-reduce time (fp32): 4 and 8 GPUs behind an NVSwitch (alpha once per call .. alpha per "
          "step), two hosts of 8 over InfiniBand\n")
    extra = " measured, %d GPUs | off the band |" % n if beside else ""
    print("| Size | measured, %d GPUs | fit, %d GPUs | 4 GPUs | 8 GPUs | 2 hosts x 8 |%s" % (m, m, extra))
    print("|---|---|---|---|---|---|%s" % ("---|---|" if beside else ""))
    for size, measured in points:
        ends = {g: (one_host(g, size, f, False, m), one_host(g, size, f, True, m)) for g in (4, 8)}
        row = [label(size), us(measured), us(f.time(size))] + ["%s .. %s" % tuple(map(us, ends[g])) for g in (4, 8)]
        row.append(us(two_hosts(8, size, f, fitted_on=m)))
        if beside and size in beside:
            band = ends.get(n, (one_host(n, size, f, False, m), one_host(n, size, f, True, m)))
            row += [us(beside[size]), band_offset(beside[size], *band)]
        print("| %s |" % " | ".join(row))
    ok = worst < 1.0  # the shape is right: every measured point within a factor of two of the fit
    print("\nCheck %s: every measured time within a factor of two of the fit" % ("ok" if ok else "FAILED"))
    figures = {"nccl_fit_gpus": m, "alpha_us": round(f.alpha * 1e6, 1), "beta_gbs": round(f.beta / 1e9),
               "worst_pct": round(100 * worst), "gpus8_1GiB_ms": round(one_host(8, 1 << 30, f, fitted_on=m) * 1e3, 2),
               "hosts2_1GiB_ms": round(two_hosts(8, 1 << 30, f, fitted_on=m) * 1e3, 2)}
    goals = protocols_section(args.protocols, figures)
    network_section(args.network, f, m, figures)
    goals += torch_section(args.torch, args.record, figures)
    kernels_section(two_path, args.record, figures)
    print("\nSUMMARY " + json.dumps({"program": "08_model", "checks": 1, "failed": 0 if ok else 1, "exact": 0,
                                     "goals": goals, "figures": figures}, separators=(",", ":")))
    return 0 if ok else 1


def band_offset(measured, fast, slow):
    """Where a measured time lies against a predicted band: 'inside', or how far outside it."""
    if measured < fast:
        return "%.0f%% under" % (100 * (1 - measured / fast))
    if measured > slow:
        return "%.0f%% over" % (100 * (measured / slow - 1))
    return "inside"


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


def network_section(record, two_gpu_fit, fitted_on, figures):
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
    hosts = two_hosts(8, 1 << 30, two_gpu_fit, nic=net.beta, net_step=net.alpha / 2, fitted_on=fitted_on)
    print("Two hosts of 8 GPUs joined by such a network: 1 GiB in %.1f ms (InfiniBand as assumed: %.2f ms)."
          % (hosts * 1e3, two_hosts(8, 1 << 30, two_gpu_fit, fitted_on=fitted_on) * 1e3))
    figures.update({"net_alpha_us": round(net.alpha * 1e6, 1), "net_beta_gbs": round(net.beta / 1e9, 2),
                    "hosts2_socket_1GiB_ms": round(hosts * 1e3, 1)})


# --- Our kernels: the model 08_allreduce fits on its machine before the timed sizes -------------
# (allreduce.cuh, the pick excerpt): one alpha and beta per kernel, t = alpha + bytes_sent / beta.

KERNEL_NAMES = {"ll": "one-shot LL", "one_shot": "one-shot", "two_stage": "two-stage",
                "ce_gather": "two-stage, copy-engine gather"}
# The largest message each kernel takes (allreduce.cuh: kLLMaxFloats, kOneShotMaxFloats; the
# two-stage ones any), as the program's pick() sees them.
KERNEL_MAX_BYTES = {"ll": 1 << 20, "one_shot": 4 << 20, "two_stage": None, "ce_gather": None}
TOLERANCE = 0.2  # a prediction off by more than this gets a likely reason


def bytes_sent(kernel, n, size):
    """Bytes each GPU sends for a message of `size` bytes on n GPUs (allreduce.cuh's bytes_sent):
    the LL one-shot pushes it to n - 1 peers in lines half epoch, the one-shot pushes it once to each,
    the two-stage kernels send 1/n of it n - 1 times in each of their two halves."""
    if kernel == "ll":
        return 2 * (n - 1) * size
    if kernel == "one_shot":
        return (n - 1) * size
    return 2 * (n - 1) / n * size


def kernel_fits(figures):
    """{kernel: Fit} from 08_allreduce's fit_alpha_us_<kernel> and fit_beta_gbs_<kernel> (beta in
    bytes sent per GPU per second); {} for a run from before the program fitted them."""
    return {k: Fit(alpha=figures["fit_alpha_us_" + k] * 1e-6, beta=figures["fit_beta_gbs_" + k] * 1e9)
            for k in KERNEL_NAMES if figures.get("fit_alpha_us_" + k) is not None
            and figures.get("fit_beta_gbs_" + k)}


def kernel_time(kernel, f, n, size):
    return f.alpha + bytes_sent(kernel, n, size) / f.beta


def takes(kernel, size):
    return KERNEL_MAX_BYTES[kernel] is None or size <= KERNEL_MAX_BYTES[kernel]


def pick(fits, n, size):
    """The kernel the model predicts fastest on n GPUs for `size` bytes, as the program picks."""
    return min((k for k in fits if takes(k, size)), key=lambda k: kernel_time(k, fits[k], n, size))


TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds_of(cell):
    """'12.1 us' -> 1.21e-05; '-' (not run at that size) -> None."""
    number, _, unit = cell.partition(" ")
    return float(number) * TIME_UNITS[unit] if unit in TIME_UNITS else None


def eager_times(record_json):
    """Each kernel's eager time per size, {kernel: {bytes: seconds}}, from the table of every method
    08_allreduce printed (its output, <name>.output.txt beside the record); {} when there is none."""
    path = Path(record_json)
    output = path.with_name(path.name[:-len(".json")] + ".output.txt")
    if not path.name.endswith(".json") or not output.exists():
        return {}
    lines = output.read_text(encoding="utf-8").splitlines()

    def cells(line):
        return [c.strip() for c in line.strip().strip("|").split("|")]

    for i, line in enumerate(lines):
        header = cells(line)
        if not line.startswith("|") or header[0] != "Size" or "picked" not in header:
            continue
        columns = {k: header.index(name) for k, name in KERNEL_NAMES.items() if name in header}
        found = {}
        for row in lines[i + 2:]:
            if not row.startswith("|"):
                break
            row = cells(row)
            for k, column in columns.items():
                t = seconds_of(row[column]) if column < len(row) else None
                if t:
                    found.setdefault(k, {})[size_of(row[0])] = t
        return found
    return {}


def measured_kernel_times(record_json, fits, n):
    """{kernel: {bytes: seconds}}: every kernel's eager times where the output holds them, else the
    picked one's (mine_us_<size>), its kernel the one the run's own fits pick."""
    found = eager_times(record_json)
    if found:
        return found
    picked = {}
    for key, value in record_figures(record_json).items():
        if key.startswith("mine_us_") and value:
            size = size_of(key[len("mine_us_"):])
            picked.setdefault(pick(fits, n, size), {})[size] = value * 1e-6
    return picked


def likely_reason(kernel, small, big, n, size, measured):
    """Why the fit on fewer GPUs (small) missed the n-GPU time: the copy engines; the n-GPU line
    itself missing (fitted at two sizes); else whichever term moved more between the two fits."""
    if kernel == "ce_gather":
        return "the copy engines: each GPU's %d pushes queue on one stream" % (n - 1)
    if abs(kernel_time(kernel, big, n, size) / measured - 1) > TOLERANCE:
        return "the %d-GPU line misses here too (fitted at two sizes)" % n
    d_alpha = big.alpha - small.alpha
    d_bytes = bytes_sent(kernel, n, size) * (1 / big.beta - 1 / small.beta)
    if abs(d_alpha) >= abs(d_bytes):
        return "alpha %.1f -> %.1f us%s" % (small.alpha * 1e6, big.alpha * 1e6,
                                            ": more peers to flag and poll" if d_alpha > 0 else "")
    return "beta %.0f -> %.0f GB/s%s" % (small.beta / 1e9, big.beta / 1e9,
                                         ": each GPU's 18 links shared by %d peers" % (n - 1) if d_bytes > 0 else "")


def check_prediction(small_fits, m, big_fits, n, measured):
    """Rows (size, kernel, predicted from the m-GPU fits, measured on n, reason or ''), one per
    kernel measured at a size and fitted on both."""
    rows = []
    for size in sorted({s for times in measured.values() for s in times}):
        for k in KERNEL_NAMES:
            if size not in measured.get(k, {}) or k not in small_fits or k not in big_fits:
                continue
            t, predicted = measured[k][size], kernel_time(k, small_fits[k], n, size)
            off = abs(predicted / t - 1) > TOLERANCE
            reason = likely_reason(k, small_fits[k], big_fits[k], n, size, t) if off else ""
            rows.append((size, k, predicted, t, reason))
    return rows


def kernels_section(small_record, record, figures):
    """Our kernels across GPU counts: the fits on fewer GPUs predicting the record's n, then eight."""
    big = record_figures(record)
    big_fits, n = kernel_fits(big), big.get("gpus", 2)
    if not big_fits:
        print("\n%s holds no fits of our kernels (fit_alpha_us_<kernel>): no model of ours to check." % record)
        return
    if not Path(small_record).exists():
        print("\nNo record of 08_allreduce on two GPUs at %s: no check of the model across GPU counts." % small_record)
    else:
        small = record_figures(small_record)
        small_fits, m = kernel_fits(small), small.get("gpus", 2)
        if not small_fits or m >= n:
            print("\n%s holds no fits on fewer GPUs than %d: nothing to predict." % (small_record, n))
        else:
            prediction_section(small_fits, m, big_fits, n, measured_kernel_times(record, big_fits, n), figures)
    eight_section(big_fits, n, record, figures)


def prediction_section(small_fits, m, big_fits, n, measured, figures):
    print("\n### Our kernels: the fit on %d GPUs, predicting %d\n" % (m, n))
    print("| Kernel | alpha, %d GPUs | alpha, %d GPUs | beta, %d GPUs | beta, %d GPUs |" % (m, n, m, n))
    print("|---|---|---|---|---|")
    for k in KERNEL_NAMES:
        if k in small_fits and k in big_fits:
            s, b = small_fits[k], big_fits[k]
            print("| %s | %.2f us | %.2f us | %.0f GB/s | %.0f GB/s |" % (KERNEL_NAMES[k], s.alpha * 1e6, b.alpha * 1e6,
                                                                        s.beta / 1e9, b.beta / 1e9))
    rows = check_prediction(small_fits, m, big_fits, n, measured)
    if not rows:
        print("\nNo kernel measured on %d GPUs and fitted on both: nothing to compare." % n)
        return
    print("\nbeta: bytes sent per GPU per second. Picked by: the %d-GPU run's own fit, the %d-GPU fit, or both.\n"
          % (n, m))
    print("| Size | Kernel | picked by | predicted | measured | predicted / measured | "
          "likely reason, if over 20% off |")
    print("|---|---|---|---|---|---|---|")
    sizes = sorted({r[0] for r in rows})
    picks = {s: (pick(big_fits, n, s), pick(small_fits, n, s)) for s in sizes}
    for size, k, predicted, t, reason in rows:
        by = [who for who, chosen in zip(("%d-GPU fit" % n, "%d-GPU fit" % m), picks[size]) if chosen == k]
        print("| %s | %s | %s | %s | %s | %.2f | %s |" % (label(size), KERNEL_NAMES[k], "both" if len(by) == 2 else
                                                          "".join(by), us(predicted), us(t), predicted / t, reason))
    worst = max(abs(p / t - 1) for _, _, p, t, _ in rows)
    over = sum(1 for r in rows if r[4])
    same = sum(1 for a, b in picks.values() if a == b)
    print("\n%d of %d predictions within 20%% (worst %.0f%% off); the %d-GPU fit picks as the %d-GPU fit does at "
          "%d of %d sizes." % (len(rows) - over, len(rows), 100 * worst, m, n, same, len(sizes)))
    figures.update({"from%d_worst_pct" % m: round(100 * worst), "from%d_over20" % m: over,
                    "from%d_points" % m: len(rows), "from%d_same_pick" % m: same, "from%d_sizes" % m: len(sizes)})


# Public, not measured here (NVLink 4, 18 links per GPU, as on H200): NCCL's ring on 8 x H100,
# NVLink SHARP unused, in NVIDIA's NCCL maintainer's words.
PUBLIC_8GPU_RING_BUSBW = 370e9
PUBLIC_8GPU_SOURCE = ("NVIDIA's NCCL maintainer on a node of 8 x H100, NCCL_ALGO=RING: no NVLink SHARP",
                      "https://github.com/NVIDIA/nccl-tests/issues/212")


def eight_section(fits, n, record, figures):
    """Eight GPUs: ours from the n-GPU fits (the pick on 8), NCCL's ring from its n-GPU times."""
    if n >= 8:
        return
    points = measured_points(record)
    nccl = fit([s for s, _ in points], [t for _, t in points])
    print("\n### Eight GPUs, predicted from the %d-GPU fits (none was lent)\n" % n)
    print("| Size | ours: the model's pick | its time | NCCL's ring (alpha once .. per step) |")
    print("|---|---|---|---|")
    for size, _ in points:
        k = pick(fits, 8, size)
        band = (one_host(8, size, nccl, False, n), one_host(8, size, nccl, True, n))
        print("| %s | %s | %s | %s .. %s |" % (label(size), KERNEL_NAMES[k], us(kernel_time(k, fits[k], 8, size)),
                                              *map(us, band)))
    big = 1 << 30
    k = pick(fits, 8, big)
    ours, theirs = kernel_time(k, fits[k], 8, big), one_host(8, big, nccl, True, n)
    public = 2 * 7 / 8 * big / PUBLIC_8GPU_RING_BUSBW
    print("\nPublic, not measured here (%s): about %.0f GB/s of bus bandwidth,\n%s" % (
        PUBLIC_8GPU_SOURCE[0], PUBLIC_8GPU_RING_BUSBW / 1e9, PUBLIC_8GPU_SOURCE[1]))
    print("As a time for 1 GiB on 8 GPUs: %.2f ms. The model: NCCL %.2f ms (bus %.0f GB/s), ours %.2f ms (%s)."
          % (public * 1e3, theirs * 1e3, 2 * 7 / 8 * big / theirs / 1e9, ours * 1e3, KERNEL_NAMES[k]))
    figures.update({"gpus8_ours_1GiB_ms": round(ours * 1e3, 2), "gpus8_nccl_1GiB_ms": round(theirs * 1e3, 2),
                    "gpus8_nccl_busbw_gbs": round(2 * 7 / 8 * big / theirs / 1e9),
                    "gpus8_public_1GiB_ms": round(public * 1e3, 2)})


def us(seconds):
    """A time as the tables print it: microseconds below a millisecond, else milliseconds."""
    return "%.1f us" % (seconds * 1e6) if seconds < 1e-3 else "%.2f ms" % (seconds * 1e3)


def label(size):
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit and size % unit == 0:
            return "%d %s" % (size // unit, name)
    return "%d B" % size


if __name__ == "__main__":
    sys.exit(main())
