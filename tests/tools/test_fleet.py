"""Tests for tools/xfertools/fleet/model.py: which host, which link (issue 37).

python3 -m unittest discover -s tests/tools -p 'test_fleet.py'
"""

import json
import math
import sys
import unittest
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from xfertools.fleet import model as fleet  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "fleet" / "schedules.json"


class Fleet:
    """A synthetic fleet: per-host log effects, per-link log excess, a residual spread, and
    congestion, measured into a result document's "fleet" object as the C++ would write it."""

    def __init__(self, n, seed, sigma=0.03, host_sd=0.02, congestion=0.0, names=None):
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.names = names or [f"node{i:03d}" for i in range(n)]
        self.host = self.rng.normal(0, host_sd, n)
        self.link = {}
        self.sigma = sigma
        self.congestion = congestion
        self.spike = {}  # (pass, round) -> (log factor, share of its pairs)
        self.seed = seed

    def time(self, a, b, congested=False):
        log_t = math.log(5.0) + self.host[a] + self.host[b] + self.link.get((a, b), 0.0)
        log_t += self.rng.normal(0, self.sigma)
        if congested or self.rng.random() < self.congestion:
            log_t += math.log(1.5)
        return math.exp(log_t)

    def document(self, passes=1):
        series, pass_list = [], []
        for p in range(passes):
            relabel = fleet.pass_relabel(self.n, p, self.seed)
            pass_list.append({"pass": p, "relabel": relabel})
            times = {}
            for r, pairs in enumerate(fleet.schedule(self.n, relabel)):
                factor, share = self.spike.get((p, r), (0.0, 0.0))
                for k, (a, b) in enumerate(pairs):
                    t = self.time(a, b)
                    if k < share * len(pairs):
                        t *= math.exp(factor)
                    times[(a, b)] = t
            upper = [times[pair] for pair in combinations(range(self.n), 2)]
            series.append(
                {"path": "mpi_host", "bytes": 8, "pass": p, "unit": "us", "time_us": upper}
            )
        return {
            "fleet": {
                "format": fleet.FORMAT,
                "ranks": self.n,
                "hosts": self.names,
                "host_of": list(range(self.n)),
                "seed": self.seed,
                "passes": pass_list,
                "series": series,
                "retests": [],
                "lost": [],
            }
        }

    def judged(self, passes=1, retest=True):
        """The verdict after the re-test the first verdict plans (measured afresh)."""
        doc = self.document(passes)
        first = fleet.judge_result(doc)[0]
        if retest and first["retest_rounds"]:
            pairs = [pair for rnd in first["retest_rounds"] for pair in rnd]
            doc["fleet"]["retests"] = [
                {
                    "path": "mpi_host",
                    "bytes": 8,
                    "pairs": pairs,
                    "time_us": [self.time(a, b) for a, b in pairs],
                }
            ]
        return first, fleet.judge_result(doc)[0]


def called(verdict, kind):
    return [x for x in verdict[kind] if x["status"] == "slow"]


class Schedule(unittest.TestCase):
    def check(self, n, rounds):
        m = n if n % 2 == 0 else n + 1
        self.assertEqual(len(rounds), m - 1)
        seen = set()
        for pairs in rounds:
            ranks = [x for pair in pairs for x in pair]
            self.assertEqual(len(ranks), len(set(ranks)), "a rank twice in one round")
            for a, b in pairs:
                self.assertLess(a, b)
                self.assertNotIn((a, b), seen)
                seen.add((a, b))
        self.assertEqual(seen, set(combinations(range(n), 2)))

    def test_every_pair_once_in_disjoint_rounds(self):
        for n in range(2, 18):
            for p in range(3):
                with self.subTest(n=n, p=p):
                    relabel = fleet.pass_relabel(n, p, 99)
                    self.assertEqual(sorted(relabel), list(range(n)))
                    rounds = fleet.schedule(n, relabel)
                    self.check(n, rounds)
                    matrix = fleet.round_matrix(n, relabel)
                    for r, pairs in enumerate(rounds):
                        for a, b in pairs:
                            self.assertEqual(matrix[a, b], r)

    def test_second_pass_puts_other_pairs_together(self):
        first = fleet.schedule(16, fleet.pass_relabel(16, 0, 7))
        second = fleet.schedule(16, fleet.pass_relabel(16, 1, 7))
        together = {frozenset(r) for r in first}
        self.assertFalse(together & {frozenset(r) for r in second})

    def test_fixture_for_the_cpp_matches(self):
        doc = json.loads(FIXTURE.read_text())
        state, outputs = doc["splitmix64_check"]["state"], []
        for _ in doc["splitmix64_check"]["outputs"]:
            state, z = fleet.splitmix64(state)
            outputs.append(str(z))
        self.assertEqual(outputs, doc["splitmix64_check"]["outputs"])
        self.assertEqual({c["n"] for c in doc["cases"]}, {2, 3, 4, 5, 8, 9})
        for case in doc["cases"]:
            relabel = fleet.pass_relabel(case["n"], case["pass"], case["seed"])
            self.assertEqual(relabel, case["relabel"])
            rounds = [[list(p) for p in r] for r in fleet.schedule(case["n"], relabel)]
            self.assertEqual(rounds, case["rounds"])
        self.assertTrue(
            any(c["pass"] == 1 and c["relabel"] != sorted(c["relabel"]) for c in doc["cases"])
        )


class Verdicts(unittest.TestCase):
    def test_a_slow_host_is_named_as_a_host_not_its_links(self):
        f = Fleet(24, seed=1)
        f.host[5] += math.log(1.3)
        _, verdict = f.judged()
        self.assertEqual([h["host"] for h in called(verdict, "hosts")], ["node005"])
        self.assertEqual(called(verdict, "links"), [])
        self.assertEqual(verdict["drain"], "node005")
        line = verdict["lines"][0]
        self.assertTrue(line.startswith("slow host node005: +"), line)
        self.assertIn("on all 23 of its pairs", line)
        effect = verdict["hosts"][0]
        self.assertLess(effect["ci95_pct"][0], 30 + 100 * f.host[5] - 100 * math.log(1.3) + 8)

    def test_a_slow_pair_is_a_link_and_not_blamed_on_its_hosts(self):
        f = Fleet(24, seed=2)
        f.link[(3, 17)] = math.log(2.0)
        _, verdict = f.judged()
        self.assertEqual([x["link"] for x in called(verdict, "links")], ["node003-node017"])
        self.assertEqual(called(verdict, "hosts"), [])
        self.assertEqual(verdict["drain"], "")
        self.assertTrue(any(x.startswith("slow link node003-node017: +") for x in verdict["lines"]))

    def test_a_healthy_noisy_fleet_names_nothing(self):
        for seed in range(4):
            f = Fleet(32, seed=10 + seed, sigma=0.05, host_sd=0.02, congestion=0.02)
            first, verdict = f.judged(passes=2)
            with self.subTest(seed=seed):
                self.assertEqual(called(verdict, "hosts"), [])
                self.assertEqual(called(verdict, "links"), [])
                self.assertEqual(verdict["lines"], ["no slow host or link"])
                self.assertIn("repeatability", verdict)

    def test_a_fast_host_does_not_make_healthy_hosts_look_slow(self):
        without = Fleet(20, seed=4).judged(retest=False)[0]
        f = Fleet(20, seed=4)
        f.host[0] -= math.log(2.0)  # one host twice as fast as the rest
        first, verdict = f.judged()
        # the screen's suspects (healthy hosts in the top of their 2% spread): no more with the
        # fast host than without it, and the re-test calls none of them
        self.assertLessEqual(set(first["suspects"]["hosts"]), set(without["suspects"]["hosts"]))
        self.assertEqual(called(verdict, "hosts"), [])
        effects = [v["effect_pct"] for k, v in verdict["host_effects"].items() if k != "node000"]
        self.assertLess(abs(float(np.median(effects))), 1.0)
        self.assertLess(verdict["host_effects"]["node000"]["effect_pct"], -40)

    def test_two_ranks_cannot_tell_hosts_from_links(self):
        f = Fleet(2, seed=4)
        f.host[0] += 1.0
        _, verdict = f.judged()
        self.assertEqual(verdict["hosts"], [])
        self.assertEqual(verdict["links"], [])
        self.assertIn("cannot be told from a slow link", verdict["lines"][0])

    def test_a_congestion_spike_in_one_round_is_not_called_after_the_retest(self):
        f = Fleet(24, seed=5)
        f.spike[(0, 4)] = (math.log(1.6), 0.5)  # half of round 4's pairs 60% slower
        first, verdict = f.judged()
        self.assertTrue(first["suspects"]["links"], "the spike should raise suspects")
        self.assertEqual(called(first, "links"), [])  # not called before a re-test
        self.assertEqual(called(verdict, "links"), [])
        self.assertEqual(called(verdict, "hosts"), [])
        self.assertTrue(all(x["status"] == "cleared" for x in verdict["links"]))

    def test_lost_rank_is_said_not_judged(self):
        f = Fleet(12, seed=6)
        doc = f.document()
        doc["fleet"]["lost"] = [4]
        doc["fleet"]["incomplete"] = "rank 4 lost in round 3"
        verdict = fleet.judge_result(doc)[0]
        self.assertEqual(verdict["not_judged"]["lost"], ["node004"])
        self.assertEqual(verdict["not_judged"]["incomplete"], "rank 4 lost in round 3")
        self.assertNotIn("node004", verdict["host_effects"])


class SeveralRanksAHost(unittest.TestCase):
    def test_a_slow_rail_is_one_rank_beyond_its_host(self):
        rng = np.random.default_rng(8)
        hosts, per = 12, 2
        n = hosts * per
        host_of = [r // per for r in range(n)]
        effect = rng.normal(0, 0.02, n)
        effect[7] += math.log(1.4)  # host 3's second rank
        layer = np.full((n, n), np.nan)
        for a, b in combinations(range(n), 2):
            if host_of[a] != host_of[b]:
                layer[a, b] = layer[b, a] = effect[a] + effect[b] + rng.normal(0, 0.03)
        names = [f"gpu{h:02d}/{r % per}" for r, h in enumerate(host_of)]
        series = fleet.Series(
            names=names,
            hosts=[f"gpu{h:02d}" for h in range(hosts)],
            host_of=host_of,
            layers=layer[None],
        )
        verdict = fleet.judge(series, require_retest=False)
        self.assertEqual([x["rank"] for x in verdict["rails"]], ["gpu03/1"])
        self.assertEqual(called(verdict, "hosts"), [])

    def test_four_ranks_a_host_name_the_host_and_the_rail_apart(self):
        for seed in (3, 4):
            rng = np.random.default_rng(seed)
            hosts, per = 16, 4
            n = hosts * per
            host_of = [r // per for r in range(n)]
            effect = rng.normal(0, 0.02, n)
            effect[[8, 9, 10, 11]] += math.log(1.25)  # all of gpu002's ranks
            effect[21] += math.log(1.5)  # one rank of gpu005
            times = [
                None
                if host_of[a] == host_of[b]
                else 5 * math.exp(effect[a] + effect[b] + rng.normal(0, 0.03))
                for a, b in combinations(range(n), 2)
            ]
            doc = {
                "fleet": {
                    "format": fleet.FORMAT,
                    "ranks": n,
                    "hosts": [f"gpu{h:03d}" for h in range(hosts)],
                    "host_of": host_of,
                    "seed": 1,
                    "passes": [{"pass": 0, "relabel": list(range(n))}],
                    "series": [{"path": "mpi_cuda_aware", "bytes": 8, "pass": 0, "time_us": times}],
                }
            }
            verdict = fleet.judge_result(doc, require_retest=False)[0]
            with self.subTest(seed=seed):
                self.assertEqual([h["host"] for h in called(verdict, "hosts")], ["gpu002"])
                self.assertEqual([r["rank"] for r in called(verdict, "rails")], ["gpu005/1"])
                self.assertEqual(called(verdict, "links"), [])
                self.assertEqual(verdict["drain"], "gpu002")


class Reading(unittest.TestCase):
    def test_two_families_of_one_path_are_two_series_with_their_own_retests(self):
        f = Fleet(6, seed=9)
        doc = f.document()
        pingpong = doc["fleet"]["series"][0]
        pingpong["family"] = "mpi_host/mode:pingpong"
        stream = dict(pingpong, family="mpi_host/mode:stream")
        stream["time_us"] = [t / 2 for t in pingpong["time_us"]]
        doc["fleet"]["series"].append(stream)
        doc["fleet"]["retests"] = [
            {"path": "mpi_host", "family": "mpi_host/mode:stream", "bytes": 8, "round": 0,
             "pairs": [[0, 1]], "time_us": [2.0]},
        ]  # fmt: skip
        series = fleet.from_result(doc)
        self.assertEqual(
            [(s.path, s.family) for s in series],
            [("mpi_host", "mpi_host/mode:pingpong"), ("mpi_host", "mpi_host/mode:stream")],
        )
        self.assertEqual(series[0].retests, {})
        self.assertEqual(list(series[1].retests), [(0, 1)])
        self.assertAlmostEqual(
            float(np.nanmedian(series[0].layers - series[1].layers)), math.log(2)
        )
        self.assertEqual(fleet.judge(series[1])["family"], "mpi_host/mode:stream")

    def test_the_rounds_measured_are_read_where_given(self):
        doc = Fleet(6, seed=9).document()
        series = doc["fleet"]["series"][0]
        planned = fleet.round_matrix(6)
        pairs = list(combinations(range(6), 2))
        series["round_of"] = [int(planned[a, b]) for a, b in pairs]
        series["round_of"][0] = 4  # pair (0, 1) measured in round 4, not its planned round
        series["round_of"][1] = -1  # (0, 2): none given, its planned round stands
        rounds = fleet.from_result(doc)[0].rounds[0]
        self.assertEqual((rounds[0, 1], rounds[1, 0]), (4, 4))
        self.assertEqual(rounds[0, 2], planned[0, 2])
        self.assertEqual(rounds[3, 3], -1)


class Hostlists(unittest.TestCase):
    def test_numeric_suffixes_compress_with_padding_kept(self):
        names = ["node001", "node002", "node003", "node007", "nodeA", "gpu9", "gpu10", "gpu11"]
        self.assertEqual(fleet.hostlist(names), "gpu[9-11],node[001-003,007],nodeA")
        self.assertEqual(fleet.hostlist(["nodeC"]), "nodeC")
        self.assertEqual(fleet.hostlist(["n1", "n3"]), "n[1,3]")
        self.assertEqual(fleet.hostlist([]), "")


class Switches(unittest.TestCase):
    """A leaf switch whose uplink is slow: its hosts slow on pairs leaving it, fine inside."""

    LEAVES, SIZE = 4, 16

    def fleet(self, seed, uplink=1.5, slow_host=None):
        fl = Fleet(self.LEAVES * self.SIZE, seed=seed, sigma=0.02, host_sd=0.005)
        leaf = [r // self.SIZE for r in range(fl.n)]
        for a, b in combinations(range(fl.n), 2):
            if (leaf[a] == 2) != (leaf[b] == 2):
                fl.link[(a, b)] = math.log(uplink)
        if slow_host is not None:
            fl.host[slow_host] += math.log(1.2)
        topology = {
            f"sw{k}": fl.names[k * self.SIZE : (k + 1) * self.SIZE] for k in range(self.LEAVES)
        }
        return fl, topology

    def judged(self, fl, **options):
        doc = fl.document(passes=1)
        first = fleet.judge_result(doc, **options)[0]
        pairs = [pair for rnd in first["retest_rounds"] for pair in rnd]
        if pairs:
            times = [fl.time(a, b) for a, b in pairs]
            doc["fleet"]["retests"] = [
                {"path": "mpi_host", "bytes": 8, "pairs": pairs, "time_us": times}
            ]
        return fleet.judge_result(doc, **options)[0]

    def test_a_slow_uplink_is_named_as_its_switch_and_drains_none(self):
        fl, topology = self.fleet(seed=21)
        verdict = self.judged(fl, topology=topology)
        self.assertEqual([e["switch"] for e in verdict["switches"]], ["sw2"])
        entry = verdict["switches"][0]
        self.assertEqual(entry["hosts"], "node[032-047]")
        self.assertLess(entry["ci95_pct"][0], 50)
        self.assertGreater(entry["ci95_pct"][1], 50)
        self.assertEqual(called(verdict, "hosts"), [])
        self.assertEqual(verdict["drain"], "")
        self.assertTrue(
            any(x.startswith("slow uplink of switch sw2 (node[032-047])") for x in verdict["lines"])
        )

    def test_a_slow_host_behind_a_slow_uplink_is_still_named(self):
        fl, topology = self.fleet(seed=22, slow_host=40)
        verdict = self.judged(fl, topology=topology)
        self.assertEqual([e["switch"] for e in verdict["switches"]], ["sw2"])
        self.assertEqual([h["host"] for h in called(verdict, "hosts")], ["node040"])
        self.assertEqual(verdict["drain"], "node040")

    def test_without_a_topology_the_group_is_named_not_its_hosts(self):
        fl, _ = self.fleet(seed=23)
        verdict = self.judged(fl)
        self.assertEqual(len(verdict["switches"]), 1, verdict["lines"])
        self.assertEqual(verdict["switches"][0]["hosts"], "node[032-047]")
        self.assertEqual(called(verdict, "hosts"), [])
        self.assertEqual(verdict["drain"], "")

    def test_two_halves_are_one_boundary_with_or_without_a_topology(self):
        self.LEAVES, self.SIZE = 2, 8
        fl, topology = self.fleet(seed=26)
        for a, b in combinations(range(fl.n), 2):  # every pair across the halves: 1.5x
            fl.link[(a, b)] = math.log(1.5) if (a < 8) != (b < 8) else 0.0
        plain = self.judged(fl)
        self.assertEqual(called(plain, "hosts"), [])
        self.assertEqual(
            [e["sides"] for e in plain["switches"]], [["node[000-007]", "node[008-015]"]]
        )
        self.assertLess(plain["switches"][0]["ci95_pct"][0], 50)
        self.assertGreater(plain["switches"][0]["ci95_pct"][1], 50)
        named = self.judged(fl, topology=topology)
        self.assertEqual([e["switch"] for e in named["switches"]], ["sw0-sw1"])
        self.assertEqual(named["drain"], "")

    def test_a_schedule_cut_short_is_not_split(self):
        """One round of a two-halves fleet measured: too few pairs to tell sides; judged as it
        is, without a boundary and without failing."""
        self.LEAVES, self.SIZE = 2, 8
        fl, _ = self.fleet(seed=27)
        doc = fl.document(passes=1)
        series = doc["fleet"]["series"][0]
        first = set(map(tuple, fleet.schedule(fl.n)[0]))
        pairs = list(combinations(range(fl.n), 2))
        series["time_us"] = [t if p in first else None for p, t in zip(pairs, series["time_us"])]
        verdict = fleet.judge_result(doc)[0]
        self.assertEqual(verdict["switches"], [])

    def test_a_healthy_fabric_names_no_switch(self):
        for seed in (24, 25):
            fl, topology = self.fleet(seed=seed, uplink=1.0)
            with self.subTest(seed=seed):
                verdict = self.judged(fl, topology=topology)
                self.assertEqual(verdict["switches"], [])
                self.assertEqual(self.judged(fl)["switches"], [])


class Retests(unittest.TestCase):
    def test_rounds_are_disjoint_and_cover_each_suspect(self):
        rounds, plan = fleet.retest_rounds([0, 1], [(2, 3), (3, 4)], list(range(5, 12)))
        seen = []
        for pairs in rounds:
            ranks = [x for pair in pairs for x in pair]
            self.assertEqual(len(ranks), len(set(ranks)))
            seen += pairs
        self.assertIn((2, 3), seen)
        self.assertIn((3, 4), seen)
        for host in (0, 1):
            self.assertEqual(len(plan["hosts"][host]), fleet.PARTNERS)
            for pair in plan["hosts"][host]:
                self.assertIn(pair, seen)

    def test_controls_are_pairs_of_passed_hosts_and_no_suspect(self):
        rounds, plan = fleet.retest_rounds([2], [(0, 5)], [0, 1, 3, 4, 5, 6, 7])
        self.assertEqual(len(plan["controls"]), fleet.CONTROLS)
        measured = [pair for pairs in rounds for pair in pairs]
        for a, b in plan["controls"]:
            self.assertNotIn(2, (a, b))
            self.assertNotEqual((a, b), (0, 5))
            self.assertIn((a, b), measured)

    def test_a_retest_job_at_another_level_neither_clears_nor_blames(self):
        """The re-test runs in a job of its own: 15% slower as a whole here (8 B moved 7.6-18%
        between jobs on two H200s). A healthy host suspected by chance must not be called,
        the slow host and link must be; without the controls the job's level would be put on
        every suspect."""
        fl = Fleet(8, seed=5, sigma=0.01, host_sd=0.005)
        fl.host[2] += math.log(1.3)
        fl.link[(0, 5)] = math.log(2.0)
        doc = fl.document(passes=2)
        series = fleet.from_result(doc)[0]
        layers = np.where(np.isfinite(series.layers), series.layers, np.nan)
        f = fleet.fit(layers, series.rounds)
        suspects = [2, 4]  # 4 is healthy: a suspect the re-test must clear
        rounds, plan = fleet.retest_rounds(suspects, [(0, 5)], [0, 1, 3, 5, 6, 7])
        job = math.log(1.15)
        retests = {}
        for pair in (p for rnd in rounds for p in rnd):
            retests[pair] = [math.log(fl.time(*pair)) + job for _ in range(3)]
        hosts, pairs = fleet.confirm(f, retests, suspects, [(0, 5)])
        self.assertTrue(hosts[2][2], hosts)
        self.assertFalse(hosts[4][2], hosts)  # cleared: the job's 15% is not its own
        self.assertAlmostEqual(math.expm1(hosts[4][0]), 0, delta=0.04)
        self.assertTrue(pairs[(0, 5)][2], pairs)
        without = {k: v for k, v in retests.items() if k not in plan["controls"]}
        hosts_blind, _ = fleet.confirm(f, without, suspects, [(0, 5)])
        self.assertTrue(hosts_blind[4][2], "without the controls the job level blames host 4")


if __name__ == "__main__":
    unittest.main()
