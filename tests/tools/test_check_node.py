"""tools/check-node: a node passes when every path meant to fill its link reaches its share,
fails naming the families and links that do not, and refuses bad input with status 2. Judged on
a real full tools/run result of one H200 (tests/fixtures/check-node, a trimmed copy of one of
the 17 runs of docs/results/2026-11-28-h200-plan; docs/results/2026-11-28-check-node-shares
checks all 28 stored runs) and on result files shaped as a GPU run writes them (docs/links.md);
on a machine without a GPU the run itself crosses no known link, which is a failure."""

import copy
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from toollib import TOOLS, iteration_row

CHECK_NODE = os.path.join(TOOLS, "check-node")
FIXTURES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "check-node"
)
# A default tools/run on one H200 (2 ranks on the GPU), 2026-11-28, lease 2, run 1: its context
# without the visits' records, and each family's rows at 8 B and 1 GiB, the pinned ones also at
# 128, 256 and 512 MiB (docs/results/2026-11-28-check-node-shares/shares.py --fixture).
FULL_RUN = os.path.join(FIXTURES, "h200-default-run.json")
# A default tools/run on two H200s joined by NVLink through NVSwitch, 2026-11-28, run 5 of
# docs/results/2026-11-28-h200x2-links (its jobs merged again by the fixed merge), its context
# without the visits' records, each family's rows at 8 B and 1 GiB, the pinned staging and
# p2p:on copies also at 256 and 512 MiB.
TWO_GPU_RUN = os.path.join(FIXTURES, "h200x2-default-run.json")
# Copies at 512 MiB on a healthy H200 (docs/results/2026-11-29-copies, round 1).
COPIES_RUN = os.path.join(FIXTURES, "h200-copies.json")
COPY_FAMILIES = (
    "ce_copy/host:pinned/dir:h2d/gpu:0",
    "ce_copy/host:pinned/dir:d2h/gpu:0",
    "ce_copy/host:pinned/dir:bi/gpu:0",
    "ce_copy/dir:local/gpu:0",
    "sm_copy/host:mapped/dir:h2d/gpu:0",
    "sm_copy/host:mapped/dir:d2h/gpu:0",
    "sm_copy/host:mapped/dir:bi/gpu:0",
    "sm_copy/dir:local/gpu:0",
)
SEQ = "host_staging/host:pinned/mode:sequential/pair:0to0"
PIPE = "host_staging/host:pinned/mode:pipelined/pair:0to0"
PEER = "memcpy_peer/p2p:on/dir:uni/pair:0to1"
PEER_BACK = "memcpy_peer/p2p:on/dir:uni/pair:1to0"
P2P_OFF = "memcpy_peer/p2p:off/dir:uni/pair:0to1"
GIB = 1 << 30
# Each direction of one GPU's PCIe link, by copy engine and by kernel (issue 43). No healthy H200
# share is recorded for them yet: the tests below are on synthetic rows (link_document), never
# on recorded answers, and give the share by flag.
CE_H2D = "ce_copy/host:pinned/dir:h2d/gpu:0"
CE_D2H = "ce_copy/host:pinned/dir:d2h/gpu:0"
SM_H2D = "sm_copy/host:mapped/dir:h2d/gpu:0"
SM_D2H = "sm_copy/host:mapped/dir:d2h/gpu:0"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def slowed(document, family, factor=1.2):
    """The document with `family`'s rows as XFER_TEST_SLOWDOWN=FAMILY:20 makes them: the
    harness times every visit of a matching row 20% longer (support/run/runner.cpp), so the row's
    times are x 1.2 and its GB/s, bytes_per_second and pct_of_link / 1.2 (a 16.7% lower rate:
    milder than 20% lower, so what fails here fails at 20% lower too)."""
    document = copy.deepcopy(document)
    for row in document["benchmarks"]:
        if row["name"].startswith(family + "/bytes:"):
            for key in ("real_time", "latency_us", "median_us", "min_us", "max_us"):
                if key in row:
                    row[key] *= factor
            for key in ("GB/s", "bytes_per_second", "pct_of_link"):
                if key in row:
                    row[key] /= factor
    return document


def link_document(shares, downtrained=(), peer_off=(), machine="NVIDIA H200", size=256 << 20):
    """A result as a GPU run writes it: rows of `size` bytes, {family: share}, on the H200's
    links (two GPUs joined by NVLink for memcpy_peer)."""
    pcie = "pcie:0000:00:06.0"
    pcie_b = "pcie:0000:00:07.0"
    nvlink = "nvlink:0000:00:06.0>0000:00:07.0"
    nvlink_back = "nvlink:0000:00:07.0>0000:00:06.0"
    routes = {
        SEQ: ([pcie, pcie], 31.5, "serial"),
        PIPE: ([pcie, pcie], 63.0, "overlapped"),
        PEER: ([nvlink], 478.1, "serial"),
        PEER_BACK: ([nvlink_back], 478.1, "serial"),
        P2P_OFF: ([pcie, pcie_b], 63.0, "overlapped"),
        CE_H2D: ([pcie], 63.0, "serial"),
        CE_D2H: ([pcie], 63.0, "serial"),
        SM_H2D: ([pcie], 63.0, "serial"),
        SM_D2H: ([pcie], 63.0, "serial"),
    }
    rows = []
    for family, share in shares.items():
        ceiling = routes[family][1]
        gbps = share * ceiling
        rows.append(
            iteration_row(
                f"{family}/bytes:{size}/manual_time",
                size / gbps / 1e3,
                **{"GB/s": gbps, "link_gbps": ceiling, "pct_of_link": share * 100},
            )
        )
    links = {
        "nvml": True,
        "links": [
            {"id": pcie, "kind": "PCIe", "gbps": 63.0, "max_gbps": 63.0},
            {"id": pcie_b, "kind": "PCIe", "gbps": 63.0, "max_gbps": 63.0},
            {"id": nvlink, "kind": "NVLink", "gbps": 478.1, "max_gbps": 478.1},
            {"id": nvlink_back, "kind": "NVLink", "gbps": 478.1, "max_gbps": 478.1},
        ],
        "routes": {f: {"links": i, "join": j, "gbps": g} for f, (i, g, j) in routes.items()},
        "downtrained": list(downtrained),
        "p2p_off_despite_link": list(peer_off),
    }
    context = {
        "cuda": {"devices": [{"index": 0, "name": machine}], "pairs": []},
        "world_size": 1,
        "links": links,
    }
    return {"context": {"num_cpus": 16, "xferbench": context}, "benchmarks": rows}


class CheckNode(unittest.TestCase):
    def check(self, document, *flags):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "run.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(document, f)
            return self.run_tool("--from", path, *flags)

    def run_tool(self, *args):
        return subprocess.run(
            [sys.executable, CHECK_NODE, *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
        )

    def test_a_healthy_full_run_passes(self):
        # A real default tools/run of a healthy H200 (before, 143 FAIL lines here).
        result = self.run_tool("--from", FULL_RUN)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(
            f"ok   {SEQ}: 27.7 GB/s is 87.9% of its link (PCIe: pcie:0000:00:06.0 + "
            "pcie:0000:00:06.0 in turn, 31.5 GB/s) at 1 GiB; wanted 80%",
            result.stdout,
        )
        self.assertIn(f"ok   {PIPE}: 48.6 GB/s is 77.2% of its link", result.stdout)
        self.assertIn("ok: 2 judged families reach their share", result.stdout)
        self.assertNotIn("FAIL", result.stdout)

    def test_a_healthy_two_gpu_full_run_passes_and_each_family_20_percent_slower_fails(self):
        # A real default tools/run of two healthy H200s: before the link fix every large p2p:on
        # row there was a failed row (charged to PCIe), and the merge halved the dir:bi rows.
        result = self.run_tool("--from", TWO_GPU_RUN)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(
            f"ok   {PEER}: 395.9 GB/s is 82.8% of its link (NVLink: "
            "nvlink:0000:00:06.0>0000:00:07.0, 478.1 GB/s) at 1 GiB; wanted 77%",
            result.stdout,
        )
        self.assertIn("ok: 4 judged families reach their share", result.stdout)
        families = (
            PEER,
            "memcpy_peer/p2p:on/dir:bi/pair:0to1",
            "host_staging/host:pinned/mode:sequential/pair:0to1",
            "host_staging/host:pinned/mode:pipelined/pair:0to1",
        )
        for family in families:
            with self.subTest(family=family):
                result = self.check(slowed(load(TWO_GPU_RUN), family))
                self.assertEqual(result.returncode, 1, result.stdout)
                fails = [line for line in result.stdout.splitlines() if "FAIL" in line]
                self.assertTrue(fails[0].startswith(f"check-node: FAIL {family}: "), fails)
                self.assertIn("FAIL 1 of 4 judged families short of its share", fails[-1])

    def test_small_latency_timed_and_pageable_rows_are_not_judged(self):
        document = load(FULL_RUN)
        shares = {r["name"]: r.get("pct_of_link") for r in document["benchmarks"]}
        # The fixture holds what the old check failed: 8-byte rows and pageable rows far below
        # any share of PCIe, with a known link.
        self.assertLess(shares[f"{SEQ}/bytes:8/manual_time"], 1)
        pageable = "host_staging/host:pageable/mode:sequential/timing:latency/pair:0to0"
        self.assertLess(shares[f"{pageable}/bytes:1073741824/manual_time"], 20)
        result = self.check(document)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertNotIn("pageable", result.stdout)
        self.assertNotIn("timing:latency", result.stdout)
        self.assertNotIn(" at 8 B", result.stdout)
        # Below 256 MiB a pinned family is not judged either: alone, 128 MiB judges nothing.
        document["benchmarks"] = [
            r for r in document["benchmarks"] if "bytes:134217728/" in r["name"]
        ]
        result = self.check(document)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("FAIL nothing judged: no row meant to fill its link, from 256", result.stdout)

    def test_a_family_made_20_percent_slower_fails_naming_it(self):
        for family, wanted in ((SEQ, "wanted 80%"), (PIPE, "wanted 67%")):
            with self.subTest(family=family):
                result = self.check(slowed(load(FULL_RUN), family))
                self.assertEqual(result.returncode, 1, result.stdout)
                fails = [line for line in result.stdout.splitlines() if "FAIL" in line]
                self.assertEqual(len(fails), 2, result.stdout)  # the family, then the count
                self.assertTrue(fails[0].startswith(f"check-node: FAIL {family}: "), fails)
                self.assertIn(wanted, fails[0])
                self.assertIn("FAIL 1 of 2 judged families short of its share", fails[1])

    def test_each_pair_is_judged_and_named_with_its_link(self):
        result = self.check(link_document({SEQ: 0.88, PEER: 0.82, PEER_BACK: 0.70}))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(
            f"ok   {PEER}: 392.0 GB/s is 82.0% of its link (NVLink: "
            "nvlink:0000:00:06.0>0000:00:07.0, 478.1 GB/s) at 256 MiB; wanted 77%",
            result.stdout,
        )
        self.assertIn(
            f"FAIL {PEER_BACK}: 334.7 GB/s is 70.0% of its link (NVLink: "
            "nvlink:0000:00:07.0>0000:00:06.0, 478.1 GB/s) at 256 MiB; wanted 77%",
            result.stdout,
        )

    def test_a_family_is_judged_by_its_best_row_from_256_mib(self):
        document = link_document({PIPE: 0.60}, size=256 << 20)
        document["benchmarks"] += link_document({PIPE: 0.76}, size=GIB)["benchmarks"]
        result = self.check(document)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("is 76.0% of its link", result.stdout)
        self.assertIn("at 1 GiB; wanted 67%", result.stdout)

    def test_unknown_links_and_peer_copies_through_the_host_are_not_judged(self):
        document = link_document({SEQ: 0.88, P2P_OFF: 0.30})
        unknown = iteration_row(f"{PIPE}/bytes:{GIB}/manual_time", 1e5, **{"GB/s": 10.7})
        document["benchmarks"].append(unknown)  # no pct_of_link: its link is unknown
        result = self.check(document)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertNotIn("p2p:off", result.stdout)
        self.assertNotIn(PIPE, result.stdout)

    def test_a_family_with_no_measured_share_is_named_not_judged_unless_a_flag_sets_one(self):
        # memcpy_peer over PCIe peer-to-peer (no NVLink): no healthy share measured yet.
        document = link_document({SEQ: 0.88, PEER: 0.50})
        route = document["context"]["xferbench"]["links"]["routes"][PEER]
        route.update(links=["pcie:0000:00:06.0", "pcie:0000:00:07.0"], join="overlapped")
        row = document["benchmarks"][1]
        row.update(**{"GB/s": 31.5, "link_gbps": 63.0})
        result = self.check(document)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("not judged (no share measured for their link", result.stdout)
        self.assertIn(PEER, result.stdout)
        result = self.check(document, "--pcie-share=60%")
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(
            f"FAIL {PEER}: 31.5 GB/s is 50.0% of its link (PCIe: pcie:0000:00:06.0 + "
            "pcie:0000:00:07.0 at once, 63.0 GB/s) at 256 MiB; wanted 60%",
            result.stdout,
        )

    def test_synthetic_each_host_direction_is_judged_on_its_own(self):
        # Synthetic shares: a link that reaches 86% host -> device but 50% device -> host.
        document = link_document({CE_H2D: 0.86, CE_D2H: 0.50, SM_H2D: 0.80, SM_D2H: 0.79})
        result = self.check(document)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(f"ok   {CE_H2D}: 54.2 GB/s is 86.0% of its link", result.stdout)
        self.assertIn(
            f"FAIL {CE_D2H}: 31.5 GB/s is 50.0% of its link (PCIe: pcie:0000:00:06.0, "
            "63.0 GB/s) at 256 MiB; wanted 82%",
            result.stdout,
        )
        self.assertIn(f"ok   {SM_H2D}", result.stdout)
        self.assertIn(f"ok   {SM_D2H}", result.stdout)
        self.assertIn("FAIL 1 of 4 judged families short of its share", result.stdout)
        result = self.check(document, "--pcie-share=45%")  # one share for every PCIe family
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn(f"ok   {CE_D2H}: 31.5 GB/s is 50.0% of its link", result.stdout)

    def test_recorded_copies_pass_and_each_family_20_percent_slower_fails(self):
        # The copies of a healthy H200 as recorded (docs/results/2026-11-29-copies, round 1
        # at 512 MiB): every family reaches its default share; 20% slower, each fails by name.
        result = self.run_tool("--from", COPIES_RUN)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("ok: 8 judged families reach their share", result.stdout)
        for family in COPY_FAMILIES:
            with self.subTest(family=family):
                result = self.check(slowed(load(COPIES_RUN), family))
                self.assertEqual(result.returncode, 1, result.stdout)
                fails = [line for line in result.stdout.splitlines() if "FAIL" in line]
                self.assertTrue(fails[0].startswith(f"check-node: FAIL {family}: "), fails)

    def test_help_lists_each_default_share_with_its_rule(self):
        result = self.run_tool("--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        text = " ".join(result.stdout.split())
        self.assertIn("--pcie-share S", text)
        self.assertIn("a family's lowest healthy share, less 5 points", text)
        self.assertIn("host_staging pinned sequential, PCIe, 1 GPU: 80% (lowest 85.2%", text)
        self.assertIn("memcpy_peer p2p:on uni, NVLink, 2 GPUs: 77% (lowest 82.8%", text)

    def test_the_shares_are_flags(self):
        document = link_document({SEQ: 0.88, PIPE: 0.40, PEER: 0.65})
        self.assertEqual(
            self.check(document, "--pcie-share=35%", "--nvlink-share=0.6").returncode, 0
        )
        result = self.check(document, "--pcie-share=35%")
        self.assertEqual(result.returncode, 1)
        self.assertIn(
            "(NVLink: nvlink:0000:00:06.0>0000:00:07.0, 478.1 GB/s) at 256 MiB; wanted 77%",
            result.stdout,
        )
        result = self.check(document)
        self.assertIn(
            f"FAIL {PIPE}: 25.2 GB/s is 40.0% of its link (PCIe: pcie:0000:00:06.0 "
            "+ pcie:0000:00:06.0 at once, 63.0 GB/s) at 256 MiB; wanted 67%",
            result.stdout,
        )

    def test_downtrained_link_and_peer_access_off_fail_by_name(self):
        document = link_document(
            {SEQ: 0.88},
            downtrained=["pcie:0000:00:06.0"],
            peer_off=[{"src": 0, "dst": 1, "nvlink_count": 18}],
        )
        result = self.check(document)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("downtrained link: pcie:0000:00:06.0", result.stdout)
        self.assertIn("peer access off despite 18 NVLink link(s): GPU 0 -> GPU 1", result.stdout)

    def test_a_failed_row_fails_the_node(self):
        document = link_document({SEQ: 0.88})
        document["benchmarks"].append(
            iteration_row(
                PIPE + "/bytes:268435456/manual_time",
                0,
                error_occurred=True,
                error_message="70.0 GB/s is 111.1% of the line rate ...",
            )
        )
        result = self.check(document)
        self.assertEqual(result.returncode, 1)
        self.assertIn("failed: 70.0 GB/s is 111.1% of the line rate", result.stdout)

    def test_no_known_link_is_no_pass(self):
        document = link_document({SEQ: 0.88})
        del document["context"]["xferbench"]["links"]
        result = self.check(document)
        self.assertEqual(result.returncode, 1)
        self.assertIn("FAIL nothing judged: no row crossed a known link", result.stdout)

    def test_bad_input_is_refused_with_status_2(self):
        for flags, fragment in (
            (["--pcie-share=1.5"], "--pcie-share: must be above 0 and at most 1"),
            (["--nvlink-share=fast"], "--nvlink-share: not a share"),
        ):
            result = self.check(link_document({SEQ: 0.88}), *flags)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(fragment, result.stderr)
        result = self.run_tool("--from", "/nonexistent/run.json")
        self.assertEqual(result.returncode, 2)
        self.assertIn("check-node: error: /nonexistent/run.json", result.stderr)
        result = self.run_tool("--xferbench", "/nonexistent/xferbench")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--xferbench=/nonexistent/xferbench: not an executable", result.stderr)

    def fake_xferbench(self, tmp, body):
        """An executable standing in for xferbench: `body`, Python, given its arguments."""
        path = os.path.join(tmp, "xferbench")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"#!{sys.executable}\nimport json, shutil, sys, time\n{body}\n")
        os.chmod(path, 0o755)
        return path

    def test_its_own_run_covers_every_gpu_pair_at_the_judged_sizes(self):
        with tempfile.TemporaryDirectory() as tmp:
            argv = os.path.join(tmp, "argv.json")
            fake = self.fake_xferbench(
                tmp,
                f"json.dump(sys.argv[1:], open({argv!r}, 'w'))\n"
                "out = [a for a in sys.argv if a.startswith('--benchmark_out=')][0]\n"
                f"shutil.copy({FULL_RUN!r}, out.split('=', 1)[1])",
            )
            out = os.path.join(tmp, "check.json")
            result = self.run_tool("--xferbench", fake, "--out", out, "--args=--xfer_gpus=0:1")
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            self.assertIn("ok: 2 judged families", result.stdout)
            self.assertIn(f"result written to {out}", result.stderr)
            args = load(argv)
        self.assertIn("--xfer_gpus=all", args)
        self.assertIn("--xfer_sizes=256MiB,1GiB", args)
        # The user's own arguments come after the selection's, so theirs win (xferbench takes
        # the last of a repeated flag).
        self.assertGreater(args.index("--xfer_gpus=0:1"), args.index("--xfer_gpus=all"))

    def test_ctrl_c_ends_the_check_with_status_130_and_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            started = os.path.join(tmp, "started")
            fake = self.fake_xferbench(tmp, f"open({started!r}, 'w').close()\ntime.sleep(60)")
            check = subprocess.Popen(
                [sys.executable, CHECK_NODE, "--xferbench", fake, "--out", f"{tmp}/c.json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
            )
            deadline = time.monotonic() + 30
            while not os.path.exists(started) and time.monotonic() < deadline:
                time.sleep(0.05)
            check.send_signal(signal.SIGINT)
            stdout, stderr = check.communicate(timeout=30)
        self.assertEqual(check.returncode, 130, stdout + stderr)
        self.assertIn("check-node: interrupted", stderr)
        self.assertNotIn("Traceback", stderr)

    @unittest.skipUnless(os.environ.get("XFERBENCH"), "needs XFERBENCH (ctest sets it)")
    def test_on_a_machine_without_a_gpu_the_run_checks_nothing_and_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "check.json")
            result = self.run_tool("--xferbench", os.environ["XFERBENCH"], "--out", out)
            if "no row" not in result.stdout:
                self.skipTest("this machine has a GPU: tests/gpu covers it")
            self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
            self.assertTrue(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
