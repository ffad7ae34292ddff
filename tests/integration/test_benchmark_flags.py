"""Every Google Benchmark flag that --help lists works under mpirun, with visits and in a merge
of jobs, or is refused with one line saying why.

Each flag runs with a typical value on 2 and 3 ranks (3 visits a row, tiny sizes, short
times); the exit status and the result file (whole, strict JSON, every row there) are checked,
and what the flag changes is looked at. The table must name every flag --help lists, so a
Google Benchmark that adds one fails here until someone decides what it does under MPI.
"""

import json
import os
import re
import tempfile
import unittest

from xfer_testlib import launch, rows

RUN = [
    "--benchmark_filter=mpi_host/mode:pingpong",
    "--xfer_sizes=8,4K",
    "--xfer_max_time=0.05",
    "--xfer_visits=3",
]
SIZES = 2

# flag -> typical values; None: refused, with the words its one line must hold.
FLAGS = {
    "--benchmark_list_tests": ["true"],
    "--benchmark_filter": ["mpi_host/mode:pingpong/bytes:4096"],
    "--benchmark_min_time": ["0.01s", "100x"],
    "--benchmark_min_warmup_time": None,
    "--benchmark_repetitions": ["2"],
    "--benchmark_enable_random_interleaving": ["true"],
    "--benchmark_report_aggregates_only": ["true"],
    "--benchmark_display_aggregates_only": ["true"],
    "--benchmark_format": ["json", "csv", "console"],
    "--benchmark_out": ["FILE"],
    "--benchmark_out_format": ["json", "csv", "console"],
    "--benchmark_color": ["true", "false", "auto"],
    "--benchmark_counters_tabular": ["true"],
    "--benchmark_context": ["run=ci,pool=a"],
    "--benchmark_time_unit": ["ms", "ns"],
    "--v": ["1"],
}
REFUSED_BECAUSE = {"--benchmark_min_warmup_time": "every visit warms up before it is timed"}
# What a merge of jobs is given of a flag (tools/run passes these to the merge too).
SHOWN = (
    "--benchmark_repetitions",
    "--benchmark_report_aggregates_only",
    "--benchmark_display_aggregates_only",
    "--benchmark_format",
    "--benchmark_out_format",
    "--benchmark_color",
    "--benchmark_counters_tabular",
    "--benchmark_time_unit",
)


def strict_json(text):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def help_flags():
    """The Google Benchmark flags --help lists."""
    text = launch(0, ["--help"], timeout=60).stdout
    section = text[text.index("benchmark [--benchmark_list_tests") :]
    return set(re.findall(r"\[(--[a-z_]+)=", section))


class EveryListedFlag(unittest.TestCase):
    def test_the_table_names_every_flag_that_help_lists(self):
        self.assertEqual(help_flags() - set(FLAGS), set(), "decide what these do under MPI")

    def run_flag(self, tmp, ranks, flag, value, extra=(), out_name="run.out"):
        out = os.path.join(tmp, out_name)
        args = list(RUN) + list(extra)
        if flag != "--benchmark_out":
            args.append(f"{flag}={value}")
        if flag == "--benchmark_report_aggregates_only":
            args.append("--benchmark_repetitions=2")
        args.append("--benchmark_out=" + out)
        proc = launch(ranks, args, timeout=120)
        document = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as f:
                document = f.read()
        return proc, document

    def check_run(self, flag, value, proc, text, visits=3):
        if FLAGS[flag] is None:
            self.assertEqual(proc.returncode, 2, proc.stderr)
            lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("xferbench:")]
            self.assertEqual(len(lines), 1, proc.stderr)
            self.assertIn(flag, lines[0])
            self.assertIn(REFUSED_BECAUSE[flag], lines[0])
            return
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        self.assertNotIn("nothing was measured", proc.stderr)
        if flag == "--benchmark_list_tests":
            self.assertIn("mpi_host/mode:pingpong/bytes:4096/manual_time", proc.stdout)
            self.assertIsNone(text)  # nothing ran, nothing written
            return
        if flag == "--benchmark_out_format" and value != "json":
            self.assertIn("mpi_host/mode:pingpong/bytes:4096/manual_time", text)
            return
        document = strict_json(text)  # whole: json.loads refuses a cut document
        self.assertIsNone(document["context"]["xferbench"]["incomplete"])
        iterations = rows(document)
        aggregates = rows(document, "aggregate")
        expected = 1 if flag == "--benchmark_filter" else SIZES
        if flag == "--benchmark_report_aggregates_only":
            self.assertEqual(iterations, [])
            self.assertEqual(len(aggregates), 4 * SIZES)  # mean, median, stddev, cv
        elif flag == "--benchmark_repetitions":
            self.assertEqual(len(iterations), 2 * SIZES)
            self.assertEqual(len(aggregates), 4 * SIZES)
        else:
            self.assertEqual(len(iterations), expected)
        for row in iterations:
            self.assertEqual(row["visits"], visits, row)  # every planned visit, no extra call
            self.assertGreater(row["real_time"], 0)
        if flag == "--benchmark_time_unit":
            self.assertEqual({r["time_unit"] for r in iterations + aggregates}, {value})
        if flag == "--benchmark_context":
            self.assertEqual((document["context"]["run"], document["context"]["pool"]), ("ci", "a"))
        if flag == "--benchmark_format" and value == "json":
            strict_json(proc.stdout)  # the console is one whole document too
        if flag == "--benchmark_format" and value == "csv":
            self.assertIn("name,iterations,real_time", proc.stdout)
        if flag == "--benchmark_color" and value == "false":
            self.assertNotIn("\x1b[", proc.stdout)

    def test_each_flag_with_two_and_three_ranks(self):
        for flag, values in FLAGS.items():
            for value in values or ["0.1"]:
                for ranks in (2, 3):
                    with self.subTest(flag=flag, value=value, ranks=ranks):
                        with tempfile.TemporaryDirectory() as tmp:
                            proc, text = self.run_flag(tmp, ranks, flag, value)
                            self.check_run(flag, value, proc, text)

    def test_each_shown_flag_in_a_merge_of_jobs(self):
        # tools/run's shape: jobs of one visit each, merged with the flags that show the result.
        for flag in SHOWN:
            value = FLAGS[flag][0]
            with self.subTest(flag=flag, value=value):
                with tempfile.TemporaryDirectory() as tmp:
                    files = []
                    for job in range(2):
                        path = os.path.join(tmp, f"job{job}.json")
                        args = RUN + ["--xfer_jobs=2", "--xfer_visits=1", "--benchmark_out=" + path]
                        if flag in (
                            "--benchmark_repetitions",
                            "--benchmark_report_aggregates_only",
                        ):
                            args.append("--benchmark_repetitions=2")
                        proc = launch(2, args, timeout=120)
                        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
                        files.append(path)
                    args = ["--xfer_merge=" + ",".join(files), f"{flag}={value}"]
                    if flag == "--benchmark_report_aggregates_only":
                        args.append("--benchmark_repetitions=2")
                    out = os.path.join(tmp, "merged.out")
                    proc = launch(0, args + ["--benchmark_out=" + out], timeout=120)
                    with open(out, encoding="utf-8") as f:
                        text = f.read()
                    self.check_run(flag, value, proc, text, visits=2)
                    if flag != "--benchmark_out_format":
                        for row in rows(strict_json(text)):
                            self.assertEqual(row["jobs"], 2, row)


if __name__ == "__main__":
    unittest.main()
