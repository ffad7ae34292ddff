"""Flags: help, version, and bad input that stops every rank with status 2 before any run."""

import json
import os
import pty
import re
import select
import subprocess
import tempfile
import time
import unittest

from xfer_testlib import MPIRUN, OPENMPI_AS_ROOT, QUICK, XFERBENCH, launch, launch_json, rows

COLOR = "\x1b["  # how an ANSI colour code begins


def benchmark_version():
    out = launch(0, ["--version"], timeout=60).stdout
    major, minor = re.search(r"Google Benchmark (\d+)\.(\d+)", out).groups()
    return int(major), int(minor)


class BadInput(unittest.TestCase):
    def assert_usage_error(self, args, *fragments, ranks=2):
        proc = launch(ranks, args, timeout=120)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)
        self.assertNotIn("Benchmark ", proc.stdout)
        # Printed once, by the rank that speaks, not by every rank.
        self.assertEqual(proc.stderr.count("xferbench: " + fragments[0]), 1, proc.stderr)

    def test_bad_sizes(self):
        for value, why in (
            ("abc", "not a size"),
            ("0", "at least 1 byte"),
            ("-8", "positive"),
            ("1GiB:8", "backwards"),
        ):
            with self.subTest(value=value):
                self.assert_usage_error(
                    [f"--xfer_sizes={value}"], "--xfer_sizes", why, "expected sizes like"
                )

    def test_size_larger_than_memory(self):
        self.assert_usage_error(["--xfer_sizes=64TiB"], "--xfer_sizes", "memory")

    def test_one_rank_short_of_memory_stops_every_rank(self):
        # Only rank 1 believes its node has 1 GiB: every rank must stop with exit 2, none wait.
        command = MPIRUN + [
            "1",
            XFERBENCH,
            "--xfer_sizes=8,1GiB",
            ":",
            "-np",
            "1",
            "-x",
            "XFER_TEST_MEMORY=1073741824",
            XFERBENCH,
            "--xfer_sizes=8,1GiB",
        ]
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=120,
            check=False,
            env=dict(os.environ),
        )
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("rank 1: --xfer_sizes: 1 GiB needs two buffers", proc.stderr)
        self.assertEqual(proc.stderr.count("needs two buffers"), 1, proc.stderr)

    def test_bad_choices(self):
        self.assert_usage_error(
            ["--xfer_cuda_aware=maybe"], "--xfer_cuda_aware", "expected auto, yes or no"
        )
        self.assert_usage_error(
            ["--xfer_require=warp_drive"], "--xfer_require", "unknown path 'warp_drive'"
        )
        self.assert_usage_error(["--xfer_gpus=0-1"], "--xfer_gpus", "expected ordered GPU pairs")
        self.assert_usage_error(["--xfer_bogus=1"], "unknown flag --xfer_bogus")
        self.assert_usage_error(
            ["--xfer_test_fail=cudaMalloc#x"], "--xfer_test_fail", "expected CALL[@BYTES][#RANK]"
        )
        self.assert_usage_error(["--benchmark_out_format=xml"], "--benchmark_out_format")

    def test_bad_time_unit(self):
        self.assert_usage_error(
            ["--benchmark_time_unit=fortnights"],
            "--benchmark_time_unit",
            "expected ns, us, ms or s",
        )

    def test_min_time_in_either_google_benchmark_spelling(self):
        for value in ("0.01", "0.01s"):
            with self.subTest(value=value):
                proc = launch(2, ["--xfer_sizes=8", "--benchmark_min_time=" + value], timeout=120)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertNotIn("should have a suffix", proc.stderr)
        self.assert_usage_error(["--benchmark_min_time=soon"], "--benchmark_min_time")

    def test_min_time_still_means_at_least_that_much(self):
        # A loose precision would stop these rows after a few batches; the minimums hold. The
        # minimum is the row's, over all its visits together (real_time * iterations is the time
        # they timed): each visit times its share, a later one past the first one's message count
        # where it runs quicker.
        proc, doc = launch_json(
            2, ["--xfer_sizes=8,64K", "--xfer_precision=50", "--benchmark_min_time=0.3s"]
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for row in rows(doc):
            self.assertGreaterEqual(row["real_time"] * row["iterations"], 0.3e6, row)
        proc, doc = launch_json(
            2, ["--xfer_sizes=1M", "--xfer_precision=50", "--benchmark_min_time=700x"]
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertGreaterEqual(rows(doc)[0]["iterations"], 700)

    def test_ranks_with_different_settings_stop_instead_of_deadlocking(self):
        command = (
            MPIRUN
            + ["1", XFERBENCH]
            + QUICK
            + [":", "-np", "1", "env", "XFER_SIZES=16", XFERBENCH]
            + QUICK[1:]
        )
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=120,
            check=False,
            env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"),
        )
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("the ranks were given different settings", proc.stderr)

    def test_filter_that_matches_nothing_is_an_error(self):
        proc = launch(2, QUICK + ["--benchmark_filter=mpi_hots"], timeout=120)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--benchmark_filter=mpi_hots matches no benchmark here", proc.stderr)
        self.assertNotIn("add --xfer_", proc.stderr)  # no flag would make a typo match

    def test_filter_that_matches_nothing_names_the_flag_that_would_make_it_match(self):
        for args, hint in (
            (
                ["--xfer_modes=pingpong", "--benchmark_filter=mpi_host/mode:stream"],
                "it matches rows of mode stream, which --xfer_modes leaves out: "
                "add --xfer_modes=stream",
            ),
            (
                ["--benchmark_filter=mpi_host/mode:pingpong/bytes:1000/"],
                "it names a size --xfer_sizes leaves out: add --xfer_sizes=1000",
            ),
            (
                ["--benchmark_filter=mpi_host/mode:pingpong/pairs:2/"],
                "rows name pairs:N only when several rank pairs run at once: add --xfer_pairs",
            ),
        ):
            with self.subTest(args=args):
                self.assert_usage_error(QUICK + args, "--benchmark_filter=", hint)

    def test_filter_in_another_name_form_names_the_row_it_meant(self):
        meant = "it probably meant mpi_host/mode:pingpong/bytes:8/manual_time"
        for value, why in (
            ("bytes:8$", "a '$' before it matches none: end the filter with /manual_time$"),
            ("mpi_host/bytes:8/", "older result files name it mpi_host/bytes:8/manual_time"),
        ):
            with self.subTest(filter=value):
                self.assert_usage_error(
                    QUICK + ["--benchmark_filter=" + value], "--benchmark_filter=", meant, why
                )

    def test_filter_for_a_path_skipped_here_is_not_but_measures_nothing(self):
        # Not a typo (exit 2), but a run that measured nothing must not pass (exit 1).
        proc = launch(0, QUICK + ["--benchmark_filter=mpi_host"], timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("skipped mpi_host: needs 2 ranks", proc.stderr)
        self.assertIn("xferbench: nothing was measured: ", proc.stderr)
        self.assertNotIn("matches no benchmark", proc.stderr)

    def test_required_path_filtered_out_fails(self):
        proc = launch(
            2, QUICK + ["--benchmark_filter=nccl", "--xfer_require=mpi_host"], timeout=120
        )
        self.assertEqual(proc.returncode, 1)
        self.assertIn("required path mpi_host produced no rows", proc.stderr)

    def test_unknown_benchmark_flag(self):
        proc = launch(2, QUICK + ["--benchmark_nonsense=1"], timeout=120)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("benchmark_nonsense", proc.stderr)

    def test_unwritable_output_file(self):
        proc = launch(2, QUICK + ["--benchmark_out=/nonexistent-dir/run.json"], timeout=120)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--benchmark_out=/nonexistent-dir/run.json", proc.stderr)

    def test_environment_fallback_is_checked_too(self):
        proc = launch(2, QUICK[1:], timeout=120, env={"XFER_SIZES": "zero"})
        self.assertEqual(proc.returncode, 2)
        self.assertIn("XFER_SIZES", proc.stderr)


def launch_in_terminal(ranks, args, env=None, timeout=120):
    """Runs xferbench as launch() does, its output a terminal (TERM=xterm); returns (exit
    status, output)."""
    command = ([XFERBENCH] if ranks == 0 else MPIRUN + [str(ranks), XFERBENCH]) + list(args)
    full_env = dict(OPENMPI_AS_ROOT, **os.environ)
    full_env.pop("NO_COLOR", None)
    full_env.update(TERM="xterm", **(env or {}))
    main, side = pty.openpty()
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=side, stderr=side, env=full_env
    )
    os.close(side)
    output = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([main], [], [], 1)[0]:
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal closed: every process that held it has exited
                break
            if not chunk:
                break
            output += chunk
        else:
            proc.kill()
        return proc.wait(timeout=30), output.decode(errors="replace")
    finally:
        os.close(main)


class Colour(unittest.TestCase):
    """Open MPI gives rank 0 a terminal even when mpirun's own output goes to a file or a pipe,
    so under a launcher xferbench prints colour codes only when asked (tools/run asks when its
    output is a terminal); NO_COLOR is honoured unless colour is asked for."""

    ARGS = QUICK + ["--benchmark_filter=mpi_host/mode:pingpong"]

    def test_no_colour_under_a_launcher_into_a_pipe(self):
        proc = launch(2, self.ARGS, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("mpi_host/mode:pingpong/bytes:8/manual_time", proc.stdout)
        self.assertNotIn(COLOR, proc.stdout + proc.stderr)

    def test_under_a_launcher_in_a_terminal_only_when_asked_for(self):
        status, output = launch_in_terminal(2, self.ARGS)
        self.assertEqual(status, 0, output)
        self.assertIn("mpi_host/mode:pingpong/bytes:8/manual_time", output)
        self.assertNotIn(COLOR, output)
        status, output = launch_in_terminal(2, self.ARGS + ["--benchmark_color=true"])
        self.assertEqual(status, 0, output)
        self.assertIn(COLOR, output)

    def test_no_color_is_honoured_unless_colour_is_asked_for(self):
        # A merge runs without a launcher (as tools/run's does), so "auto" asks the terminal.
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            for job in range(2):
                files.append(os.path.join(tmp, f"job{job}.json"))
                proc = launch(2, self.ARGS + ["--xfer_jobs=2", "--benchmark_out=" + files[-1]])
                self.assertEqual(proc.returncode, 0, proc.stderr)
            merge = ["--xfer_merge=" + ",".join(files)]
            for env, args, coloured in (
                ({}, [], True),
                ({"NO_COLOR": "1"}, [], False),
                ({"NO_COLOR": ""}, [], True),
                ({"NO_COLOR": "1"}, ["--benchmark_color=true"], True),
            ):
                with self.subTest(env=env, args=args):
                    status, output = launch_in_terminal(0, merge + args, env)
                    self.assertEqual(status, 0, output)
                    self.assertIn("mpi_host/mode:pingpong/bytes:8/manual_time", output)
                    self.assertEqual(COLOR in output, coloured, output)


class MeasuredNothing(unittest.TestCase):
    """A run asked to measure that measured nothing fails (exit 1) with a line saying so; what
    is not a run (--help, --version, --benchmark_list_tests, --xfer_merge) keeps its status."""

    def test_without_the_launcher_a_run_fails_saying_nothing_was_measured(self):
        proc = launch(0, QUICK, timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(
            "xferbench: nothing was measured: no path can run here with one rank (launch 2 or "
            "more: mpirun -np 2)",
            proc.stderr,
        )

    def test_listing_the_rows_measures_nothing_and_succeeds(self):
        for ranks, args in ((0, []), (2, ["--benchmark_filter=mpi_host/mode:pingpong"])):
            with self.subTest(ranks=ranks):
                proc = launch(ranks, QUICK + args + ["--benchmark_list_tests=true"], timeout=120)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertNotIn("nothing was measured", proc.stderr)
                if ranks:
                    self.assertIn("mpi_host/mode:pingpong/bytes:8/manual_time", proc.stdout)


class HelpAndVersion(unittest.TestCase):
    def test_help_lists_our_flags_then_google_benchmarks(self):
        proc = launch(0, ["--help"], timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ours = proc.stdout.find("--xfer_sizes")
        theirs = proc.stdout.find("--benchmark_filter")
        self.assertGreaterEqual(ours, 0)
        self.assertGreater(theirs, ours)
        for flag in ("--xfer_require", "--xfer_gpus", "--xfer_cuda_aware", "--xfer_timeout"):
            self.assertIn(flag, proc.stdout)

    def test_version(self):
        proc = launch(0, ["--version"], timeout=60)
        self.assertEqual(proc.returncode, 0)
        self.assertRegex(proc.stdout, r"^xferbench \d+\.\d+\.\d+ \(git [0-9a-f]+|unknown")
        self.assertIn("Google Benchmark 1.", proc.stdout)

    def test_version_names_the_commit_that_was_built(self):
        # A build directory configured at an older commit must configure again after a commit,
        # or every result file would name the wrong one (CMake once checked the branch's ref
        # file with a stale regex match and never did). ctest runs after the build.
        source = os.environ.get("XFER_SOURCE_DIR", "")
        if "XFER_GIT_REVISION" in os.environ or not os.path.isdir(os.path.join(source, ".git")):
            self.skipTest("not built from a git checkout, or the revision is given by hand")
        head = subprocess.run(
            ["git", "-C", source, "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if head.returncode != 0:
            self.skipTest("git cannot read the checkout: " + head.stderr.strip())
        proc = launch(0, ["--version"], timeout=60)
        self.assertIn(f"(git {head.stdout.strip()})", proc.stdout)

    def test_help_under_the_launcher_prints_once(self):
        proc = launch(2, ["--help"], timeout=60)
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(proc.stdout.count("--xfer_sizes="), 1)


class ResultFile(unittest.TestCase):
    def test_existing_file_is_replaced_whole(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            with open(out, "w", encoding="utf-8") as f:
                f.write("old content " * 1000)
            proc = launch(2, QUICK + ["--benchmark_out=" + out])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out, encoding="utf-8") as f:
                text = f.read()
            self.assertTrue(text.startswith("{"))
            self.assertNotIn("old content", text)
            self.assertEqual(os.listdir(tmp), ["run.json"])

    def test_file_named_in_the_environment_is_written_by_rank_0_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = launch(2, QUICK, env={"BENCHMARK_OUT": out})
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(json.load(f)["context"]["xferbench"]["world_size"], 2)

    def test_a_run_that_dies_leaves_the_previous_file_untouched(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            with open(out, "w", encoding="utf-8") as f:
                f.write('{"previous": true}')
            proc = launch(
                2,
                QUICK + ["--xfer_test_hang_rank=1", "--xfer_timeout=2"],
                env={"BENCHMARK_OUT": out},
                timeout=120,
            )
            self.assertNotEqual(proc.returncode, 0)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(f.read(), '{"previous": true}')

    def test_csv_and_console_file_formats(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.csv")
            proc = launch(2, QUICK + ["--benchmark_out=" + out, "--benchmark_out_format=csv"])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out, encoding="utf-8") as f:
                lines = f.read().splitlines()
            # Like Google Benchmark's own CSV file: its context lines, then the table.
            self.assertEqual(
                sum(1 for line in lines if line.startswith("name,iterations,real_time")), 1
            )
            self.assertEqual(sum(1 for line in lines if line.startswith('"mpi_host/')), 3)


if __name__ == "__main__":
    unittest.main()
