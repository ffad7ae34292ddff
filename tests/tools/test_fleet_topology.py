"""Tests for tools/xfertools/fleet/topology.py: a leaf switch whose uplink is degraded is named as
the leaf, not as its hosts (issue 46, item 4), with and without the fabric's topology.

python3 -m unittest tests/tools/test_fleet_topology.py
"""

import math
import os
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from xfertools.core.files import InputError  # noqa: E402
from xfertools.fleet import model as fleet  # noqa: E402
from xfertools.fleet import topology  # noqa: E402

SLOWER_20 = math.log(1.2)


class FatTree:
    """A simulated fat tree: `leaves` leaf switches of `per_leaf` hosts each, hosts node000,
    node001, ... in leaf order. Pair times are lognormal: log 5 us, plus each host's effect (2%
    spread, clipped at 3% so that no healthy host is a slow one), plus 3% noise a measurement;
    3% of measurements congested (+50%). Pairs across leaves are slower by `oversubscribed`
    (log) with `extra` more noise; a degraded uplink slows every pair leaving its leaf."""

    def __init__(self, seed, leaves=8, per_leaf=32, oversubscribed=0.0, extra=0.0):
        self.rng = np.random.default_rng(seed)
        self.n = leaves * per_leaf
        self.leaf = np.repeat(np.arange(leaves), per_leaf)
        self.names = [f"s{k}" for k in range(leaves)]
        self.hosts = [f"node{i:03d}" for i in range(self.n)]
        self.host = np.clip(self.rng.normal(0, 0.02, self.n), -0.03, 0.03)
        self.across = self.leaf[:, None] != self.leaf[None, :]
        self.oversubscribed, self.extra = oversubscribed, extra

    def ranks(self, leaf):
        return [int(r) for r in np.flatnonzero(self.leaf == leaf)]

    def layers(self, degraded=None, slow=None, passes=2):
        """(passes, N, N) log times; degraded: {leaf: share of its uplink left}, slow: {rank:
        time factor}. Also sets self.planted, the host effects less their median."""
        host = self.host.copy()
        for rank, factor in (slow or {}).items():
            host[rank] += math.log(factor)
        self.planted = host - np.median(host)
        mean = math.log(5.0) + host[:, None] + host[None, :] + self.across * self.oversubscribed
        for leaf, share in (degraded or {}).items():
            leaving = np.outer(self.leaf == leaf, self.leaf != leaf)
            mean = mean + (leaving | leaving.T) * math.log(1 / share)
        out = []
        for _ in range(passes):
            noise = self.rng.normal(0, 0.03, (self.n, self.n))
            noise += self.across * self.rng.normal(0, self.extra, (self.n, self.n))
            noise += (self.rng.random((self.n, self.n)) < 0.03) * math.log(1.5)
            noise = np.triu(noise, 1)
            layer = mean + noise + noise.T
            np.fill_diagonal(layer, np.nan)
            out.append(layer)
        return np.array(out)

    def topology_text(self):
        """The tree as Slurm's topology.conf writes it: one line a leaf, a spine above."""
        lines = ["# simulated fat tree", f"SwitchName=spine Switches=s[0-{len(self.names) - 1}]"]
        for k, name in enumerate(self.names):
            ranks = self.ranks(k)
            lines.append(f"SwitchName={name} Nodes=node[{ranks[0]:03d}-{ranks[-1]:03d}]")
        return "\n".join(lines) + "\n"


def with_uplinks(layers, leaf, names, rounds=None):
    return topology.fit_uplinks(
        layers, leaf, names, fit=fleet.fit, test_hosts=fleet.test_hosts, rounds=rounds
    )


def slow_hosts(f):
    return [int(r) for r in np.flatnonzero(fleet.test_hosts(f.h, f.se_h)["slow"])]


def slow_leaves(up):
    return [up.names[k] for k in np.flatnonzero(up.slow)]


def covers(effect, se, planted):
    return effect - 1.96 * se <= planted <= effect + 1.96 * se


class UplinkModelTest(unittest.TestCase):
    def test_without_uplink_terms_every_host_of_a_degraded_leaf_is_a_slow_host(self):
        tree = FatTree(11)
        f = fleet.fit(tree.layers(degraded={3: 1 / 1.2}))
        self.assertEqual(slow_hosts(f), tree.ranks(3))

    def test_a_degraded_uplink_is_named_as_its_leaf_not_as_its_hosts(self):
        for share in (1 / 1.2, 1 / 2):
            for oversubscribed, extra in ((0.0, 0.0), (math.log(1.05), 0.01), (0.14, 0.03)):
                with self.subTest(share=share, oversubscribed=oversubscribed):
                    tree = FatTree(12, oversubscribed=oversubscribed, extra=extra)
                    f, up = with_uplinks(tree.layers(degraded={3: share}), tree.leaf, tree.names)
                    self.assertEqual(slow_leaves(up), ["s3"])
                    self.assertTrue(covers(up.effect[3], up.se[3], math.log(1 / share)))
                    self.assertEqual(slow_hosts(f), [])
                    hosts = tree.ranks(3)
                    self.assertLess(float(np.max(f.h[hosts])), math.log(1.05))
                    worst = float(np.max(np.abs(f.h - tree.planted)))
                    self.assertLess(worst, 0.015)
                    shown = 100 * math.expm1(up.effect[3])
                    self.assertAlmostEqual(shown, 100 / share - 100, delta=0.5)
                    self.assertEqual(len(up.ranks[3]), 32)
                    self.assertTrue(up.converged)

    def test_a_healthy_tree_names_no_leaf_and_reports_what_pairs_across_share(self):
        for oversubscribed, extra in ((0.0, 0.0), (math.log(1.15), 0.03)):
            with self.subTest(oversubscribed=oversubscribed):
                tree = FatTree(13, oversubscribed=oversubscribed, extra=extra)
                f, up = with_uplinks(tree.layers(), tree.leaf, tree.names)
                self.assertEqual(slow_leaves(up), [])
                self.assertEqual(slow_hosts(f), [])
                self.assertLess(abs(up.cross - oversubscribed), 0.005)
                self.assertLess(up.cross_se, 0.005)
                shown = 100 * math.expm1(up.cross)
                self.assertAlmostEqual(shown, 100 * math.expm1(oversubscribed), delta=0.5)

    def test_a_slow_host_inside_a_degraded_leaf_still_stands_out(self):
        # the whole path a caller takes: topology.conf, the fleet's hosts placed, the fit
        tree = FatTree(14, oversubscribed=math.log(1.05), extra=0.01)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "topology.conf")
            Path(path).write_text(tree.topology_text(), encoding="utf-8")
            leaves = topology.read_topology(path)
        leaf, note = topology.leaf_of(leaves, tree.hosts)
        self.assertIsNone(note)
        self.assertEqual(list(leaves), tree.names)
        layers = tree.layers(degraded={2: 1 / 1.2}, slow={70: 1.2})
        relabels = [fleet.pass_relabel(tree.n, p, 5) for p in (0, 1)]
        rounds = np.array([fleet.round_matrix(tree.n, relabel) for relabel in relabels])
        f, up = with_uplinks(layers, leaf, list(leaves), rounds=rounds)
        self.assertIn(70, tree.ranks(2))
        self.assertEqual(slow_leaves(up), ["s2"])
        self.assertEqual(slow_hosts(f), [70])
        self.assertLess(abs(f.h[70] - tree.planted[70]), 0.015)

    def test_two_leaves_give_one_boundary_effect(self):
        tree = FatTree(15, leaves=2)
        f, up = with_uplinks(tree.layers(degraded={1: 1 / 1.2}), tree.leaf, tree.names)
        b = up.boundary
        self.assertEqual(b["leaves"], ["s0", "s1"])
        self.assertTrue(b["slow"])
        self.assertTrue(covers(b["effect"], b["se"], SLOWER_20))
        self.assertTrue(np.all(np.isnan(up.effect)))
        self.assertEqual(slow_leaves(up), [])
        self.assertEqual(slow_hosts(f), [])
        self.assertAlmostEqual(100 * math.expm1(b["effect"]), 20, delta=1)
        self.assertTrue(any("cannot be told apart" in note for note in up.notes))

        healthy = FatTree(16, leaves=2)
        _, up = with_uplinks(healthy.layers(), healthy.leaf, healthy.names)
        self.assertFalse(up.boundary["slow"])
        self.assertTrue(covers(up.boundary["effect"], up.boundary["se"], 0.0))

    def test_a_leaf_of_one_host_and_ranks_in_no_leaf_get_no_uplink_term(self):
        tree = FatTree(17, oversubscribed=math.log(1.15), extra=0.02)
        layers = tree.layers(degraded={2: 1 / 1.2})
        leaf = tree.leaf.copy()
        leaf[0] = 8  # alone in leaf "lone"
        leaf[1:4] = -1
        f, up = with_uplinks(layers, leaf, tree.names + ["lone"])
        self.assertEqual(slow_leaves(up), ["s2"])
        self.assertFalse(up.estimated[8])
        self.assertTrue(np.isnan(up.effect[8]))
        self.assertTrue(any("lone" in note for note in up.notes))
        self.assertTrue(any("3 ranks in no leaf" in note for note in up.notes))
        # their pairs across carry the cross-leaf term: it is not blamed on them
        self.assertAlmostEqual(up.offset[1, 40], up.cross + up.effect[1], places=3)
        self.assertEqual(slow_hosts(f), [])
        self.assertLess(float(np.max(np.abs(f.h[:4] - tree.planted[:4]))), 0.015)

    def test_an_odd_pair_of_leaves_does_not_move_every_leaf(self):
        # pairs between leaves 1 and 5 slower by 30% (a fault on their path): no leaf named
        # for it, and the degraded leaf still named
        tree = FatTree(19)
        layers = tree.layers(degraded={2: 1 / 1.2})
        between = np.outer(tree.leaf == 1, tree.leaf == 5)
        layers[:, between | between.T] += math.log(1.3)
        _, up = with_uplinks(layers, tree.leaf, tree.names)
        self.assertEqual(slow_leaves(up), ["s2"])
        self.assertLess(float(np.max(np.abs(up.effect[[0, 1, 3, 4, 5, 6, 7]]))), 0.01)
        self.assertTrue(covers(up.effect[2], up.se[2], SLOWER_20))

    def test_the_leaf_of_each_rank_must_name_a_leaf(self):
        tree = FatTree(18, leaves=2, per_leaf=4)
        layers = tree.layers()
        for leaf in (tree.leaf[:-1], np.where(tree.leaf == 1, 2, 0), tree.leaf - 2):
            with self.assertRaises(ValueError):
                with_uplinks(layers, leaf, tree.names)


class BoundaryGroupsTest(unittest.TestCase):
    """Without a topology: the host model's suspects, and the groups among them."""

    def suspects(self, tree, fast_pair=None, **planted):
        layers = tree.layers(**planted)
        if fast_pair:  # a pair twice as fast as its hosts' effects say
            a, b = fast_pair
            layers[:, a, b] = layers[:, b, a] = layers[:, a, b] - math.log(2)
        f = fleet.fit(layers)
        return f, slow_hosts(f)

    def test_a_slowed_leaf_is_found_as_one_group(self):
        tree = FatTree(21)
        f, suspects = self.suspects(tree, degraded={4: 1 / 1.2})
        self.assertEqual(suspects, tree.ranks(4))
        groups = topology.boundary_groups(f, suspects)
        self.assertEqual([g["ranks"] for g in groups], [tree.ranks(4)])
        group = groups[0]
        self.assertLess(abs(group["effect"] - SLOWER_20), 0.02)
        self.assertLess(group["se"], 0.01)
        self.assertLess(abs(group["within"]), 0.02)
        self.assertEqual(group["pairs"], 32 * 31 // 2)
        line = topology.group_line(group, "node[128-159]")
        self.assertRegex(line, r"^slow boundary around 32 hosts node\[128-159\]: \+(19|20|21)% ")
        self.assertIn("none drained", line)

    def test_independent_slow_hosts_form_no_group(self):
        tree = FatTree(22)
        f, suspects = self.suspects(tree, slow={10: 1.2, 20: 1.2, 200: 1.2})
        self.assertEqual(suspects, [10, 20, 200])
        self.assertEqual(topology.boundary_groups(f, suspects), [])

    def test_slow_hosts_beside_and_inside_a_slowed_leaf_stay_hosts(self):
        # host 10 has one fast pair into the leaf: fine with one of its 32, not of the group
        tree = FatTree(23)
        planted = {"degraded": {4: 1 / 1.2}, "slow": {10: 1.2, 130: 1.2}}
        f, suspects = self.suspects(tree, fast_pair=(10, 140), **planted)
        self.assertEqual(suspects, [10] + tree.ranks(4))
        groups = topology.boundary_groups(f, suspects)
        self.assertEqual([g["ranks"] for g in groups], [tree.ranks(4)])
        beyond = dict(zip(groups[0]["ranks"], groups[0]["beyond"]))
        self.assertLess(abs(beyond.pop(130) - SLOWER_20), 0.05)
        self.assertLess(max(abs(x) for x in beyond.values()), 0.05)

    def test_a_group_needs_three_hosts(self):
        tree = FatTree(24)
        f, suspects = self.suspects(tree, degraded={4: 1 / 1.2})
        self.assertEqual(topology.boundary_groups(f, suspects[:2]), [])
        three = topology.boundary_groups(f, suspects[:3])
        self.assertEqual([g["ranks"] for g in three], [suspects[:3]])


class TwoSidesTest(unittest.TestCase):
    """The split found without a topology (two_sides): noise alone always offers some split
    with a contrast, so the call is weighed against shuffles of the same residuals."""

    @staticmethod
    def fleet(rng, n, sigma, boundary=0.0, passes=2):
        side = np.arange(n) < n // 2
        layers = []
        for _ in range(passes):
            y = np.triu(rng.normal(0, sigma, (n, n)), 1)
            y = y + y.T + boundary * (side[:, None] != side[None, :])
            np.fill_diagonal(y, np.nan)
            layers.append(y)
        return np.array(layers)

    def test_noisy_fleets_without_a_boundary_are_rarely_split(self):
        # 8 hosts, 30% noise a pair (the loaded bed of a CI run that named a boundary): before
        # the shuffles, 13 of these 40 fleets were split; at q = 0.05, about 2 may be
        rng = np.random.default_rng(7)
        calls = [topology.two_sides(self.fleet(rng, 8, 0.3)) for _ in range(40)]
        self.assertLessEqual(sum(c is not None for c in calls), 4)
        self.assertTrue(all(c["p"] <= 0.05 for c in calls if c is not None))

    def test_a_boundary_of_30_percent_is_split_along_it(self):
        rng = np.random.default_rng(8)
        for sigma in (0.05, 0.1):
            found = topology.two_sides(self.fleet(rng, 8, sigma, math.log(1.3)))
            self.assertIsNotNone(found, sigma)
            self.assertEqual(found["sides"], [[0, 1, 2, 3], [4, 5, 6, 7]])
            self.assertLessEqual(found["p"], 0.01)


class HostlistTest(unittest.TestCase):
    def test_ranges_padding_and_several_brackets(self):
        cases = {
            "node[001-003,007]": ["node001", "node002", "node003", "node007"],
            "a[1-2]-b[01-02]": ["a1-b01", "a1-b02", "a2-b01", "a2-b02"],
            "n1,gpu07, login": ["n1", "gpu07", "login"],
            "tux[8-10],big[08-10]": ["tux8", "tux9", "tux10", "big08", "big09", "big10"],
            "rack[1-2]n[3]": ["rack1n3", "rack2n3"],
            "": [],
        }
        for text, names in cases.items():
            with self.subTest(text=text):
                self.assertEqual(topology.expand_hostlist(text), names)

    def test_a_malformed_hostlist_is_refused_naming_it(self):
        malformed = ("node[1-", "node[3-1]", "node[a-b]", "node]1[", "n[1[2]]", "a,,b", "n[]")
        for text in malformed + ("n[1-9999999]",):
            with self.subTest(text=text):
                with self.assertRaises(ValueError) as caught:
                    topology.expand_hostlist(text)
                self.assertIn(repr(text), str(caught.exception))


class TopologyFileTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)

    def write(self, text, name="topology.conf"):
        path = os.path.join(self.folder.name, name)
        with open(path, "wb") as f:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)
        return path

    def test_topology_conf(self):
        path = self.write(
            "# three leaves under one spine\n"
            "SwitchName=spine Switches=leaf[1-3]   # the top\n"
            "switchname=leaf1 nodes=node[001-004] linkspeed=100\n"
            "\n"
            "SWITCHNAME=leaf2 NODES=node[005-006],gpu07 \\\n"
            "    LinkSpeed=100\n"
            "SwitchName=leaf3 Nodes=a[1-2]-b[01-02]\n"
        )
        self.assertEqual(
            topology.read_topology(path),
            {
                "leaf1": ["node001", "node002", "node003", "node004"],
                "leaf2": ["node005", "node006", "gpu07"],
                "leaf3": ["a1-b01", "a1-b02", "a2-b01", "a2-b02"],
            },
        )

    def test_scontrol_show_topology(self):
        # scontrol lists the nodes below an upper switch too: that switch is no leaf
        path = self.write(
            "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=tux[0-3]\n"
            "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=tux[4-7]\n"
            "SwitchName=s2 Level=1 LinkSpeed=1 Nodes=tux[0-7] Switches=s[0-1]\n",
            "scontrol.txt",
        )
        leaves = topology.read_topology(path)
        tux = [f"tux{i}" for i in range(8)]
        self.assertEqual(leaves, {"s0": tux[:4], "s1": tux[4:]})

    def test_what_cannot_be_read_is_refused_naming_the_file_and_line(self):
        cases = (
            ("SwitchName=top Switches=s[0-1]\n", ": no leaf switch"),
            (
                "SwitchName=a Nodes=n[1-3]\nSwitchName=b Nodes=n[3-4]\n",
                ":2: host n3 in leaf b and in leaf a (line 1)",
            ),
            ("No topology information available\n", ":1: not a topology line"),
            ("# a comment\nSwitchName=a Nodes=n[3-1]\n", ":2: malformed hostlist 'n[3-1]'"),
            ("Nodes=n[1-2]\n", ":1: no SwitchName="),
            (
                "SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n",
                ":2: switch a named again (first on line 1)",
            ),
            ("BlockName=b1 Nodes=n[1-4]\n", ":1: a block topology"),
            ("SwitchName=a Nodes=\n", ":1: Nodes= is empty"),
            ("SwitchName=a Nodes=n[1-2],n1\n", ":1: host n1 twice in leaf a"),
            (b"SwitchName=a Nodes=n\xff\n", ": cannot read: not UTF-8"),
        )
        for text, message in cases:
            with self.subTest(message=message):
                path = self.write(text)
                with self.assertRaises(InputError) as caught:
                    topology.read_topology(path)
                self.assertIn(path + message, str(caught.exception))
        missing = os.path.join(self.folder.name, "absent.conf")
        unreadable = ((missing, ": no such file"), (self.folder.name, ": not a regular file"))
        for path, message in unreadable:
            with self.assertRaises(InputError) as caught:
                topology.read_topology(path)
            self.assertIn(path + message, str(caught.exception))

    def test_each_host_placed_in_its_leaf(self):
        leaves = {"s0": ["node001", "node002"], "s1": ["node003", "gpu07"], "s2": ["spare"]}
        hosts = ["node002", "node003.cluster.local", "login", "gpu07"]
        leaf, note = topology.leaf_of(leaves, hosts)
        self.assertEqual(list(leaf), [0, 1, -1, 1])
        self.assertEqual(
            note, "1 host in no leaf switch of the topology: login (no uplink term for them)"
        )
        leaf, note = topology.leaf_of(leaves, ["spare", "node001"])
        self.assertEqual((list(leaf), note), ([2, 0], None))


if __name__ == "__main__":
    unittest.main()
