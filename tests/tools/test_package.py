"""The tools (compare.py, plot.py, track) find their package (tools/xfertools) wherever they are
run from: from another folder, through a symbolic link, and where `cmake --install` put them."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_A = os.path.join(ROOT, "tests", "fixtures", "compare", "real_mpi_host_a.json")
RUN_B = os.path.join(ROOT, "tests", "fixtures", "compare", "real_mpi_host_b.json")
ALL_PAIRS = os.path.join(ROOT, "tests", "fixtures", "plot", "memcpy_peer_allpairs_4gpu.json")
BUILD = os.path.dirname(os.environ.get("XFERBENCH", ""))  # ctest says where the build is


class PackageTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def assert_tools_work(self, tools):
        """compare.py and plot.py in the folder tools, run from self.dir, do their job."""
        compare = subprocess.run(
            [sys.executable, os.path.join(tools, "compare.py"), RUN_A, RUN_B],
            cwd=self.dir,
            capture_output=True,
            text=True,
        )
        self.assertIn(compare.returncode, (0, 1), compare.stderr)
        self.assertIn("Judged on time", compare.stdout)
        plot = subprocess.run(
            [sys.executable, os.path.join(tools, "plot.py"), ALL_PAIRS, "--matrix"],
            cwd=self.dir,
            capture_output=True,
            text=True,
        )
        self.assertEqual(plot.returncode, 0, plot.stderr)
        self.assertTrue(plot.stdout.startswith("memcpy_peer p2p:on/dir:uni at 256 MiB"))
        track = subprocess.run(
            [sys.executable, os.path.join(tools, "track"), "export", "--format", "github", RUN_A],
            cwd=self.dir,
            capture_output=True,
            text=True,
        )
        self.assertEqual(track.returncode, 0, track.stderr)
        self.assertEqual(track.stdout.lstrip()[0], "[")

    def test_through_a_symbolic_link_in_another_folder(self):
        links = os.path.join(self.dir, "bin")
        os.mkdir(links)
        for tool in ("compare.py", "plot.py", "track"):
            os.symlink(os.path.join(ROOT, "tools", tool), os.path.join(links, tool))
        self.assert_tools_work(links)

    @unittest.skipUnless(BUILD and shutil.which("cmake"), "needs the build (ctest sets XFERBENCH)")
    def test_after_cmake_install(self):
        prefix = os.path.join(self.dir, "prefix")
        done = subprocess.run(
            ["cmake", "--install", BUILD, "--prefix", prefix], capture_output=True, text=True
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        tools = os.path.join(prefix, "share", "xferbench", "tools")
        self.assertTrue(os.path.isfile(os.path.join(tools, "xfertools", "compare", "report.py")))
        self.assertTrue(os.path.isfile(os.path.join(tools, "xfertools", "VERSION")))
        self.assert_tools_work(tools)


if __name__ == "__main__":
    unittest.main()
