"""Which host, which link, on a test bed of 8 hosts (fleet_bed.py): `tools/fleet run` over
xferbench --xfer_fleet names the host whose link tc slowed as a slow host and the pair a tc
filter slowed as a slow link, and on the bed unslowed names nothing; under Open MPI's mpirun,
MPICH's mpiexec and Slurm's srun. Each case is bounded (fleet_bed.BOUND_S).
"""

import json
import os
import subprocess
import tempfile
import time
import unittest

import fleet_bed
from fleet_bed import BOUND_S, SLOW_HOST, SLOW_LINK, named, run_case, shape
from mpich_build import build, mpich_env
from testbed import OPENMPI_MCA, Testbed, require_open_mpi
from xfer_testlib import MPIRUN, XFERBENCH

LINK = "-".join(SLOW_LINK)


class FleetCases:
    """The two cases; a subclass gives launch() and the bed."""

    NOISE_PCT = 10  # the residual spread up to which the slowed case must name both

    def check(self, slowed, seed):
        shape(self.bed, slowed)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "fleet")
            proc, verdict, wall = self.launch(out, seed)
            said = f"exit {proc.returncode} after {wall:.1f} s\n{proc.stdout}\n{proc.stderr}"
            print(f"{type(self).__name__} slowed={slowed}: {wall:.1f} s", flush=True)
            self.assertIsNotNone(verdict, said)
            hosts, links = named(verdict)
            sigma = max(series.get("sigma_pct", 0) for series in verdict["series"])
            if slowed and sigma > self.NOISE_PCT:
                # Blame nothing wrongly, whatever the noise; name the right ones where the bed's
                # noise lets a 30% host and a 2x link stand out (test_visits does the same).
                self.assertTrue(hosts <= {SLOW_HOST} and links <= {LINK}, said)
                self.assertIn(proc.returncode, (0, 1, 3), said)
                self.skipTest(
                    f"the pairs' spread is {sigma:.0f}% on this bed under this launcher (above "
                    f"{self.NOISE_PCT}%): named {sorted(hosts)} {sorted(links)}, none wrongly"
                )
            if slowed:
                self.assertEqual(proc.returncode, 1, said)  # hosts or links named
                self.assertEqual((hosts, links), ({SLOW_HOST}, {LINK}), said)
                self.assertIn(f"slow host {SLOW_HOST}: +", proc.stdout)
                self.assertIn(f"slow link {LINK}: +", proc.stdout)
                self.assertIn(f"drain: {SLOW_HOST}", proc.stdout)
                # both were re-tested in a second launch before they were called
                self.assertTrue(os.path.exists(os.path.join(out, "retest.json")), said)
                effect = [
                    h["effect_pct"]
                    for s in verdict["series"]
                    for h in s["hosts"]
                    if h["host"] == SLOW_HOST
                ][0]
                self.assertGreater(effect, 15, said)  # 30% slower by tc; its interval is stated
                self.assertLess(effect, 60, said)
            else:
                self.assertEqual(proc.returncode, 0, said)
                self.assertEqual((hosts, links), (set(), set()), said)
                self.assertIn("drain: (none)", proc.stdout)
            self.assertLess(wall, BOUND_S, said)

    def test_slowed_host_and_link_are_named(self):
        self.check(True, 11)

    def test_unslowed_names_nothing(self):
        self.check(False, 12)


class OnOpenMpi(FleetCases, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_open_mpi(MPIRUN[0])
        cls.bed = Testbed(fleet_bed.HOSTS)
        cls.addClassCleanup(cls.bed.stop)
        cls.bed.start()

    def launch(self, out, seed):
        return run_case(
            lambda argv: self.bed.on("nodeA", argv),
            fleet_bed.openmpi_launch(self.bed, MPIRUN[0]),
            XFERBENCH,
            out,
            seed,
            self.bed.env(fleet_bed.openmpi_env()),
        )

    def test_a_host_lost_mid_schedule_is_named_and_the_rest_judged(self):
        """nodeE's rank killed once the first round is in the file: mpirun ends the job and
        names the node; tools/fleet keeps what was measured, names nodeE as lost, judges the
        other pairs and says the schedule did not finish (exit 3), within the bound."""
        shape(self.bed, False)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "fleet")
            argv = ["/usr/bin/python3", fleet_bed.FLEET, "run", "--out", out, "--"]
            argv += fleet_bed.openmpi_launch(self.bed, MPIRUN[0]) + [XFERBENCH, "--xfer_seed=13"]
            proc = subprocess.Popen(
                self.bed.on("nodeA", argv + fleet_bed.XFER_ARGS),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                env=self.bed.env(fleet_bed.openmpi_env()),
            )
            try:
                deadline = time.monotonic() + 60
                while not os.path.exists(os.path.join(out, "fleet.json")):
                    self.assertIsNone(proc.poll(), "the launch ended before its first round")
                    self.assertLess(time.monotonic(), deadline, "no round was written")
                    time.sleep(0.05)
                self.assertGreater(self.bed.kill("nodeE", "xferbench"), 0)
                stdout, stderr = proc.communicate(timeout=BOUND_S)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
            said = f"exit {proc.returncode}\n{stdout}\n{stderr}"
            self.assertEqual(proc.returncode, 3, said)  # not final: the schedule did not finish
            self.assertIn("the launcher lost nodeE", stdout)
            self.assertIn("not judged: lost nodeE", stdout)
            with open(os.path.join(out, "verdict.json"), encoding="utf-8") as f:
                verdict = json.load(f)
            self.assertEqual(named(verdict), (set(), set()), said)  # nothing blamed for it
            self.assertEqual(verdict["series"][0]["not_judged"]["lost"], ["nodeE"], said)
            with open(os.path.join(out, "fleet.json"), encoding="utf-8") as f:
                rounds = json.load(f)["context"]["xferbench"]["fleet"]["rounds"]
            self.assertGreaterEqual(rounds["measured"], 1)
            self.assertLess(rounds["measured"], rounds["planned"])


class TwoSwitches(unittest.TestCase):
    """Two leaves of 4 hosts, their bridges joined by one veth (the uplink) at half the leaf's
    bisection (4 x RATE / 2): every pair across is slowed, every pair inside is not. With the
    bed's topology.conf the verdict names the path between the two switches; without it, the
    boundary the fleet shows; either way no host is called slow and none drained."""

    @classmethod
    def setUpClass(cls):
        require_open_mpi(MPIRUN[0])
        cls.bed = Testbed(fleet_bed.HOSTS, switches=2)
        cls.addClassCleanup(cls.bed.stop)
        cls.bed.start()

    def check(self, seed, topology):
        leaf = len(self.bed.leaves[0])
        with tempfile.TemporaryDirectory() as tmp:
            judge = ()
            if topology:
                judge = ("--topology", self.bed.write_topology(os.path.join(tmp, "topo.conf")))
            case = fleet_bed.Case(switches=2, uplink_factor=2 / leaf, judge_args=judge)
            out = os.path.join(tmp, "fleet")
            proc, verdict, wall = fleet_bed.run_bed(self.bed, case, out, seed, MPIRUN[0], XFERBENCH)
            said = f"exit {proc.returncode} after {wall:.1f} s\n{proc.stdout}\n{proc.stderr}"
            self.assertIsNotNone(verdict, said)
            self.assertEqual(proc.returncode, 1, said)  # the uplink is named
            switches = [e for s in verdict["series"] for e in s["switches"]]
            self.assertEqual(len(switches), 1, said)
            self.assertEqual(named(verdict)[0], set(), said)  # no host blamed for it
            self.assertIn("drain: (none)", proc.stdout)
            self.assertLess(wall, BOUND_S, said)
        return switches[0], proc.stdout

    def test_the_path_between_the_switches_is_named_with_the_topology(self):
        entry, text = self.check(21, topology=True)
        self.assertEqual(entry["switch"], "sw0-sw1")
        self.assertIn("slow path between switches sw0 (nodeA,nodeB,nodeC,nodeD)", text)
        self.assertGreater(entry["effect_pct"], 25)

    def test_without_a_topology_the_boundary_is_named_not_the_hosts(self):
        entry, text = self.check(22, topology=False)
        self.assertIsNone(entry["switch"])
        self.assertEqual(
            sorted(entry["sides"]), ["nodeA,nodeB,nodeC,nodeD", "nodeE,nodeF,nodeG,nodeH"]
        )
        self.assertIn("slow boundary around", text)


class OnMpich(FleetCases, unittest.TestCase):
    """MPICH's ranks spin in UCX's progress loop (MPIR_CVAR_POLLS_BEFORE_YIELD does not reach
    it): 8 of them on 2 cores leave a pair's time to the scheduler, a residual spread of 25-40%
    measured here (Open MPI's ranks yield: 1-2%). So under MPICH the slowed case must name
    nothing wrongly and name both only where the spread allows; the unslowed case must name
    nothing. MPI_Finalize over UCX's tcp can hang after every rank has met every other
    (openucx/ucx#8738); xferbench ends it 10 s after the result is written and tools/fleet
    judges the whole schedule it wrote."""

    @classmethod
    def setUpClass(cls):
        cls.bed = Testbed(fleet_bed.HOSTS)
        cls.mpiexec, cls.binary = build()
        cls.addClassCleanup(cls.bed.stop)
        cls.bed.start()

    def launch(self, out, seed):
        return run_case(
            lambda argv: self.bed.on("nodeA", argv),
            fleet_bed.mpich_launch(self.bed, self.mpiexec),
            self.binary,
            out,
            seed,
            self.bed.env(mpich_env({"UCX_TLS": "self,tcp"})),
        )


class OnSlurm(FleetCases, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from slurm_cluster import SlurmClusterOnTestbed

        cls.bed = Testbed(fleet_bed.HOSTS)
        cls.addClassCleanup(cls.bed.stop)
        cls.bed.start()
        cls.cluster = SlurmClusterOnTestbed(cls.bed)
        cls.addClassCleanup(cls.cluster.stop)
        cls.cluster.start()
        cls.cluster.require_pmix()

    def launch(self, out, seed):
        n = str(fleet_bed.HOSTS)
        srun = [self.cluster.programs["srun"], "--mpi=pmix", "--nodes=" + n, "--ntasks=" + n]
        srun += ["--kill-on-bad-exit=1", "--time=2"]
        env = {"OMPI_MCA_" + key: value for key, value in OPENMPI_MCA.items()}
        return run_case(
            lambda argv: self.cluster.on(self.cluster.node, argv),
            srun,
            XFERBENCH,
            out,
            seed,
            self.cluster.env(env),
        )


if __name__ == "__main__":
    unittest.main()
