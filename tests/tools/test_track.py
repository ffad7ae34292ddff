"""tools/track's command line: record, check, report and export, as CI scripts call them, on
synthetic histories (xfertools/verdict/synthetic.py, written as result files) and real result files;
and bad input, each refused with one line and exit status 2.

    python3 -m unittest discover -s tests/tools -p 'test_track.py'
"""

import glob
import json
import os
import statistics
import tempfile
import unittest

import tracklib
from tracklib import RESULTS, ROOT, track
from xfertools.verdict import synthetic

FIXTURES = os.path.join(ROOT, "tests", "fixtures")
REPETITIONS = os.path.join(FIXTURES, "track", "mpi_host_repetitions.json")
DEFAULT_A = os.path.join(RESULTS, "2026-11-23-h200-precision", "default-a.json")
DEFAULT_B = os.path.join(RESULTS, "2026-11-23-h200-precision", "default-b.json")
OLD_WITH_NAN = os.path.join(FIXTURES, "compare", "ci_hostile_new.json")  # a bare nan inside
PLAIN_GOOGLE_BENCHMARK = os.path.join(FIXTURES, "compare", "nonfinite_tokens.json")
FAMILIES = 4


def small_history(runs=12, steps=(), seed=3, failed=0.0):
    """A quick history: 4 families of 8-10 sizes."""
    return synthetic.history(
        runs=runs, families=FAMILIES, rows=(8, 10), steps=steps, seed=seed, failed=failed
    )


def family(index):
    return tracklib.FAMILIES[index]


class TrackTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.history = os.path.join(self.dir, "history")

    def runs(self, made, count=None, folder="runs", **machine):
        return tracklib.write_history(os.path.join(self.dir, folder), made, count, **machine)

    def record(self, *paths, expect=0):
        done = track("record", "--history", self.history, *paths)
        self.assertEqual(done.returncode, expect, done.stderr)
        return done

    def run_files(self):
        """The run files of the history, by identity folder name."""
        found = {}
        for path in sorted(glob.glob(os.path.join(self.history, "*", "*.json"))):
            if os.path.basename(path) != "identity.json":
                found.setdefault(os.path.basename(os.path.dirname(path)), []).append(path)
        return found

    def assert_refused(self, done, *words):
        """Exit 2 with one line on stderr that says each of words, and no traceback."""
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        for word in words:
            self.assertIn(word, lines[0])
        return lines[0]

    def write(self, name, document):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f)
        return path


class Record(TrackTest):
    def test_runs_are_filed_under_their_identity_and_a_second_record_writes_nothing(self):
        paths = self.runs(small_history(runs=3))
        done = self.record(*paths)
        self.assertEqual(done.stdout.count("recorded "), 3)
        (key, files), *others = self.run_files().items()
        self.assertEqual(others, [])
        self.assertTrue(key.startswith("nvidia-h200-x1-2-ranks-node1-"), key)
        names = [os.path.basename(p) for p in files]
        self.assertEqual(names[0], "20261101T020000Z-0000abc00000.json")  # time, then commit
        with open(os.path.join(self.history, key, "identity.json"), encoding="utf-8") as f:
            identity = tracklib.strict_json(f.read())["identity"]
        self.assertEqual(identity["gpus"], "NVIDIA H200 x1")
        self.assertEqual(identity["mpi_cuda_aware"], "yes")
        self.assertEqual(identity["hosts"], "node1")
        self.assertEqual(identity["paths"], "host_staging,mpi_cuda_aware,mpi_host,mpi_staged")
        with open(files[0], encoding="utf-8") as f:
            run = tracklib.strict_json(f.read())
        self.assertEqual(
            (run["commit"], run["time"]), ("0000abc00000", "2026-11-01T02:00:00+00:00")
        )

        again = self.record(paths[1])
        self.assertIn("already recorded", again.stdout)
        self.assertEqual(len(self.run_files()[key]), 3)

    def test_another_gpu_another_mpi_or_another_host_is_another_identity(self):
        made = small_history(runs=1)
        self.record(*self.runs(made, folder="a"))
        self.record(*self.runs(made, folder="b", gpu="NVIDIA H100 80GB HBM3"))
        self.record(*self.runs(made, folder="c", cuda_aware="no"))
        self.record(*self.runs(made, folder="d", host="node2"))
        self.assertEqual(len(self.run_files()), 4)

    def test_any_host_files_runs_of_one_make_on_different_hosts_together(self):
        made = small_history(runs=2)
        first = self.runs(made, count=1, folder="a", host="node1")
        second = tracklib.write_history(os.path.join(self.dir, "b"), made, host="node7")[1:]
        done = track("record", "--history", self.history, "--any-host", *first, *second)
        self.assertEqual(done.returncode, 0, done.stderr)
        ((key, files),) = self.run_files().items()
        self.assertIn("any-host", key)
        self.assertEqual(len(files), 2)

    def test_real_result_files_of_one_machine_share_an_identity(self):
        self.record(DEFAULT_A, DEFAULT_B)
        ((key, files),) = self.run_files().items()
        self.assertTrue(key.startswith("nvidia-h200-x1-2-ranks-vm-"), key)
        for path in files:
            with open(path, encoding="utf-8") as f:
                run = tracklib.strict_json(f.read())
            self.assertEqual(len(run["rows"]), 308)
            self.assertEqual(run["commit"], "fed485a0ff35")

    def test_an_older_file_with_a_bare_nan_is_read_and_its_record_is_strict_json(self):
        self.record(OLD_WITH_NAN)
        ((_, files),) = self.run_files().items()
        with open(files[0], encoding="utf-8") as f:
            rows = tracklib.strict_json(f.read())["rows"]
        self.assertTrue(rows)

    def test_a_failed_row_is_recorded_as_failed_with_its_reason(self):
        made = small_history(runs=1)
        row = sorted(made.runs[0])[0]
        made.runs[0][row] = synthetic.FAILED
        self.record(*self.runs(made))
        ((_, files),) = self.run_files().items()
        with open(files[0], encoding="utf-8") as f:
            rows = json.load(f)["rows"]
        self.assertEqual(rows[tracklib.real_name(row)], {"failed": "validation failed at rank 1"})


class Check(TrackTest):
    def check(self, path, *options, expect=None):
        done = track("check", "--history", self.history, path, *options)
        if expect is not None:
            self.assertEqual(done.returncode, expect, done.stdout + done.stderr)
        return done

    def test_a_noise_only_run_passes_and_every_family_is_reported(self):
        paths = self.runs(small_history())
        self.record(*paths[:-1])
        done = self.check(paths[-1], expect=0)
        first = done.stdout.splitlines()[0]
        self.assertTrue(first.startswith("no regression"), first)
        self.assertIn("against 11 earlier runs", first)
        for index in range(FAMILIES):
            self.assertIn(family(index), done.stdout)
        self.assertIn("noise learned from 11 earlier runs", done.stdout)

    def test_a_15_percent_slower_family_fails_with_its_shift_noise_and_detectable_shift(self):
        made = small_history(steps=[synthetic.Step(synthetic.family_names(FAMILIES)[1], 11, 1.15)])
        paths = self.runs(made)
        self.record(*paths[:-1])
        done = self.check(paths[-1], expect=1)
        self.assertTrue(done.stdout.startswith("REGRESSION: 1 family slower"), done.stdout)
        line = next(x for x in done.stdout.splitlines() if x.endswith(family(1)))
        verdict, shift, noise, detectable = line.split()[:4]
        self.assertEqual(verdict, "regression")
        self.assertAlmostEqual(float(shift.rstrip("%")), 15, delta=5)
        self.assertLess(float(detectable.rstrip("%")), 15)
        self.assertGreater(float(detectable.rstrip("%")), float(noise.rstrip("%")))
        others = [x for x in done.stdout.splitlines() if x.startswith("regression")]
        self.assertTrue(all(family(1) in x for x in others), others)

    def test_a_run_is_never_judged_against_itself_recorded_or_not(self):
        paths = self.runs(small_history())
        self.record(*paths[:-1])
        before = json.loads(self.check(paths[-1], "--format", "json").stdout)
        self.record(paths[-1])
        after = json.loads(self.check(paths[-1], "--format", "json").stdout)
        self.assertEqual(len(before["earlier_runs"]), 11)
        self.assertEqual(after["earlier_runs"], before["earlier_runs"])
        self.assertEqual(after["judgement"], before["judgement"])
        # An earlier run checked later is judged against the runs before it only.
        middle = json.loads(self.check(paths[5], "--format", "json").stdout)
        self.assertEqual(len(middle["earlier_runs"]), 5)

    def test_window_limits_the_earlier_runs(self):
        paths = self.runs(small_history())
        self.record(*paths)
        done = self.check(paths[-1], "--window", "5")
        self.assertIn("against 5 earlier runs", done.stdout.splitlines()[0])

    def test_with_two_earlier_runs_it_says_so_and_judges_by_the_stated_ci95(self):
        paths = self.runs(small_history(runs=3))
        self.record(*paths[:2])
        done = self.check(paths[2])
        self.assertIn(done.returncode, (0, 1), done.stderr)
        self.assertIn("only 2 earlier runs (3 needed to learn noise)", done.stdout)
        self.assertIn("stated ci95", done.stdout)

    def test_a_row_broken_since_the_baseline_fails_the_run_and_a_missing_one_is_listed(self):
        made = small_history()
        broken, gone = sorted(made.runs[-1])[:2]
        made.runs[-1][broken] = synthetic.FAILED
        del made.runs[-1][gone]
        paths = self.runs(made)
        self.record(*paths[:-1])
        done = self.check(paths[-1], expect=1)
        self.assertIn("1 row failed that ran in the baseline", done.stdout.splitlines()[0])
        self.assertIn(f"- failed: {tracklib.real_name(broken)} (failed; it ran in", done.stdout)
        self.assertIn(f"- missing: {tracklib.real_name(gone)} (absent", done.stdout)

    def test_a_run_whose_every_row_failed_is_a_regression_not_bad_input(self):
        made = small_history()
        made.runs[-1].update({row: synthetic.FAILED for row in made.runs[-1]})
        paths = self.runs(made)
        self.record(*paths[:-1])
        done = self.check(paths[-1], expect=1)
        rows = len(made.runs[-1])
        self.assertIn(f"{rows} rows failed that ran in the baseline", done.stdout.splitlines()[0])
        refused = track("export", "--format", "bencher", paths[-1])
        self.assert_refused(refused, "every row failed")

    def test_json_is_strict_and_markdown_has_the_verdict_first(self):
        paths = self.runs(small_history())
        self.record(*paths[:-1])
        as_json = self.check(paths[-1], "--format", "json")
        document = tracklib.strict_json(as_json.stdout)
        self.assertEqual(document["schema"], "xferbench-track-check/1")
        self.assertEqual(document["exit_status"], as_json.returncode)
        self.assertEqual(len(document["judgement"]["families"]), FAMILIES)
        markdown = self.check(paths[-1], "--format", "markdown").stdout.splitlines()
        self.assertEqual(markdown[0], "### xferbench track check")
        self.assertTrue(markdown[2].startswith("**no regression"), markdown[2])
        self.assertIn("| verdict | shift | noise | detectable | rows | family |", markdown)


class Report(TrackTest):
    def report(self, *options):
        page = os.path.join(self.dir, "page.html")
        done = track("report", "--history", self.history, "-o", page, *options)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(page, encoding="utf-8") as f:
            return f.read()

    def test_the_page_is_one_file_with_the_verdict_first_and_every_family_charted(self):
        made = small_history(runs=16, steps=[synthetic.Step(synthetic.family_names(4)[2], 8, 1.2)])
        self.record(*self.runs(made))
        page = self.report()
        self.assertNotIn("<script", page)
        self.assertNotIn("src=", page)
        self.assertNotIn("@import", page)
        self.assertEqual(page.count("http"), page.count('xmlns="http://www.w3.org/2000/svg"'))
        verdict = page.index('class="verdict')
        self.assertLess(verdict, page.index("<svg"))
        self.assertIn("no regression", page[verdict : verdict + 400])
        for index in range(FAMILIES):
            self.assertEqual(page.count(f"<h3>{family(index)}"), 1, family(index))
        self.assertEqual(page.count('aria-label="'), FAMILIES)  # one chart per family
        # The planted step is marked where it began, with its commit.
        self.assertIn("change +", page)
        self.assertIn("at 0008abc00008", page)
        self.assertIn("flagged beyond", page)

    def test_one_section_per_identity_and_identity_picks_one(self):
        made = small_history(runs=4)
        self.record(*self.runs(made, folder="a"))
        self.record(*self.runs(made, folder="b", gpu="NVIDIA H100 80GB HBM3"))
        keys = sorted(self.run_files())
        page = self.report()
        for key in keys:
            self.assertIn(f'<section id="{key}">', page)
        only = self.report("--identity", keys[0][:12])  # a prefix picks an identity
        self.assertIn(f'<section id="{keys[0]}">', only)
        self.assertNotIn(f'<section id="{keys[1]}">', only)

    def test_one_run_is_shown_and_says_there_is_nothing_to_judge_it_by(self):
        self.record(*self.runs(small_history(runs=1)))
        self.assertIn("not judged: one run recorded", self.report())


class Export(TrackTest):
    def export(self, *args, expect=0):
        done = track("export", *args)
        self.assertEqual(done.returncode, expect, done.stderr)
        return done

    def test_bencher_holds_latency_in_ns_and_bandwidth_with_bounds_from_the_stated_ci95(self):
        document = tracklib.strict_json(self.export("--format", "bencher", DEFAULT_A).stdout)
        with open(DEFAULT_A, encoding="utf-8") as f:
            rows = {
                r["run_name"].replace("/manual_time", ""): r for r in json.load(f)["benchmarks"]
            }
        self.assertEqual(len(document), len(rows))  # rows named as now (mpi_staged/.../staging:)
        name = "mpi_cuda_aware/mode:pingpong/bytes:1048576"
        latency, bandwidth = document[name]["latency"], document[name]["bandwidth"]
        c = rows[name]["ci95_pct"] / 100
        self.assertAlmostEqual(latency["value"], rows[name]["latency_us"] * 1000)
        self.assertAlmostEqual(latency["upper_value"], latency["value"] * (1 + c))
        self.assertAlmostEqual(latency["lower_value"], latency["value"] * (1 - c))
        self.assertAlmostEqual(bandwidth["value"], rows[name]["GB/s"])
        self.assertLess(bandwidth["lower_value"], bandwidth["value"])
        self.assertGreater(bandwidth["upper_value"], bandwidth["value"])

    def test_github_writes_one_metric_per_file_from_the_mean_of_the_repetitions(self):
        out = os.path.join(self.dir, "latency.json")
        self.export("--format", "github", "--metric", "latency", REPETITIONS, "-o", out)
        with open(out, encoding="utf-8") as f:
            entries = tracklib.strict_json(f.read())
        with open(REPETITIONS, encoding="utf-8") as f:
            rows = [r for r in json.load(f)["benchmarks"] if r["run_type"] == "iteration"]
        name = "mpi_host/mode:pingpong/bytes:1024"
        times = [r["latency_us"] for r in rows if r["run_name"].startswith(name + "/")]
        self.assertEqual(len(times), 3)
        (entry,) = [e for e in entries if e["name"] == name]
        self.assertEqual(entry["unit"], "us")
        self.assertAlmostEqual(entry["value"], statistics.fmean(times))
        self.assertTrue(entry["range"].startswith("±") and entry["range"].endswith("%"))
        self.assertIn("3 repetitions", entry["extra"])
        self.assertEqual(len(entries), 4)
        bandwidth = self.export("--format", "github", "--metric", "bandwidth", REPETITIONS)
        self.assertEqual({e["unit"] for e in json.loads(bandwidth.stdout)}, {"GB/s"})

    def test_failed_rows_are_left_out_and_named_on_stderr(self):
        made = small_history(runs=1)
        row = sorted(made.runs[0])[0]
        made.runs[0][row] = synthetic.FAILED
        (path,) = self.runs(made)
        done = self.export("--format", "github", path)
        names = [e["name"] for e in json.loads(done.stdout)]
        self.assertNotIn(tracklib.real_name(row), names)
        self.assertEqual(len(names), len(made.runs[0]) - 1)
        self.assertIn(f"left out 1 failed row: {tracklib.real_name(row)}", done.stderr)


class BadInput(TrackTest):
    def incomplete_run(self):
        (path,) = self.runs(small_history(runs=1))
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        document["context"]["xferbench"]["incomplete"] = {"reason": "rank 1 hung", "rows": 5}
        return self.write("incomplete.json", document)

    def test_each_command_refuses_what_is_not_a_complete_xferbench_run(self):
        not_json = os.path.join(self.dir, "not.json")
        with open(not_json, "w", encoding="utf-8") as f:
            f.write("{ nope")
        cases = [
            (os.path.join(self.dir, "missing.json"), "no such file"),
            (self.dir, "not a regular file (a directory)"),
            (not_json, "not JSON (line 1"),
            (self.write("list.json", [1, 2]), "not a benchmark result"),
            (PLAIN_GOOGLE_BENCHMARK, "not an xferbench result"),
            (self.incomplete_run(), "an incomplete run"),
        ]
        os.makedirs(self.history)
        for path, words in cases:
            for command in (
                ["record", "--history", self.history, path],
                ["check", "--history", self.history, path],
                ["export", "--format", "bencher", path],
            ):
                with self.subTest(command=command[0], words=words):
                    self.assert_refused(track(*command), path, words)
        self.assertEqual(os.listdir(self.history), [])

    def test_one_bad_file_records_nothing(self):
        (good,) = self.runs(small_history(runs=1))
        done = track("record", "--history", self.history, good, self.incomplete_run())
        self.assert_refused(done, "incomplete")
        self.assertEqual(self.run_files(), {})

    def test_a_run_of_another_machine_names_what_differs(self):
        made = small_history(runs=4)
        self.record(*self.runs(made, count=3))
        (other,) = self.runs(made, count=1, folder="other", cuda_aware="no")
        line = self.assert_refused(track("check", "--history", self.history, other), other)
        self.assertIn("no run of its machine identity", line)
        self.assertIn("mpi_cuda_aware: 'yes' vs 'no'", line)

    def test_no_history_to_judge_by(self):
        paths = self.runs(small_history(runs=2))
        cases = [
            ("check", paths[0], "no such directory"),
            ("report", None, "no such directory"),
        ]
        for command, path, words in cases:
            args = [path] if path else ["-o", os.path.join(self.dir, "p.html")]
            self.assert_refused(track(command, "--history", self.history, *args), words)
        os.makedirs(self.history)
        self.assert_refused(track("check", "--history", self.history, paths[0]), "no runs recorded")
        self.assert_refused(
            track("report", "--history", self.history, "-o", os.path.join(self.dir, "p.html")),
            "no runs recorded",
        )
        self.record(paths[1])
        line = self.assert_refused(track("check", "--history", self.history, paths[0]))
        self.assertIn("no earlier run of", line)

    def test_bad_options(self):
        (path,) = self.runs(small_history(runs=1))
        self.record(path)
        cases = [
            (["check", "--history", self.history, path, "--window", "0"], "--window"),
            (["check", "--history", self.history, path, "--format", "html"], "--format"),
            (["report", "--history", self.history, "-o", self.dir], "a directory"),
            (["report", "--history", self.history, "-o", "x.html", "--identity", "h100"], "h100"),
            (["export", "--format", "bencher", "--metric", "latency", path], "--metric"),
            (["export", "--format", "csv", path], "--format"),
            (["export", "--format", "github", path, "-o", "/no/such/dir/x.json"], "cannot write"),
        ]
        for args, words in cases:
            with self.subTest(args=args):
                done = track(*args, cwd=self.dir)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertIn(words, done.stderr)
                self.assertNotIn("Traceback", done.stderr)


if __name__ == "__main__":
    unittest.main()
