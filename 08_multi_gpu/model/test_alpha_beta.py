"""CPU tests of the alpha-beta model (python3 -m unittest discover -s 08_multi_gpu/model)."""
import contextlib
import io
import json
import random
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


if __name__ == "__main__":
    unittest.main()
