"""Visits: every row is measured in several visits spread over a shuffled run order.

What a user relies on: a shift between visits (a neighbour's job, a clock that moved) widens the
stated interval instead of hiding in it; every rank runs the visits in the same order, however
slow one of them is; a row above 64 MiB warms up only where its family is new in the process
(mpi_host: where it is the family's first row that big); random interleaving shuffles the order
but not the document; every visit checks the bytes it moved; --xfer_merge makes one result of
separate jobs and refuses files that are not jobs of one run; and every result file is strict
JSON.
"""

import json
import math
import os
import statistics
import tempfile
import unittest

from xfer_testlib import failed, launch, launch_json, rows

SIZES = "--xfer_sizes=8,4K,64K"
QUICK = [SIZES, "--xfer_max_time=0.05"]
T95_2 = 4.303  # Student's t, 95%, two-sided, 2 degrees of freedom (3 visits)


def short_name(row):
    return row["name"].replace("/manual_time", "")


def message(row):
    return row.get("error_message") or row.get("skip_message") or ""


def visits_of(document, row):
    return document["context"]["xferbench"]["visits"][short_name(row)]


def between_ci95_pct(values):
    """The 95% interval of the mean of `values` from their spread, in percent of the mean."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return T95_2 * sd / math.sqrt(n) / mean * 100


def dump_lines(folder, rank):
    with open(os.path.join(folder, f"rank{rank}.txt"), encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line]


def strict_json(text):
    """json.loads that refuses NaN, Infinity and -Infinity, which JSON does not have."""

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


class ShiftBetweenVisits(unittest.TestCase):
    def test_a_shift_between_visits_widens_the_stated_interval_to_cover_it(self):
        # The same run twice (same seed, so the same order), the second with each visit's times
        # scaled by its own factor within 1 +- 80%: a shift that only the spread between visits
        # shows, since every sample inside a visit moves alike. No floor: only the visits speak.
        common = [
            "--xfer_sizes=8,64,512,4K,32K,64K",
            "--xfer_max_time=0.05",
            "--xfer_seed=4242",
            "--xfer_floor=0",
        ]
        proc, plain = launch_json(2, common)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc, shifted = launch_json(2, common + ["--xfer_test_shift=80"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual([r["name"] for r in rows(plain)], [r["name"] for r in rows(shifted)])
        self.assertEqual(len(rows(plain)), 6)
        for document in (plain, shifted):
            for row in rows(document):
                self.assertFalse(failed(row), message(row))
                self.assertEqual(row["visits"], 3, row)
                visits = visits_of(document, row)
                self.assertEqual([v["round"] for v in visits], [0, 1, 2], visits)
                for v in visits:  # poisoning and validating took time, within the visit's
                    self.assertGreater(v["check_s"], 0, v)
                    self.assertLess(v["check_s"], v["wall_s"], v)
                latencies = [v["latency_us"] for v in visits]
                # The row's time is the mean of its visits' ...
                self.assertAlmostEqual(
                    row["latency_us"], sum(latencies) / 3, delta=row["latency_us"] * 1e-9
                )
                # ... and its interval is never narrower than their spread allows.
                self.assertGreaterEqual(
                    row["ci95_pct"] * (1 + 1e-9), between_ci95_pct(latencies), (row, visits)
                )
        # Three factors within +-80% spread by 46% of the mean (one standard deviation) on
        # average, far beyond what the machine's own hiccups between visits give.
        # On a loaded machine the plain run's own spread can reach the shift's, and then the
        # comparison says nothing (the coverage above was still checked).
        before = [r["ci95_pct"] for r in rows(plain)]
        after = [r["ci95_pct"] for r in rows(shifted)]
        if statistics.median(before) > 20:
            self.skipTest(
                f"too noisy here to see an 80% shift: the unshifted rows' median ci95 is "
                f"{statistics.median(before):.0f}% ({os.getloadavg()[0]:.1f} load)"
            )
        self.assertGreater(sum(after), 2 * sum(before), (before, after))


class SameOrderOnEveryRank(unittest.TestCase):
    def test_every_rank_visits_the_rows_in_the_same_shuffled_order(self):
        # The order comes from a seed rank 0 draws (no --xfer_seed here): a rank that shuffled
        # with its own would send into another row's receive. One rank's clock runs slow, so a
        # rank that decided anything from its own timing would fall out of step.
        for slow_rank in ("1", "2"):
            with self.subTest(slow_rank=slow_rank), tempfile.TemporaryDirectory() as dump:
                proc, doc = launch_json(
                    3,
                    QUICK
                    + [
                        "--xfer_modes=pingpong,stream",
                        "--benchmark_repetitions=2",
                        f"--xfer_test_slow_rank={slow_rank}",
                        f"--xfer_test_rank_dump={dump}",
                    ],
                    timeout=300,
                )
                self.assertEqual(proc.returncode, 0, proc.stderr)
                order = dump_lines(dump, 0)
                # 6 rows, 2 repetitions, 3 visits each.
                self.assertEqual(len(order), 36, order)
                self.assertEqual(dump_lines(dump, 1), order)
                self.assertEqual(dump_lines(dump, 2), order)
                # "NAME round:R repetition:K messages:M": the first round is shuffled.
                first_round = [line.split()[0] for line in order if " round:0 " in line]
                self.assertEqual(len(first_round), 12)
                self.assertNotEqual(first_round, sorted(first_round), "not shuffled")
                # The result file tells the same order.
                visits = [
                    (v["at_s"], name, v["round"], v.get("repetition", 0))
                    for name, listed in doc["context"]["xferbench"]["visits"].items()
                    for v in listed
                ]
                self.assertEqual(
                    [f"{name} round:{r} repetition:{k}" for _, name, r, k in sorted(visits)],
                    [line.rsplit(" ", 1)[0] for line in order],
                )


class WarmUp(unittest.TestCase):
    def test_mpi_host_warms_up_its_first_big_row_in_the_process_and_no_later_one(self):
        # A message above 64 MiB costs as much to warm up as to time: such a row sends one
        # warm-up message only where it is the first row that big of its family in this process
        # (mpi_host's first big message is slow even after its small rows; the other host paths,
        # GPU only, warm up only where the family is new). Smaller rows always warm up, with
        # --xfer_warmup messages but no more than 64 MiB worth.
        first_is_big = set()
        for seed in ("11", "12"):  # one run opens with a small row, the other with a big one
            with self.subTest(seed=seed):
                proc, doc = launch_json(
                    2,
                    [
                        "--xfer_sizes=4K,32MiB,80MiB,96MiB",
                        "--xfer_max_time=0.01",
                        f"--xfer_seed={seed}",
                    ],
                    timeout=300,
                )
                self.assertEqual(proc.returncode, 0, proc.stderr)
                visits = sorted(
                    (v["at_s"], name, v)
                    for name, listed in doc["context"]["xferbench"]["visits"].items()
                    for v in listed
                )
                self.assertEqual(len(visits), 12)
                first_is_big.add(visits[0][1].rsplit(":", 1)[1] not in ("4096", "33554432"))
                expected = {"4096": 5, "33554432": 2}
                big_seen = False
                for _, name, visit in visits:
                    size = name.rsplit(":", 1)[1]
                    if size in expected:
                        self.assertEqual(visit["warm_messages"], expected[size], name)
                    else:
                        self.assertEqual(visit["warm_messages"], 0 if big_seen else 1, name)
                        big_seen = True
        self.assertEqual(first_is_big, {True, False}, "the seeds no longer cover both cases")


class RandomInterleaving(unittest.TestCase):
    def test_random_interleaving_gives_one_document_with_the_same_rows(self):
        # Google Benchmark's own shuffle would differ from rank to rank; xferbench shuffles
        # every round (the last one too) with the agreed seed and reports the rows at the end.
        args = QUICK + ["--benchmark_repetitions=2", "--benchmark_format=json"]
        plain = launch(2, args)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        shuffled = launch(2, args + ["--benchmark_enable_random_interleaving=true"])
        self.assertEqual(shuffled.returncode, 0, shuffled.stderr)
        documents = []
        for proc in (plain, shuffled):
            document = strict_json(proc.stdout)  # one document, nothing else on stdout
            documents.append(document)
            for row in rows(document):
                self.assertFalse(failed(row), message(row))
        self.assertTrue(documents[1]["context"]["xferbench"]["plan"]["shuffle_last"])
        self.assertFalse(documents[0]["context"]["xferbench"]["plan"]["shuffle_last"])

        def listing(document):
            return [
                (b["name"], b["run_type"], b.get("aggregate_name"), b.get("repetition_index"))
                for b in document["benchmarks"]
            ]

        self.assertEqual(listing(documents[1]), listing(documents[0]))
        self.assertEqual(len(rows(documents[1])), 6)
        self.assertEqual({r["visits"] for r in rows(documents[1])}, {3})


class EveryVisitValidates(unittest.TestCase):
    def test_a_byte_corrupted_in_any_visit_fails_the_row(self):
        # The byte flips only in the visits of one round: whichever it is, that visit's check
        # catches it, the row fails with the message, and the figure is not published.
        for round_ in (0, 1, 2):
            with self.subTest(round=round_):
                proc, doc = launch_json(
                    2,
                    [
                        "--xfer_sizes=4K",
                        "--xfer_max_time=0.05",
                        f"--xfer_test_corrupt=mpi_host@{round_}",
                    ],
                )
                self.assertEqual(proc.returncode, 1, proc.stderr)
                (row,) = rows(doc)
                self.assertTrue(failed(row), row)
                self.assertIn("validation: 1 of 4096 bytes differ", message(row))
                self.assertIn("rank 1", message(row))
                visits = visits_of(doc, row)
                # The visits before it measured; the failed one says why; none ran after it.
                self.assertEqual([v["round"] for v in visits], list(range(round_ + 1)))
                for v in visits[:-1]:
                    self.assertNotIn("error", v)
                    self.assertGreater(v["latency_us"], 0)
                self.assertIn("validation: 1 of 4096 bytes differ", visits[-1]["error"])

    def test_a_corrupted_byte_fails_every_repetition_in_every_visit_order(self):
        proc, doc = launch_json(
            2,
            [
                "--xfer_sizes=8,4K",
                "--benchmark_repetitions=2",
                "--benchmark_enable_random_interleaving=true",
                "--xfer_max_time=0.05",
                "--xfer_test_corrupt=mpi_host",
            ],
        )
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(len(rows(doc)), 4)
        for row in rows(doc):
            self.assertTrue(failed(row), row)
            self.assertIn("validation: 1 of", message(row))
        self.assertIn("4 row(s) failed", proc.stderr)


class Merge(unittest.TestCase):
    def run_jobs(self, tmp, count=2, extra=(), settings=QUICK):
        """Runs `count` jobs of one run (--xfer_jobs) into tmp; returns their files."""
        files = []
        for job in range(count):
            out = os.path.join(tmp, f"job{job}.json")
            proc = launch(
                2,
                list(settings) + [f"--xfer_jobs={count}", "--benchmark_out=" + out] + list(extra),
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            files.append(out)
        return files

    def merged_and_jobs(self, tmp, files):
        """Merges `files` into tmp/merged.json; returns (merged document, the jobs' documents)."""
        out = os.path.join(tmp, "merged.json")
        proc = self.merge(files, out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out, encoding="utf-8") as f:
            merged = strict_json(f.read())
        jobs = []
        for path in files:
            with open(path, encoding="utf-8") as f:
                jobs.append(json.load(f))
        return merged, jobs

    def merge(self, files, out=None, ranks=0):
        args = ["--xfer_merge=" + ",".join(files)]
        if out:
            args.append("--benchmark_out=" + out)
        return launch(ranks, args, timeout=120)

    def test_jobs_of_one_message_each_state_the_spread_between_them(self):
        # tools/run's jobs visit a row once; at 64 MiB a visit in its share of the time is one
        # round trip, whose lone sample has no spread (the job states 100%). The merged row
        # states the spread between the jobs, which a rerun confirms (docs/reproducibility.md),
        # instead of 100 / sqrt(3) = 57.7% whatever the messages did.
        with tempfile.TemporaryDirectory() as tmp:
            settings = [
                "--xfer_sizes=64MiB",
                "--benchmark_filter=mpi_host",
                "--xfer_max_time=0.001",
            ]
            files = self.run_jobs(tmp, 3, ["--xfer_visits=1"], settings)
            merged, jobs = self.merged_and_jobs(tmp, files)
            self.assertEqual(len(rows(merged)), 1)
            row = rows(merged)[0]
            figures = [rows(job)[0] for job in jobs]
            for figure in figures:
                self.assertEqual((figure["samples"], figure["visits"]), (1, 1), figure)
                self.assertGreaterEqual(figure["ci95_pct"], 100, figure)
            between = between_ci95_pct([f["latency_us"] for f in figures])
            self.assertAlmostEqual(row["ci95_pct"], between, delta=between * 1e-4 + 1e-9)
            self.assertEqual(row["floor_pct"], 0)

    def test_two_jobs_merge_into_one_result_with_their_rows(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = self.run_jobs(tmp)
            merged, jobs = self.merged_and_jobs(tmp, files)
            self.assertEqual([r["name"] for r in rows(merged)], [r["name"] for r in rows(jobs[0])])
            for i, row in enumerate(rows(merged)):
                self.assertFalse(failed(row), message(row))
                self.assertEqual(row["jobs"], 2, row)
                figures = [rows(job)[i] for job in jobs]
                # The merged figure is the mean of the jobs' figures; it counts all their visits.
                self.assertAlmostEqual(
                    row["latency_us"],
                    sum(f["latency_us"] for f in figures) / 2,
                    delta=row["latency_us"] * 1e-6,
                )
                self.assertEqual(row["iterations"], sum(f["iterations"] for f in figures))
                # It says what made its interval: how many rows' jobs (0: the jobs' own samples)
                # and the t quantile's degrees of freedom (at least the row's own jobs - 1).
                self.assertGreaterEqual(row["ci95_rows"], 0, row)
                if row["ci95_rows"] >= 1:
                    self.assertGreaterEqual(row["ci95_df"], 1, row)
                listed = merged["context"]["xferbench"]["visits"][short_name(row)]
                self.assertEqual(sorted(v["job"] for v in listed), [0, 0, 0, 1, 1, 1])
            context = merged["context"]["xferbench"]
            self.assertEqual(context["jobs"], 2)
            self.assertEqual(context["merged"]["sources"], ["job0.json", "job1.json"])
            self.assertEqual(len(set(context["merged"]["seeds"])), 2)
            self.assertEqual(context["merged"]["interval"]["size_factor"], 8)

    def test_merged_rows_keep_their_share_of_the_link_and_refuse_one_above_it(self):
        # The jobs' rows as a GPU run writes them (docs/links.md): link_gbps is the line rate of
        # the links the row crossed. Job 1 read a slower link than job 0; the first row's link
        # is 10x its bandwidth, the second's only half of it: an error, not a result.
        with tempfile.TemporaryDirectory() as tmp:
            files = self.run_jobs(tmp)
            gbps = {}
            for job, path in enumerate(files):
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
                first, second = rows(doc)[:2]
                gbps.setdefault(first["name"], []).append(first["GB/s"])
                first["link_gbps"] = 1e6 if job == 0 else 1e5
                second["link_gbps"] = second["GB/s"] / 2
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(doc, f)
            out = os.path.join(tmp, "merged.json")
            proc = self.merge(files, out)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            with open(out, encoding="utf-8") as f:
                merged = strict_json(f.read())
            first, second = rows(merged)[:2]
            self.assertFalse(failed(first), message(first))
            self.assertEqual(first["link_gbps"], 1e5)
            self.assertAlmostEqual(first["pct_of_link"], first["GB/s"] / 1e5 * 100, places=9)
            self.assertTrue(failed(second))
            self.assertIn("an error in the measurement or in the peak", message(second))
            self.assertNotIn("GB/s", second)
            for row in rows(merged)[2:]:
                self.assertNotIn("link_gbps", row)  # no link known: no share

    def assert_refused(self, files, *fragments):
        proc = self.merge(files)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)
        self.assertEqual(proc.stderr.count("xferbench: --xfer_merge"), 1, proc.stderr)

    def test_files_that_are_not_jobs_of_one_run_are_refused_by_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = self.run_jobs(tmp)
            missing = os.path.join(tmp, "missing.json")
            self.assert_refused([files[0], missing], f"--xfer_merge: {missing}: cannot read it")
            garbage = os.path.join(tmp, "garbage.json")
            with open(garbage, "w", encoding="utf-8") as f:
                f.write("old content, not a result")
            self.assert_refused([files[0], garbage], f"--xfer_merge: {garbage}: not JSON")
            other = os.path.join(tmp, "other.json")
            with open(other, "w", encoding="utf-8") as f:
                json.dump({"benchmarks": []}, f)
            self.assert_refused([other, files[1]], f"{other}: not an xferbench result file")
            # A job of other settings (other sizes) is not a job of this run.
            different = os.path.join(tmp, "different.json")
            proc = launch(
                2, QUICK + ["--xfer_jobs=2", "--xfer_sizes=8,4K", "--benchmark_out=" + different]
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assert_refused(
                [files[0], different],
                f"--xfer_merge: {different}: not made by",
                "with the same settings as " + files[0],
            )
            # A whole run's file alone is not a merge; the same job twice is not two jobs.
            whole = os.path.join(tmp, "whole.json")
            proc = launch(2, QUICK + ["--benchmark_out=" + whole])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assert_refused([whole], "--xfer_merge=", "expected FILE,FILE")
            self.assert_refused([files[0], files[0]], f"{files[0]}: the same run as an earlier")

    def test_jobs_cut_short_merge_into_a_result_marked_incomplete(self):
        # A run stopped early (tools/run: a signal between or during jobs) keeps what its jobs
        # measured: fewer files than planned jobs, or a job's file marked incomplete.
        with tempfile.TemporaryDirectory() as tmp:
            files = self.run_jobs(tmp, 2)
            out = os.path.join(tmp, "merged.json")
            proc = self.merge(files[:1], out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("the merged result is incomplete", proc.stderr)
            with open(out, encoding="utf-8") as f:
                merged = strict_json(f.read())
            incomplete = merged["context"]["xferbench"]["incomplete"]
            self.assertEqual((incomplete["jobs"], incomplete["jobs_planned"]), (1, 2))
            self.assertIn("1 of 2 planned jobs", incomplete["reason"])
            self.assertEqual(len(rows(merged)), 3)
            for row in rows(merged):
                self.assertEqual((row["visits"], row["visits_planned"]), (3, 6), row)
            # A job cut short (its rows but the first taken out, marked as the runner marks it)
            # merges with a whole one: every row is kept, each from the jobs that measured it.
            with open(files[0], encoding="utf-8") as f:
                whole = json.load(f)
            with open(files[1], encoding="utf-8") as f:
                cut = json.load(f)
            kept = rows(cut)[:1]
            cut["benchmarks"] = kept
            cut["context"]["xferbench"]["incomplete"] = {
                "reason": "interrupted by SIGINT on rank 0",
                "round": 1,
                "rounds": 3,
                "rows": 1,
                "not_measured": [short_name(r) for r in rows(whole)[1:]],
            }
            cut_path = os.path.join(tmp, "cut.json")
            with open(cut_path, "w", encoding="utf-8") as f:
                json.dump(cut, f)
            merged, _ = self.merged_and_jobs(tmp, [files[0], cut_path])
            incomplete = merged["context"]["xferbench"]["incomplete"]
            self.assertIn(
                "job 2 (cut.json) stopped early: interrupted by SIGINT", incomplete["reason"]
            )
            self.assertEqual(incomplete["not_measured"], [])  # job 1 measured them
            jobs = {short_name(r): r["jobs"] for r in rows(merged)}
            self.assertEqual(sorted(jobs.values()), [1, 1, 2], jobs)
            # Still refused: a file of other settings, even cut short.
            different = os.path.join(tmp, "different.json")
            proc = launch(
                2, QUICK + ["--xfer_jobs=2", "--xfer_sizes=8,4K", "--benchmark_out=" + different]
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assert_refused([cut_path, different], f"--xfer_merge: {different}: not made by")

    def test_a_merge_under_the_launcher_prints_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = self.run_jobs(tmp)
            proc = self.merge([files[0], os.path.join(tmp, "nope.json")], ranks=2)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(proc.stderr.count("cannot read it"), 1, proc.stderr)


class StrictJson(unittest.TestCase):
    def test_result_files_with_repetitions_are_strict_json(self):
        # Aggregates of repetitions include a coefficient of variation, 0/0 for a counter whose
        # mean is 0 (time_limited, say): Python's json reads NaN, but other readers stop there.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = launch(
                2,
                QUICK
                + [
                    "--xfer_modes=pingpong,bidir",
                    "--benchmark_repetitions=3",
                    "--benchmark_format=json",
                    "--benchmark_out=" + out,
                ],
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out, encoding="utf-8") as f:
                in_file = strict_json(f.read())
            on_stdout = strict_json(proc.stdout)
            for document in (in_file, on_stdout):
                aggregates = {r["aggregate_name"] for r in rows(document, "aggregate")}
                self.assertTrue({"mean", "median", "stddev", "cv"} <= aggregates, aggregates)
                self.assertEqual(len(rows(document)), 18)

    def test_a_failed_row_with_repetitions_is_strict_json_too(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = launch(
                2,
                [
                    "--xfer_sizes=8",
                    "--xfer_max_time=0.05",
                    "--benchmark_repetitions=2",
                    "--xfer_test_corrupt=mpi_host",
                    "--benchmark_out=" + out,
                ],
            )
            self.assertEqual(proc.returncode, 1, proc.stderr)
            with open(out, encoding="utf-8") as f:
                document = strict_json(f.read())
            self.assertTrue(all(failed(r) for r in rows(document)))


if __name__ == "__main__":
    unittest.main()
