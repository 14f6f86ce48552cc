"""CPU tests of the alpha-beta model (python3 -m unittest discover -s 08_multi_gpu/model)."""
import contextlib
import io
import json
import random
import re
import tempfile
import unittest
from pathlib import Path

import alpha_beta as ab

SIZES = [4 << 10 << (2 * i) for i in range(10)]  # 4 KiB .. 1 GiB, as 08_allreduce runs them


class FitTest(unittest.TestCase):
    def test_exact_data_gives_exact_parameters(self):
        times = [10e-6 + s / 300e9 for s in SIZES]
        f = ab.fit(SIZES, times)
        self.assertAlmostEqual(f.alpha / 10e-6, 1, places=9)
        self.assertAlmostEqual(f.beta / 300e9, 1, places=9)

    def test_noisy_data_within_two_percent(self):
        rng = random.Random(8)
        times = [(20e-6 + s / 350e9) * (1 + rng.uniform(-0.01, 0.01)) for s in SIZES]
        f = ab.fit(SIZES, times)
        self.assertLess(abs(f.alpha / 20e-6 - 1), 0.02)
        self.assertLess(abs(f.beta / 350e9 - 1), 0.02)

    def test_bad_input_is_refused(self):
        with self.assertRaises(ValueError):
            ab.fit([1024], [1e-5])
        with self.assertRaises(ValueError):
            ab.fit([1024, 2048], [1e-5, -1.0])
        with self.assertRaises(ValueError):
            ab.fit([1024, 1024], [1e-5, 1e-5])
        with self.assertRaises(ValueError):  # time falls with size: no bandwidth
            ab.fit([1024, 1 << 30], [1e-3, 1e-5])


class PredictionTest(unittest.TestCase):
    f = ab.Fit(alpha=10e-6, beta=300e9)

    def test_two_gpus_reproduce_the_fit(self):
        for s in SIZES:
            self.assertAlmostEqual(ab.one_host(2, s, self.f) / self.f.time(s), 1, places=12)

    def test_ring_counts_steps_and_bytes(self):
        # 8 GPUs: 14 steps of alpha / 2, 14 / 8 of the message over the bus bandwidth.
        self.assertAlmostEqual(ab.one_host(8, 0, self.f), 14 * 5e-6)
        self.assertAlmostEqual(ab.one_host(8, 1 << 30, self.f) - 14 * 5e-6, 1.75 * (1 << 30) / 300e9)

    def test_latency_band(self):
        # Charged once per call, alpha does not grow with n; charged per step, it grows 2 (n - 1) / 2 times.
        self.assertAlmostEqual(ab.one_host(8, 0, self.f, per_step=False), self.f.alpha)
        for n in (2, 4, 8):
            for s in SIZES:
                self.assertLessEqual(ab.one_host(n, s, self.f, per_step=False), ab.one_host(n, s, self.f) * (1 + 1e-12))

    def test_more_gpus_take_longer_but_not_double(self):
        for s in SIZES:
            t2, t4, t8 = (ab.one_host(n, s, self.f) for n in (2, 4, 8))
            self.assertLess(t2, t4)
            self.assertLess(t4, t8)
            self.assertLess(t8, 2 * t2 + 14 * self.f.alpha)

    def test_two_hosts_pay_for_the_slower_network(self):
        big = 1 << 30
        self.assertGreater(ab.two_hosts(8, big, self.f), ab.one_host(8, big, self.f))
        # With a network as fast and as quick as NVLink, the hierarchy costs little more than one host.
        fast = ab.two_hosts(8, big, self.f, nic=self.f.beta * 8, net_step=self.f.alpha / 2)
        self.assertLess(fast, 1.2 * ab.one_host(16, big, self.f))


class RecordTest(unittest.TestCase):
    def test_reads_the_figures_of_a_record(self):
        record = {"summaries": [{"figures": {"nccl_us_4KiB": 10.0, "nccl_us_1GiB": 3300.0, "gpus": 2,
                                             "mine_us_4KiB": 5.0}}]}
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "08_allreduce.json"
            path.write_text(json.dumps(record))
            points = ab.measured_points(path)
            self.assertEqual([s for s, _ in points], [4096, 1 << 30])
            for (_, got), want in zip(points, [10e-6, 3300e-6]):
                self.assertAlmostEqual(got / want, 1, places=12)


class ProtocolTest(unittest.TestCase):
    def write(self, folder, name, figures):
        path = Path(folder) / name
        path.write_text(json.dumps({"summaries": [{"figures": figures}]}))
        return str(path)

    def test_one_fit_per_protocol_from_64_KiB_up(self):
        # Ring LL: 5 us + S / 100 GB/s; Ring Simple: 8 us + S / 330 GB/s; 4 KiB (below the floor) far off.
        figures = {"ring_ll_us_4KiB": 50.0, "ring_simple_us_4KiB": 50.0, "nccl_us_4KiB": 6.0}
        for s in SIZES[2:]:
            figures["ring_ll_us_%dKiB" % (s >> 10)] = (5e-6 + s / 100e9) * 1e6
            figures["ring_simple_us_%dKiB" % (s >> 10)] = (8e-6 + s / 330e9) * 1e6
        with tempfile.TemporaryDirectory() as folder:
            fits = ab.protocol_fits(ab.protocol_points(self.write(folder, "p.json", figures)))
        self.assertEqual(sorted(fits), ["Ring LL", "Ring Simple"])
        ll, err = fits["Ring LL"]
        self.assertAlmostEqual(ll.alpha / 5e-6, 1, places=6)
        self.assertAlmostEqual(ll.beta / 100e9, 1, places=6)
        self.assertLess(err, 1e-9)  # the 4 KiB point is not held against it

    def test_goal_per_protocol_and_network_terms(self):
        base = {"nccl_us_%dKiB" % (s >> 10): (10e-6 + s / 300e9) * 1e6 for s in SIZES}
        bent = {"ring_simple_us_%dKiB" % (s >> 10): (8e-6 + s / 330e9) * 1e6 * (1.3 if s == 1 << 20 else 1)
                for s in SIZES}
        net = {"nccl_us_%dKiB" % (s >> 10): (45e-6 + s / 2.5e9) * 1e6 for s in SIZES}
        with tempfile.TemporaryDirectory() as folder:
            args = [self.write(folder, "a.json", base), "--protocols", self.write(folder, "p.json", bent),
                    "--network", self.write(folder, "n.json", net)]
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(ab.main(args), 0)
        summary = json.loads(out.getvalue().splitlines()[-1][len("SUMMARY "):])
        [goal] = summary["goals"]
        self.assertIn("Ring Simple", goal["goal"])
        self.assertFalse(goal["met"])  # one point 30% off cannot be within 10% of any line
        self.assertAlmostEqual(summary["figures"]["net_alpha_us"], 45.0, places=3)
        self.assertAlmostEqual(summary["figures"]["net_beta_gbs"], 2.5, places=2)

    def test_ours_against_pytorchs_one_shot(self):
        ours = {"mine_graph_us_4KiB": 2.0, "mine_graph_us_1MiB": 9.0, "mine_graph_us_4MiB": 30.0,
                "nccl_us_4KiB": 9.0, "nccl_us_1GiB": 3300.0}
        torch = {"symm_one_shot_graph_us_4KiB": 3.0, "symm_one_shot_graph_us_1MiB": 8.0,
                 "symm_one_shot_graph_us_4MiB": 10.0}
        with tempfile.TemporaryDirectory() as folder:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                ab.main([self.write(folder, "a.json", ours), "--torch", self.write(folder, "t.json", torch)])
        summary = json.loads(out.getvalue().splitlines()[-1][len("SUMMARY "):])
        [goal] = summary["goals"]
        self.assertAlmostEqual(goal["value"], 8.0 / 9.0, places=3)  # 4 MiB is past the goal's sizes
        self.assertFalse(goal["met"])

    def test_a_failed_run_is_said_not_fitted(self):
        base = {"nccl_us_%dKiB" % (s >> 10): (10e-6 + s / 300e9) * 1e6 for s in SIZES}
        with tempfile.TemporaryDirectory() as folder:
            failed = Path(folder) / "failed.json"
            failed.write_text(json.dumps({"summaries": []}))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(ab.main([self.write(folder, "a.json", base), "--protocols", str(failed),
                                          "--network", str(failed), "--torch", str(failed)]), 0)
        self.assertIn("no times to fit per protocol", out.getvalue())
        self.assertIn("no network terms", out.getvalue())

    def test_missing_network_record_is_said(self):
        base = {"nccl_us_%dKiB" % (s >> 10): (10e-6 + s / 300e9) * 1e6 for s in SIZES}
        with tempfile.TemporaryDirectory() as folder:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(ab.main([self.write(folder, "a.json", base), "--network", "/nonexistent.json"]), 0)
        self.assertIn("No record of 08_nccl_network", out.getvalue())


class CommandLineTest(unittest.TestCase):
    def test_skips_without_a_record(self):
        self.assertEqual(ab.main(["/nonexistent/08_allreduce.json"]), 77)

    def test_table_and_summary_from_a_record(self):
        figures = {"nccl_us_%dKiB" % (s >> 10): (10e-6 + s / 300e9) * 1e6 for s in SIZES}
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "08_allreduce.json"
            path.write_text(json.dumps({"summaries": [{"figures": figures}]}))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(ab.main([str(path)]), 0)
        summary = json.loads(out.getvalue().splitlines()[-1][len("SUMMARY "):])
        self.assertEqual(summary["failed"], 0)
        self.assertAlmostEqual(summary["figures"]["alpha_us"], 10.0)
        self.assertEqual(summary["figures"]["beta_gbs"], 300)
        self.assertIn("| 1 GiB |", out.getvalue())


# Made-up kernels: alpha (s) and beta (bytes sent per GPU per s), on 2 GPUs and on 4. On 4, the
# LL's alpha grows by half, the one-shot's beta falls by a third, the copy-engine gather slows.
TWO = {"ll": (6e-6, 150e9), "one_shot": (7.5e-6, 300e9), "two_stage": (12e-6, 330e9), "ce_gather": (30e-6, 380e9)}
FOUR = {"ll": (9e-6, 150e9), "one_shot": (8e-6, 200e9), "two_stage": (13e-6, 330e9), "ce_gather": (60e-6, 250e9)}


def kernel_record(folder, name, gpus, params, table=True, off=None):
    """A made-up 08_allreduce record on `gpus` GPUs that measured exactly what `params` model, but
    `off` = (kernel, size, factor) times factor; with its output's table of every kernel if `table`."""
    def label(s):
        return "%dKiB" % (s >> 10) if s < 1 << 20 else "%dMiB" % (s >> 20) if s < 1 << 30 else "1GiB"

    fits = {k: ab.Fit(*v) for k, v in params.items()}
    figures = {"gpus": gpus}
    for k, (alpha, beta) in params.items():
        figures["fit_alpha_us_" + k], figures["fit_beta_gbs_" + k] = alpha * 1e6, beta / 1e9
    names = list(ab.KERNEL_NAMES.values())
    lines = ["### All-reduce of fp32 on %d GPUs" % gpus, "",
             "| Size | NCCL | " + " | ".join(names) + " | empty kernel | picked |",
             "|---" * (len(names) + 4) + "|"]
    for s in SIZES:
        times = {k: ab.kernel_time(k, fits[k], gpus, s) for k in params  # the gather runs from 16 MiB up
                 if ab.takes(k, s) and (k != "ce_gather" or s >= 16 << 20)}
        if off and off[1] == s:
            times[off[0]] *= off[2]
        picked = ab.pick(fits, gpus, s)
        figures["mine_us_" + label(s)] = times[picked] * 1e6
        figures["nccl_us_" + label(s)] = (10e-6 + s / 300e9) * 1e6
        cells = ["%.3g us" % (times[k] * 1e6) if k in times else "-" for k in ab.KERNEL_NAMES]
        lines.append("| %s | 1 ms | %s | 568 ns | %s |" % (label(s), " | ".join(cells), ab.KERNEL_NAMES[picked]))
    path = Path(folder) / (name + ".json")
    path.write_text(json.dumps({"summaries": [{"figures": figures}]}))
    if table:
        (Path(folder) / (name + ".output.txt")).write_text("\n".join(lines) + "\n")
    return str(path)


class KernelModelTest(unittest.TestCase):
    def test_bytes_sent_as_the_program_counts_them(self):
        s = 1 << 20
        self.assertEqual(ab.bytes_sent("one_shot", 2, s), ab.bytes_sent("two_stage", 2, s))  # no two-GPU cross
        self.assertEqual(ab.bytes_sent("ll", 4, s), 6 * s)
        self.assertEqual(ab.bytes_sent("one_shot", 4, s), 3 * s)
        self.assertEqual(ab.bytes_sent("two_stage", 4, s), 1.5 * s)
        self.assertEqual(ab.bytes_sent("ce_gather", 8, s), 1.75 * s)

    def test_largest_messages_are_the_headers(self):
        header = (Path(ab.__file__).resolve().parents[1] / "allreduce.cuh").read_text()
        for name, kernel in (("kOneShotMaxFloats", "one_shot"), ("kLLMaxFloats", "ll")):
            found = re.search(r"%s = \((\d+) << (\d+)\) / sizeof\(float\)" % name, header)
            self.assertIsNotNone(found, name)
            self.assertEqual(ab.KERNEL_MAX_BYTES[kernel], int(found.group(1)) << int(found.group(2)))

    def test_pick_follows_the_gpu_count_and_the_largest_message(self):
        fits = {k: ab.Fit(*v) for k, v in TWO.items()}
        self.assertEqual(ab.pick(fits, 2, 4 << 10), "ll")
        self.assertEqual(ab.pick(fits, 2, 4 << 20), "one_shot")  # as many bytes as two-stage, less alpha
        self.assertEqual(ab.pick(fits, 4, 4 << 20), "two_stage")  # twice the two-stage's bytes on 4
        self.assertEqual(ab.pick(fits, 2, 8 << 20), "two_stage")  # past the one-shot's largest
        self.assertEqual(ab.pick(fits, 2, 1 << 30), "ce_gather")

    def test_the_output_table_gives_every_kernel(self):
        with tempfile.TemporaryDirectory() as folder:
            times = ab.eager_times(kernel_record(folder, "a", 4, FOUR))
        self.assertEqual(sorted(times), sorted(ab.KERNEL_NAMES))
        self.assertEqual(sorted(times["ll"]), [s for s in SIZES if s <= 1 << 20])
        self.assertAlmostEqual(times["two_stage"][1 << 30] / ab.kernel_time("two_stage", ab.Fit(*FOUR["two_stage"]),
                                                                            4, 1 << 30), 1, places=2)
        self.assertEqual(ab.seconds_of("568 ns"), 568e-9)
        self.assertIsNone(ab.seconds_of("-"))

    def test_without_the_output_the_picked_one_is_measured(self):
        with tempfile.TemporaryDirectory() as folder:
            path = kernel_record(folder, "a", 4, FOUR, table=False)
            fits = ab.kernel_fits(ab.record_figures(path))
            times = ab.measured_kernel_times(path, fits, 4)
        self.assertEqual(sum(len(v) for v in times.values()), len(SIZES))
        self.assertIn(4 << 10, times["one_shot"])  # on 4 GPUs the LL's alpha loses to the one-shot's

    def test_same_fits_predict_exactly(self):
        fits = {k: ab.Fit(*v) for k, v in FOUR.items()}
        with tempfile.TemporaryDirectory() as folder:
            measured = ab.eager_times(kernel_record(folder, "a", 4, FOUR))
        rows = ab.check_prediction(fits, 2, fits, 4, measured)
        self.assertEqual(len(rows), sum(len(v) for v in measured.values()))
        for _, _, predicted, t, reason in rows:
            self.assertLess(abs(predicted / t - 1), 0.01)
            self.assertEqual(reason, "")

    def test_each_miss_gets_its_reason(self):
        two = {k: ab.Fit(*v) for k, v in TWO.items()}
        four = {k: ab.Fit(*v) for k, v in FOUR.items()}
        with tempfile.TemporaryDirectory() as folder:
            measured = ab.eager_times(kernel_record(folder, "a", 4, FOUR, off=("two_stage", 64 << 10, 1.5)))
        reasons = {(s, k): r for s, k, _, _, r in ab.check_prediction(two, 2, four, 4, measured)}
        self.assertIn("more peers to flag and poll", reasons[(4 << 10, "ll")])     # alpha 6 -> 9 us
        self.assertIn("18 links shared by 3 peers", reasons[(4 << 20, "one_shot")])  # beta 300 -> 200 GB/s
        self.assertEqual(reasons[(16 << 10, "one_shot")], "")                       # 7.5 against 8 us: close
        self.assertIn("copy engines", reasons[(1 << 30, "ce_gather")])
        self.assertIn("misses here too", reasons[(64 << 10, "two_stage")])
        self.assertEqual(reasons[(1 << 30, "two_stage")], "")


class KernelSectionTest(unittest.TestCase):
    def run_main(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(ab.main(list(args)), 0)
        return out.getvalue(), json.loads(out.getvalue().splitlines()[-1][len("SUMMARY "):])["figures"]

    def test_two_gpus_predict_four_and_four_predict_eight(self):
        with tempfile.TemporaryDirectory() as folder:
            text, figures = self.run_main(kernel_record(folder, "08_allreduce", 4, FOUR),
                                          "--two-gpus", kernel_record(folder, "08_allreduce_2gpus", 2, TWO))
        self.assertIn("### Our kernels: the fit on 2 GPUs, predicting 4", text)
        self.assertIn("Fit to NCCL's all-reduce on 2 GPUs", text)
        self.assertIn("| measured, 4 GPUs | off the band |", text)
        self.assertEqual(figures["nccl_fit_gpus"], 2)
        self.assertGreater(figures["from2_over20"], 0)
        self.assertLess(figures["from2_over20"], figures["from2_points"])
        self.assertLess(figures["from2_same_pick"], figures["from2_sizes"])  # 4 MiB: one-shot on 2, two-stage on 4
        self.assertIn("### Eight GPUs, predicted from the 4-GPU fits", text)
        self.assertIn("https://github.com/NVIDIA/nccl-tests/issues/212", text)
        fits = {k: ab.Fit(*v) for k, v in FOUR.items()}
        best = min(ab.kernel_time(k, f, 8, 1 << 30) for k, f in fits.items())
        self.assertAlmostEqual(figures["gpus8_ours_1GiB_ms"], round(best * 1e3, 2))

    def test_the_two_gpu_record_beside_it_is_found(self):
        with tempfile.TemporaryDirectory() as folder:
            record = kernel_record(folder, "08_allreduce", 4, FOUR)
            kernel_record(folder, "08_allreduce_2gpus", 2, TWO)
            text, figures = self.run_main(record)
        self.assertIn("### Our kernels: the fit on 2 GPUs, predicting 4", text)
        self.assertIn("from2_worst_pct", figures)

    def test_a_failed_two_gpu_run_is_left_out(self):
        with tempfile.TemporaryDirectory() as folder:
            record = kernel_record(folder, "08_allreduce", 4, FOUR)
            failed = Path(folder) / "08_allreduce_2gpus.json"
            failed.write_text(json.dumps({"summaries": []}))
            text, figures = self.run_main(record)
        self.assertIn("Fit to NCCL's all-reduce on 4 GPUs", text)
        self.assertIn("holds no fits on fewer GPUs than 4", text)
        self.assertNotIn("from2_worst_pct", figures)

    def test_without_the_two_gpu_record_it_says_so(self):
        with tempfile.TemporaryDirectory() as folder:
            text, figures = self.run_main(kernel_record(folder, "08_allreduce", 4, FOUR))
        self.assertIn("No record of 08_allreduce on two GPUs", text)
        self.assertIn("Fit to NCCL's all-reduce on 4 GPUs", text)
        self.assertNotIn("from2_worst_pct", figures)
        self.assertIn("gpus8_ours_1GiB_ms", figures)

    def test_a_fit_on_four_predicts_four_as_fitted(self):
        f = ab.Fit(alpha=20e-6, beta=200e9)
        for s in SIZES:
            self.assertAlmostEqual(ab.one_host(4, s, f, fitted_on=4) / f.time(s), 1, places=12)
            self.assertAlmostEqual(ab.one_host(4, s, f, False, 4) / f.time(s), 1, places=12)


if __name__ == "__main__":
    unittest.main()
