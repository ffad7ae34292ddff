"""Tests for tools/fleet (judge and run) and plot.py's fleet heatmaps, on synthetic fleet
results written as xferbench --xfer_fleet writes them (format xferbench-fleet/1).

    python3 -m unittest discover -s tests/tools -p 'test_fleet_tool.py'

The fleets: 8 hosts, one pair's time lognormal with a 3% spread, nodeC 30% slow on every pair
and the link nodeA-nodeF twice as slow, in two families of mpi_host; a healthy one; two hosts.
Run as `test_fleet_tool.py fake-xferbench MODEL.json FLAGS...`, this file is a stand-in for
the launch of xferbench that `fleet run` starts: it writes what the model measures.
"""

import contextlib
import importlib.util
import io
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from itertools import combinations

import numpy as np

from toollib import TOOLS  # (and tools/ on sys.path)
from xfertools.core.files import InputError
from xfertools.fleet import cli as fleet_cli
from xfertools.fleet import model as fleet
from xfertools.fleet import report as fleet_report

FLEET = os.path.join(TOOLS, "fleet")
PLOT = os.path.join(TOOLS, "plot.py")
HOSTS = [f"node{c}" for c in "ABCDEFGH"]
SLOW_HOST, SLOW_LINK = 2, (0, 5)  # nodeC; nodeA-nodeF
FAMILIES = (("mpi_host/mode:pingpong", 5.0), ("mpi_host/mode:stream", 2.0))  # base time, us
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


class Model:
    """A fleet's true times: lognormal around each family's base time, a slow host and a slow
    link where given; measured with a seeded numpy Generator."""

    def __init__(self, hosts=HOSTS, seed=1, slow_host=None, slow_link=None, sigma=0.03):
        self.hosts = list(hosts)
        self.n = len(hosts)
        self.rng = np.random.default_rng(seed)
        self.slow_host, self.slow_link, self.sigma = slow_host, slow_link, sigma
        self.seed = seed

    @classmethod
    def from_spec(cls, spec):
        link = spec.get("slow_link")
        return cls(spec["hosts"], spec["seed"], spec.get("slow_host"), link and tuple(link))

    def time(self, a, b, base):
        log_t = math.log(base) + self.rng.normal(0, self.sigma)
        if self.slow_host in (a, b):
            log_t += math.log(1.3)
        if (min(a, b), max(a, b)) == self.slow_link:
            log_t += math.log(2.0)
        return math.exp(log_t)

    def fleet_object(self, series, retests, passes):
        rounds = self.n - 1 if self.n % 2 == 0 else self.n
        return {
            "format": fleet.FORMAT,
            "ranks": self.n,
            "hosts": self.hosts,
            "host_of": list(range(self.n)),
            "seed": self.seed,
            "passes": passes,
            "series": series,
            "retests": retests,
            "rounds": {"planned": rounds, "measured": rounds},
            "lost": [],
            "incomplete": None,
        }

    def result(self, passes=2):
        """The result of a fleet run: every pair in each pass's rounds."""
        series, pass_list = [], []
        pairs = list(combinations(range(self.n), 2))
        for p in range(passes):
            relabel = fleet.pass_relabel(self.n, p, self.seed)
            pass_list.append({"pass": p, "relabel": relabel})
            rounds = fleet.round_matrix(self.n, relabel)
            for family, base in FAMILIES:
                series.append(
                    {
                        "path": "mpi_host",
                        "family": family,
                        "bytes": 8,
                        "pass": p,
                        "time_us": [self.time(a, b, base) for a, b in pairs],
                        "round_of": [int(rounds[a, b]) for a, b in pairs],
                    }
                )
        return {"benchmarks": [], "fleet": self.fleet_object(series, [], pass_list)}

    def retest(self, rounds_document):
        """The result of a re-test run of a rounds file (xferbench --xfer_fleet_rounds)."""
        retests = []
        for r, pairs in enumerate(rounds_document["rounds"]):
            for family, base in FAMILIES:
                retests.append(
                    {
                        "path": "mpi_host",
                        "family": family,
                        "bytes": 8,
                        "round": r,
                        "pairs": pairs,
                        "time_us": [self.time(a, b, base) for a, b in pairs],
                    }
                )
        return {"benchmarks": [], "fleet": self.fleet_object([], retests, [])}


def write_json(path, document):
    with open(path, "w", encoding="utf-8") as stream:
        json.dump(document, stream)
    return path


def fake_xferbench(spec_path, flags):
    """What `fleet run` launches in these tests: the model's result at --benchmark_out."""
    with open(spec_path, encoding="utf-8") as stream:
        spec = json.load(stream)
    options = dict(flag[2:].split("=", 1) for flag in flags if "=" in flag)
    out = options["benchmark_out"]
    model = Model.from_spec(spec)
    if "xfer_fleet_rounds" in options:
        with open(options["xfer_fleet_rounds"], encoding="utf-8") as stream:
            model.slow_host = model.slow_host if spec.get("retest_slow", True) else None
            model.slow_link = model.slow_link if spec.get("retest_slow", True) else None
            write_json(out, model.retest(json.load(stream)))
        return 0
    document = model.result(int(options["xfer_fleet"]))
    if spec.get("exit"):  # a launch that fails: what it measured, or nothing
        if spec.get("partial"):
            document["fleet"]["incomplete"] = "rank 3 lost in round 4"
            write_json(out, document)
        if spec.get("said"):  # what the launcher printed as it ended the job
            print(spec["said"], file=sys.stderr)
        return spec["exit"]
    if spec.get("stall"):  # stands still until a signal ends it, its result written
        write_json(out, document)
        with open(spec["stall"], "w") as ready:
            ready.write(str(os.getpid()))
        time.sleep(60)
        return 0
    write_json(out, document)
    return 0


class FleetTestCase(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def path(self, name):
        return os.path.join(self.dir, name)

    def tool(self, tool, *args):
        return subprocess.run(
            [sys.executable, tool, *args],
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def fleet(self, *args):
        return self.tool(FLEET, *args)

    def fleet_here(self, *args):
        """tools/fleet's main in this process (no start-up: numpy and scipy are loaded)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = fleet_cli.main(list(args))
        return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())

    def assertExit(self, done, status):
        self.assertEqual(done.returncode, status, done.stdout + done.stderr)


class Judge(FleetTestCase):
    def slow_result(self, seed=1):
        return write_json(
            self.path("fleet.json"),
            Model(seed=seed, slow_host=SLOW_HOST, slow_link=SLOW_LINK).result(),
        )

    def retest_of(self, rounds, slow, name):
        model = Model(seed=7, slow_host=SLOW_HOST if slow else None)
        model.slow_link = SLOW_LINK if slow else None
        with open(rounds, encoding="utf-8") as stream:
            return write_json(self.path(name), model.retest(json.load(stream)))

    def test_suspects_wait_for_their_retest_then_slow_again_are_named(self):
        result = self.slow_result()
        rounds = self.path("rounds.json")
        first = self.fleet("judge", result, "--rounds-out", rounds)
        self.assertExit(first, 3)
        self.assertIn("suspect host nodeC: +", first.stdout)
        self.assertIn("suspect link nodeA-nodeF: +", first.stdout)
        self.assertIn("not re-tested: 1 suspect host, 1 suspect link", first.stdout)
        self.assertIn(rounds, first.stderr)
        self.assertEqual(first.stdout.splitlines()[-1], "drain: (none)")
        # both families judged apart, each with its heading and its matrix (8 hosts)
        self.assertIn("mpi_host/mode:pingpong at 8 B: 8 ranks on 8 hosts, 2 passes", first.stdout)
        self.assertIn("mpi_host/mode:stream at 8 B: 8 ranks on 8 hosts", first.stdout)
        rows = [line.split() for line in first.stdout.splitlines() if line.startswith("  node")]
        self.assertEqual(
            [row[0] for row in rows[:8]], [f"{h}^" if h == "nodeC" else h for h in HOSTS]
        )
        self.assertTrue(rows[0][6].endswith("^"), rows[0])  # nodeA's cell with nodeF
        with open(rounds, encoding="utf-8") as stream:
            plan = json.load(stream)
        self.assertEqual(plan["format"], "xferbench-fleet-rounds/1")
        self.assertEqual((plan["ranks"], plan["hosts"]), (8, HOSTS))
        pairs = [tuple(p) for rnd in plan["rounds"] for p in rnd]
        for rnd in plan["rounds"]:
            ranks = [r for p in rnd for r in p]
            self.assertEqual(len(ranks), len(set(ranks)), "a rank twice in one round")
        self.assertIn(SLOW_LINK, pairs)
        self.assertEqual(pairs.count(SLOW_LINK), fleet.LINK_REPEATS)  # visits a median decides
        # control pairs (no suspect in them) give the re-test job its own level
        controls = [p for p in pairs if SLOW_HOST not in p and p != SLOW_LINK]
        self.assertGreaterEqual(len(controls), fleet.CONTROLS, plan["rounds"])
        self.assertGreaterEqual(sum(SLOW_HOST in p for p in pairs), 3)
        self.assertIn("host nodeC", plan["why"])
        self.assertIn("link nodeA-nodeF", plan["why"])

        retest = self.retest_of(rounds, True, "retest.json")
        verdict = self.path("verdict.json")
        again = self.fleet(
            "judge", result, "--retest", retest, "--json", verdict, "--rounds-out", rounds + "2"
        )
        self.assertExit(again, 1)
        self.assertRegex(again.stdout, r"slow host nodeC: \+\d+% \+-\d+% on all 7 of its pairs")
        self.assertRegex(again.stdout, r"slow link nodeA-nodeF: \+\d+% \+-\d+% beyond both")
        self.assertEqual(again.stdout.splitlines()[-1], "drain: nodeC")
        self.assertIn("not written", again.stderr)
        self.assertFalse(os.path.exists(rounds + "2"))
        with open(verdict, encoding="utf-8") as stream:
            document = json.load(stream)
        self.assertEqual(document["format"], "xferbench-fleet-verdict/1")
        self.assertEqual((document["drain"], document["named"]), ("nodeC", True))
        self.assertEqual(
            [s["family"] for s in document["series"]],
            ["mpi_host/mode:pingpong", "mpi_host/mode:stream"],
        )
        self.assertEqual([h["status"] for h in document["series"][0]["hosts"]], ["slow"])

    def test_a_retest_that_finds_the_suspects_healthy_clears_them(self):
        result = self.slow_result(seed=2)
        rounds = self.path("rounds.json")
        self.assertExit(self.fleet_here("judge", result, "--rounds-out", rounds), 3)
        retest = self.retest_of(rounds, False, "retest.json")
        done = self.fleet_here("judge", result, "--retest", retest, "--no-matrix")
        self.assertExit(done, 0)
        self.assertIn("no slow host or link", done.stdout)
        self.assertIn("cleared host nodeC", done.stdout)
        self.assertIn("cleared link nodeA-nodeF", done.stdout)
        self.assertNotIn("  nodeA ", done.stdout)  # --no-matrix
        self.assertEqual(done.stdout.splitlines()[-1], "drain: (none)")

    def test_a_healthy_fleet_names_nothing(self):
        result = write_json(self.path("healthy.json"), Model(seed=3).result())
        done = self.fleet_here("judge", result)
        self.assertExit(done, 0)
        self.assertIn("  no slow host or link", done.stdout)
        self.assertNotIn("suspect host", done.stdout)
        self.assertNotIn("suspect link", done.stdout)
        self.assertIn("repeatability (passes 0 and 1 fitted apart): 100% of hosts", done.stdout)

    def test_two_hosts_cannot_tell_a_host_from_a_link(self):
        model = Model(hosts=["nodeA", "nodeB"], seed=4, slow_host=0)
        done = self.fleet_here("judge", write_json(self.path("two.json"), model.result()))
        self.assertExit(done, 0)
        self.assertIn("a slow host cannot be told from a slow link; none named", done.stdout)

    def test_an_unfinished_schedule_is_not_a_final_verdict(self):
        document = Model(seed=5).result(passes=1)
        document["fleet"]["lost"] = [6]
        document["fleet"]["incomplete"] = "rank 6 lost in round 5"
        document["fleet"]["rounds"]["measured"] = 5
        done = self.fleet_here("judge", write_json(self.path("cut.json"), document))
        self.assertExit(done, 3)
        self.assertIn("not judged: lost nodeG", done.stdout)
        self.assertIn("not finished: incomplete: rank 6 lost in round 5", done.stdout)
        self.assertIn("not finished: 5 of 7 rounds measured", done.stdout)

    def test_bad_files_exit_2_naming_the_file(self):
        garbled = self.path("garbled.json")
        with open(garbled, "w") as stream:
            stream.write('{"fleet": {"format": ')
        done = self.fleet("judge", garbled)
        self.assertExit(done, 2)
        self.assertIn(f"{garbled}: not JSON", done.stderr)
        result = self.slow_result()
        other = Model(hosts=HOSTS[:7] + ["nodeZ"], seed=1).retest({"rounds": [[[0, 1]]]})
        done = self.fleet("judge", result, "--retest", write_json(self.path("other.json"), other))
        self.assertExit(done, 2)
        self.assertIn("other.json: its hosts differ from", done.stderr)
        self.assertIn("nodeZ", done.stderr)

    def test_a_bad_topology_exits_2_naming_the_file_and_line(self):
        result = self.slow_result()
        topology = self.path("topology.conf")
        with open(topology, "w") as stream:
            stream.write("SwitchName=s1 Nodes=nodeA,nodeB\nSwitchName=s2 Nodes=node[A-B]\n")
        done = self.fleet("judge", result, "--topology", topology)
        self.assertExit(done, 2)
        self.assertIn(f"{topology}:2", done.stderr)
        done = self.fleet("judge", result, "--topology", self.path("none.conf"))
        self.assertExit(done, 2)
        self.assertIn("none.conf", done.stderr)

    def test_a_topology_keeps_the_verdict_of_slow_hosts_and_links(self):
        result = self.slow_result()
        topology = self.path("topology.conf")
        with open(topology, "w") as stream:
            stream.write("SwitchName=s0 Nodes=nodeA,nodeB,nodeC,nodeD\n")
            stream.write("SwitchName=s1 Nodes=nodeE,nodeF,nodeG,nodeH\n")
            stream.write("SwitchName=spine Switches=s[0-1]\n")
        plain = self.fleet("judge", result, "--no-retest-required")
        topo = self.fleet("judge", result, "--no-retest-required", "--topology", topology)
        self.assertExit(topo, 1)
        self.assertIn("slow host nodeC", topo.stdout)
        self.assertIn("slow link nodeA-nodeF", topo.stdout)
        self.assertIn("drain: nodeC", topo.stdout)
        self.assertIn("path between switches s0 (nodeA,nodeB,nodeC,nodeD)", topo.stdout)
        self.assertIn("not slow", topo.stdout)
        self.assertNotIn("between switches", plain.stdout)

    def test_what_the_checks_refuse_is_named(self):
        result = self.slow_result()
        good = Model(seed=1).result()
        cases = {
            "no 'fleet' object": {"benchmarks": []},
            "fleet.format is 'xferbench-fleet/0', expected xferbench-fleet/1": {
                "fleet": dict(good["fleet"], format="xferbench-fleet/0")
            },
            "fleet.series[1].time_us: 27 values, expected 28": {
                "fleet": dict(
                    good["fleet"],
                    series=[
                        good["fleet"]["series"][0],
                        dict(good["fleet"]["series"][1], time_us=[1.0] * 27),
                    ],
                )
            },
            "fleet.host_of: expected 8 indices": {"fleet": dict(good["fleet"], host_of=[0] * 7)},
            "not a positive time": {
                "fleet": dict(
                    good["fleet"],
                    series=[dict(good["fleet"]["series"][0], time_us=[-1.0] * 28)],
                )
            },
        }
        for text, document in cases.items():
            path = write_json(self.path("bad.json"), document)
            with self.subTest(text), self.assertRaises(InputError) as caught:
                fleet_report.combined(path, [])
            self.assertIn(path, str(caught.exception))
            self.assertIn(text, str(caught.exception))
        fewer = Model(hosts=HOSTS[:6], seed=1).retest({"rounds": [[[0, 1]]]})
        with self.assertRaises(InputError) as caught:
            fleet_report.combined(result, [write_json(self.path("six.json"), fewer)])
        self.assertIn("six.json: 6 ranks, but", str(caught.exception))
        with self.assertRaises(InputError) as caught:
            fleet_report.combined(self.path("missing.json"), [])
        self.assertIn("missing.json: no such file", str(caught.exception))


class Rounds(unittest.TestCase):
    def test_pairs_are_merged_into_disjoint_rounds_once_each(self):
        rounds = fleet_report.merge_rounds([[(0, 5), (1, 2), (0, 2)], [(2, 3), (5, 0), (4, 6)]])
        self.assertEqual(rounds, [[[0, 5], [1, 2], [4, 6]], [[0, 2]], [[2, 3]]])


class Run(FleetTestCase):
    def launch(self, **spec):
        spec.setdefault("hosts", HOSTS)
        spec.setdefault("seed", 11)
        model = write_json(self.path("model.json"), spec)
        return [sys.executable, os.path.abspath(__file__), "fake-xferbench", model]

    def test_a_fleet_run_retests_its_suspects_and_names_them(self):
        out = self.path("out")
        launch = self.launch(slow_host=SLOW_HOST, slow_link=list(SLOW_LINK))
        done = self.fleet("run", "--out", out, "--no-matrix", "--", *launch)
        self.assertExit(done, 1)
        self.assertIn(f"--xfer_fleet=2 --benchmark_out={out}/fleet.json", done.stderr)
        self.assertIn(f"--xfer_fleet_rounds={out}/retest-rounds.json", done.stderr)
        self.assertEqual(done.stdout.splitlines()[-1], "drain: nodeC")
        self.assertEqual(
            sorted(os.listdir(out)),
            [
                "fleet.json",
                "fleet.log",
                "retest-rounds.json",
                "retest.json",
                "retest.log",
                "verdict.json",
            ],
        )

    def test_a_healthy_fleet_needs_no_retest(self):
        out = self.path("out")
        done = self.fleet("run", "--out", out, "--passes", "1", "--", *self.launch())
        self.assertExit(done, 0)
        self.assertEqual(sorted(os.listdir(out)), ["fleet.json", "fleet.log", "verdict.json"])

    def test_a_failed_launch_is_reported_and_what_it_measured_judged(self):
        nothing = self.fleet("run", "--out", self.path("a"), "--", *self.launch(exit=2))
        self.assertExit(nothing, 4)
        self.assertIn("the launch exited 2", nothing.stderr)
        self.assertIn("nothing to judge", nothing.stderr)
        part = self.fleet("run", "--out", self.path("b"), "--", *self.launch(exit=1, partial=1))
        self.assertExit(part, 3)
        self.assertIn("the launch exited 1", part.stderr)
        self.assertIn("not finished: the launch exited 1", part.stdout)
        self.assertIn("not finished: incomplete: rank 3 lost in round 4", part.stdout)
        self.assertTrue(os.path.isfile(self.path("b/verdict.json")))

    def test_a_host_the_launcher_lost_is_named_and_left_unjudged(self):
        said = (
            "mpirun noticed that process rank 3 with PID 4242 on node nodeD exited on signal 9 "
            "(Killed)."
        )
        out = self.path("c")
        done = self.fleet("run", "--out", out, "--", *self.launch(exit=137, partial=1, said=said))
        self.assertExit(done, 3)
        self.assertIn(said, done.stderr)  # the launch's output passes through
        self.assertIn("the launcher lost nodeD", done.stdout)
        self.assertIn("not judged: lost nodeD", done.stdout)
        with open(os.path.join(out, "verdict.json"), encoding="utf-8") as f:
            verdict = json.load(f)
        self.assertTrue(all(s["not_judged"]["lost"] == ["nodeD"] for s in verdict["series"]))
        with open(os.path.join(out, "fleet.log"), encoding="utf-8") as f:
            self.assertIn(said, f.read())

    def test_the_flags_fleet_run_sets_itself_are_refused(self):
        done = self.fleet("run", "--", "xferbench", "--benchmark_out=x.json")
        self.assertExit(done, 2)
        self.assertIn("--benchmark_out is fleet run's own choice", done.stderr)

    def test_help_of_each_command_shows_it_and_exits_0(self):
        for command in ("judge", "run"):
            done = self.fleet(command, "--help")
            self.assertExit(done, 0)
            self.assertTrue(done.stdout.startswith(f"usage: fleet {command} "), done.stdout)
            self.assertNotIn("%%", done.stdout)
        refused = self.fleet("run")
        self.assertExit(refused, 2)
        self.assertIn("give the launch command after --", refused.stderr)

    def test_ctrl_c_passes_to_the_launch_and_keeps_its_file(self):
        out, ready = self.path("out"), self.path("ready")
        command = [sys.executable, FLEET, "run", "--out", out, "--"]
        command += self.launch(stall=ready)
        with subprocess.Popen(
            command, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as tool:
            deadline = time.monotonic() + 60
            while not os.path.exists(ready) and tool.poll() is None:
                self.assertLess(time.monotonic(), deadline, "the launch never stalled")
                time.sleep(0.05)
            tool.send_signal(signal.SIGINT)
            _, err = tool.communicate(timeout=60)
        self.assertEqual(tool.returncode, 130, err)
        self.assertIn("interrupted by SIGINT", err)
        self.assertTrue(os.path.isfile(os.path.join(out, "fleet.json")))
        self.assertNotIn("Traceback", err)


@unittest.skipUnless(HAVE_MATPLOTLIB, f"matplotlib not importable by {sys.executable}")
class Heatmap(FleetTestCase):
    def test_plot_draws_each_series_as_a_heatmap_with_the_verdict(self):
        document = Model(seed=1, slow_host=SLOW_HOST, slow_link=SLOW_LINK).result()
        document["fleet"]["series"][0]["time_us"][3] = None  # a pair not measured
        result = write_json(self.path("fleet.json"), document)
        verdict = self.path("verdict.json")
        judgement = fleet_report.judge_all(document)  # as fleet judge --json writes it
        write_json(verdict, fleet_report.verdict_document(judgement))
        done = self.tool(PLOT, result, "--verdict", verdict, "-o", "fleet.png")
        self.assertExit(done, 0)
        with open(self.path("fleet.png"), "rb") as stream:
            self.assertEqual(stream.read(8), PNG_SIGNATURE)
        self.assertGreater(os.path.getsize(self.path("fleet.png")), 10_000)
        done = self.tool(PLOT, result, "--fleet", "-o", "fleet.svg")  # no verdict
        self.assertExit(done, 0)
        with open(self.path("fleet.svg"), encoding="utf-8") as stream:
            self.assertIn("<svg", stream.read())
        with self.assertRaises(InputError) as caught:  # plot.py: exit 2 and this line
            fleet_report.heatmaps(result, result)
        self.assertIn(f"--verdict {result}: not a tools/fleet verdict", str(caught.exception))


if __name__ == "__main__":
    if sys.argv[1:2] == ["fake-xferbench"]:
        sys.exit(fake_xferbench(sys.argv[2], sys.argv[3:]))
    unittest.main()
