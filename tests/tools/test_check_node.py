"""tools/check-node: a node passes when every measured path reaches its link's share, fails
naming the rows and links that do not, and refuses bad input with status 2. Judged here on
result files (--from) shaped as a GPU run writes them (docs/links.md); on a machine without a
GPU the run itself crosses no known link, which is a failure, not a pass."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from toollib import TOOLS, iteration_row

CHECK_NODE = os.path.join(TOOLS, "check-node")
SEQ = "host_staging/host:pinned/mode:sequential/pair:0to0"
PIPE = "host_staging/host:pinned/mode:pipelined/pair:0to0"
PEER = "memcpy_peer/p2p:on/dir:uni/pair:0to1"


def link_document(shares, downtrained=(), peer_off=(), machine="NVIDIA H200"):
    """A result as a GPU run writes it: rows at 256 MiB, {family: share}, on the H200's links."""
    pcie = "pcie:0000:00:06.0"
    nvlink = "nvlink:0000:00:06.0>0000:00:07.0"
    routes = {
        SEQ: ([pcie, pcie], 31.5, "serial"),
        PIPE: ([pcie, pcie], 63.0, "overlapped"),
        PEER: ([nvlink], 478.1, "serial"),
    }
    rows = []
    for family, share in shares.items():
        ceiling = routes[family][1]
        gbps = share * ceiling
        rows.append(
            iteration_row(
                family + "/bytes:268435456/manual_time",
                268435456 / gbps / 1e3,
                **{"GB/s": gbps, "link_gbps": ceiling, "pct_of_link": share * 100},
            )
        )
    links = {
        "nvml": True,
        "links": [
            {"id": pcie, "kind": "PCIe", "gbps": 63.0, "max_gbps": 63.0},
            {"id": nvlink, "kind": "NVLink", "gbps": 478.1, "max_gbps": 478.1},
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

    def test_a_healthy_node_passes(self):
        # The shares measured on 2x H200 (docs/links.md): 88%, 80%, 82%.
        result = self.check(link_document({SEQ: 0.88, PIPE: 0.80, PEER: 0.82}))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("ok: 3 row(s)", result.stdout)

    def test_a_row_short_of_its_share_is_named_with_its_link(self):
        result = self.check(link_document({SEQ: 0.88, PIPE: 0.40, PEER: 0.82}))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn(PIPE + "/bytes:268435456", result.stdout)
        self.assertIn("25.2 GB/s is 40% of its link (PCIe, 63.0 GB/s); wanted 70%", result.stdout)
        self.assertNotIn(SEQ, result.stdout)

    def test_help_lists_each_share_with_its_default(self):
        result = self.run_tool("--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("--pcie-share S", result.stdout)
        self.assertIn("(default 70%, provisional)", " ".join(result.stdout.split()))

    def test_the_shares_are_flags(self):
        document = link_document({SEQ: 0.88, PIPE: 0.40, PEER: 0.65})
        self.assertEqual(
            self.check(document, "--pcie-share=35%", "--nvlink-share=0.6").returncode, 0
        )
        result = self.check(document, "--pcie-share=35%")
        self.assertEqual(result.returncode, 1)
        self.assertIn("(NVLink, 478.1 GB/s); wanted 70%", result.stdout)

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
        self.assertIn("no row crossed a known link", result.stdout)

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
