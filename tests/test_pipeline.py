#!/usr/bin/env python3
"""Tests of the results pipeline (scripts/results.py) and of the ncu CSV reader (scripts/ncu_csv.py).
Run: python3 tests/test_pipeline.py (CTest: pipeline.host)."""
import json
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "scripts"))
import ncu_csv  # noqa: E402
import results  # noqa: E402

# What `ncu --csv --page raw --print-units base --metrics ...` prints, among the program's lines.
NCU_OUTPUT = '''==PROF== Connected to process 13769 (/build/bin/07_sgemm)
==PROF== Profiling "sgemm_naive": 0%....50%....100% - 10 passes
Max error: 0  (1 naive, whole numbers in -2..2, beta = 0, C poisoned)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum"
"","","","","","","","","","","","%","nsecond"
"0","13769","07_sgemm","127.0.0.1","void sgemm_naive(int, int, int, float, const float *, const float *, float, float *)","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","0.92","275,830,112"
"1","13769","07_sgemm","127.0.0.1","void sgemm_warptiling<WarptileConfig, 0>(int, int, int, float, const float *, const float *, float, float *)","1","7","(128, 1, 1)","(32, 32, 1)","0","9.0","3.33","3,560,001"
SUMMARY {"program":"07_sgemm","checks":28,"failed":0,"exact":14,"goals":[],"figures":{}}
==PROF== Disconnected from process 13769
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum"
"","","","","","","","","","","","%","nsecond"
"0","13801","07_elementwise","127.0.0.1","add_float4(const float *, const float *, float *, int)","1","7","(256, 1, 1)","(792, 1, 1)","0","9.0","87.51","1,090,000"
'''

PROGRAM = r'''printf '%s\n' 'Device 0: a GPU' '' '### Steps' '' '| Step | GB/s | % of copy |' \
  '|------|------|-----------|' '| 1 one | 2,770 | 92.1% |' '| 2 two | 2761 | 91.8% |' '' \
  'SUMMARY {"program":"t","checks":2,"failed":0,"exact":1,"goals":[{"goal":"g","value":92.1,"at_least":90,"unit":"%","met":true}],"figures":{"best":92.1}}'
'''


class NcuCsv(unittest.TestCase):
    def test_one_dict_per_launch_across_runs(self):
        launches = ncu_csv.read(NCU_OUTPUT)
        self.assertEqual([launch["Process Name"] for launch in launches], ["07_sgemm", "07_sgemm", "07_elementwise"])
        self.assertEqual(launches[1]["Grid Size"], "(32, 32, 1)")
        self.assertTrue(launches[1]["Kernel Name"].startswith("void sgemm_warptiling<WarptileConfig, 0>("))

    def test_values_without_thousand_separators(self):
        first = ncu_csv.read(NCU_OUTPUT)[0]
        self.assertEqual(ncu_csv.value(first, "gpu__time_duration.sum"), 275830112.0)
        self.assertEqual(ncu_csv.value(first, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"), 0.92)

    def test_missing_metric_and_non_number_are_errors(self):
        first = ncu_csv.read(NCU_OUTPUT)[0]
        with self.assertRaises(KeyError):
            ncu_csv.value(first, "sm__throughput.avg.pct_of_peak_sustained_elapsed")
        with self.assertRaises(ValueError):
            ncu_csv.value({"m": "n/a"}, "m")

    def test_no_csv_no_launches(self):
        self.assertEqual(ncu_csv.read("==ERROR== ERR_NVGPUCTRPERM\n"), [])


class Results(unittest.TestCase):
    def setUp(self):
        os.environ.pop("TUTORIAL_RUN_INFO", None)  # runs by hand, not a GPU check's
        self.dir = tempfile.TemporaryDirectory()
        self.results = pathlib.Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def record(self, name, script):
        return results.record_command(name, ["bash", "-c", script], self.results)

    def test_a_run_is_kept_as_data_and_rendered(self):
        self.assertEqual(self.record("t", PROGRAM), 0)
        data = json.loads((self.results / "data" / "t.json").read_text())
        self.assertEqual(data["exit_status"], 0)
        self.assertEqual(data["summaries"][0]["figures"], {"best": 92.1})
        found = results.load("t", self.results)
        self.assertIn("| 1 one | 2,770 | 92.1% |", found["output"])
        page = (self.results / "t.md").read_text()
        self.assertTrue(page.startswith("# t\n\nRun by hand on "))
        self.assertIn("```text\nDevice 0: a GPU\n", page)
        self.assertEqual(results.render(self.results, check=True), [])

    def test_exit_status_is_the_verdict(self):
        self.assertEqual(self.record("fails", "echo broken; exit 3"), 3)
        self.assertEqual(results.load("fails", self.results)["exit_status"], 3)

    def test_a_skip_keeps_the_last_record_or_says_why(self):
        # With no earlier record, the skip's output is the data: it says why nothing was measured.
        self.assertEqual(self.record("t", "echo 'nsys: not supported here'; exit 77"), 77)
        skipped = results.load("t", self.results)
        self.assertEqual(skipped["exit_status"], 77)
        self.assertIn("not supported here", skipped["output"])
        # With one, a later skip (a machine without a GPU) leaves the measurement as it was.
        self.assertEqual(self.record("t", PROGRAM), 0)
        self.assertEqual(self.record("t", "echo 'No usable CUDA GPU'; exit 77"), 77)
        self.assertEqual(results.load("t", self.results)["exit_status"], 0)

    def test_output_without_summary(self):
        self.record("plain", "echo 'name, compute_cap'")
        with self.assertRaises(LookupError):
            results.summary(results.load("plain", self.results))

    def test_tables_of_a_program(self):
        self.record("t", PROGRAM)
        (table,) = results.tables(results.load("t", self.results)["output"])
        self.assertEqual(table["title"], "Steps")
        self.assertEqual(table["header"], ["Step", "GB/s", "% of copy"])
        self.assertEqual([row[0] for row in table["rows"]], ["1 one", "2 two"])
        self.assertEqual([results.number(row[1]) for row in table["rows"]], [2770.0, 2761.0])

    def test_a_page_edited_by_hand_is_out_of_date(self):
        self.record("t", PROGRAM)
        (self.results / "t.md").write_text("edited\n")
        self.assertEqual(results.render(self.results, check=True), [self.results / "t.md"])
        results.render(self.results)
        self.assertEqual(results.render(self.results, check=True), [])

    def test_the_check_record_flags_a_skip(self):
        logs = self.results / "logs"
        logs.mkdir()
        (logs / "run.json").write_text(json.dumps({
            "gpu": "G", "compute_cap": "9.0", "driver": "1", "driver_cuda": "13.0", "nvcc": "13.0 (V13.0.88)",
            "cmake": "cmake version 4", "date": "2026-01-01 00:00 UTC", "commit": "abc"}))
        (logs / "tests.xml").write_text(
            '<testsuite><testcase name="a.verify" status="run" time="1"/>'
            '<testcase name="b.verify" status="notrun" time="0"><skipped/></testcase></testsuite>')
        (logs / "sanitize.xml").write_text(
            '<testsuite><testcase name="a.sanitize.memcheck" status="run" time="2">'
            '<system-out>========= ERROR SUMMARY: 0 errors</system-out></testcase></testsuite>')
        record = results.write_record(logs, self.results)
        self.assertEqual(record["steps"]["sanitize"][0]["summary"], "ERROR SUMMARY: 0 errors")
        self.assertEqual(results.problems(record), ["tests: b.verify skipped"])
        results.render(self.results)
        page = (self.results / "README.md").read_text()
        self.assertIn("| ctest, tests | 1 of 2 passed |", page)
        self.assertIn("- tests: b.verify skipped", page)

    def test_each_headline_names_its_run(self):
        # An earlier run of "kept" (another build), then a check that skips it and measures "fresh".
        earlier = {"gpu": "G", "driver": "1", "nvcc": "11.8 (the build's)", "date": "2026-01-01 00:00 UTC",
                   "commit": "old"}
        check = dict(earlier, nvcc="13.0 (V13.0.88)", date="2026-01-02 00:00 UTC", commit="new",
                     compute_cap="9.0", driver_cuda="13.0", cmake="cmake version 4")
        for name, run in (("kept", earlier), ("fresh", check)):
            results.save(self.results, name, "c", 0, 1, 'SUMMARY {"program":"t","checks":2,"failed":0,"exact":1}',
                         run)
        logs = self.results / "logs"
        logs.mkdir()
        (logs / "run.json").write_text(json.dumps(check))
        (logs / "benchmark.xml").write_text(
            '<testsuite><testcase name="fresh.benchmark" status="run" time="1"/>'
            '<testcase name="kept.benchmark" status="notrun" time="0"><skipped/></testcase>'
            '<testcase name="never.benchmark" status="notrun" time="0"><skipped/></testcase></testsuite>')
        record = results.write_record(logs, self.results)
        self.assertIn("| skipped | 2 checks, 0 failed (in the run of 2026-01-01 00:00 UTC, commit old) |",
                      results.render_record(record, self.results))
        lines = results.headline_lines(record, self.results)
        self.assertEqual(lines[0], "run A, the benchmarks: 1 of 3 passed; skipped: kept.benchmark, never.benchmark")
        lines = lines[2:]  # the benchmarks' headlines
        self.assertEqual(lines[0], "fresh: 2 checks, all passed; 1 exact, Max error: 0; "
                                   "1 within a tolerance or a condition (run A)")
        self.assertTrue(lines[1].endswith("all passed; 1 exact, Max error: 0; 1 within a tolerance or a condition "
                                          "(run B; skipped in run A)"))
        self.assertEqual(lines[2], "never: skipped in run A, and no run of it with a SUMMARY line is recorded")
        self.assertIn("run A: this check (scripts/gpu-check.sh): G, driver 1, CUDA 13.0 (V13.0.88); "
                      "2026-01-02 00:00 UTC; commit new.", lines)
        self.assertIn("run B: an earlier run, kept because the check skipped the benchmark: G, driver 1, "
                      "CUDA 11.8 (the build's); 2026-01-01 00:00 UTC; commit old.", lines)

    def test_headline_names_only_the_kinds_of_check_that_occur(self):
        """"0 of them exact ... all passed" read as a failure: a headline names the kinds that ran."""
        def first(checks, failed, exact, programs=1):
            return results.headline("p", [{"checks": checks, "failed": failed, "exact": exact}] * programs)[0]
        self.assertEqual(first(1, 0, 1), "p: 1 check, passed; exact, Max error: 0")
        self.assertEqual(first(4, 0, 0), "p: 4 checks, all passed; each within a tolerance or a condition")
        self.assertEqual(first(12, 0, 12), "p: 12 checks, all passed; each exact, Max error: 0")
        self.assertEqual(first(2, 1, 1, programs=2), "p: 4 checks (2 programs), 2 FAILED; 2 exact, Max error: 0; "
                                                     "2 within a tolerance or a condition")


if __name__ == "__main__":
    unittest.main()
