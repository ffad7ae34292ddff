"""xferbench built against MPICH and launched with MPICH's mpiexec (hydra): the same table, file,
pairs and exit statuses as under Open MPI's mpirun.

The main build uses the system's default MPI (Open MPI on Debian); this test configures and
builds a second, CPU-only xferbench with MPICH's compiler wrappers into a temporary directory
(about 15-60 s). Skips without MPICH (Debian: libmpich-dev mpich); with XFER_EXPECT_MPICH=1
(tools/test sets it as root, where it installs them) that is a failure.
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

from xfer_testlib import cannot_run, failed, rows

SOURCE = os.environ.get("XFER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
QUICK = ["--xfer_sizes=8,4K", "--benchmark_min_time=0.01", "--benchmark_color=false"]


def unavailable(reason):
    return cannot_run("XFER_EXPECT_MPICH", "the MPICH test", reason)


class UnderMpichMpiexec(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tools = {name: shutil.which(name) for name in ("mpicc.mpich", "mpicxx.mpich",
                                                       "mpiexec.mpich")}
        missing = [name for name, path in tools.items() if not path]
        if missing:
            raise unavailable("not installed: " + ", ".join(missing) +
                              " (Debian: apt-get install libmpich-dev mpich)")
        cls.mpiexec = tools["mpiexec.mpich"]
        cls._tmp = tempfile.TemporaryDirectory(prefix="xfer-mpich-")
        cls.addClassCleanup(cls._tmp.cleanup)
        build = os.path.join(cls._tmp.name, "build")
        configure = ["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DXFER_WITH_CUDA=OFF", "-DXFER_WITH_NCCL=OFF", "-DXFER_BUILD_TESTS=OFF",
                     "-DMPI_C_COMPILER=" + tools["mpicc.mpich"],
                     "-DMPI_CXX_COMPILER=" + tools["mpicxx.mpich"],
                     "-DMPIEXEC_EXECUTABLE=" + cls.mpiexec]
        for command in (configure, ["cmake", "--build", build, "-j", str(os.cpu_count() or 2),
                                    "--target", "xferbench"]):
            proc = subprocess.run(command, capture_output=True, text=True, timeout=600,
                                  check=False)
            if proc.returncode != 0:
                raise AssertionError(f"{' '.join(command)} failed:\n{proc.stdout[-3000:]}\n"
                                     f"{proc.stderr[-3000:]}")
        cls.binary = os.path.join(build, "xferbench")

    def launch(self, ranks, args, out=None):
        command = [self.mpiexec, "-n", str(ranks), self.binary] + QUICK + list(args)
        if out:
            command.append("--benchmark_out=" + out)
        # An Open MPI launcher's variables would confuse MPICH's ranks; none are set here.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OMPI_", "PMIX_", "PMI_", "SLURM_"))}
        return subprocess.run(command, capture_output=True, text=True, errors="replace",
                              timeout=120, env=env, check=False)

    def test_the_binary_is_built_against_mpich(self):
        proc = subprocess.run([self.binary, "--version"], capture_output=True, text=True,
                              timeout=60, check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("MPICH", proc.stdout)

    def test_two_ranks_one_table_one_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.launch(2, [], out)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertEqual(proc.stdout.count("Benchmark "), 1, proc.stdout)  # rank 0 alone
            self.assertEqual(sorted(os.listdir(tmp)), ["run.json"])
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        names = [r["name"] for r in rows(document)]
        self.assertEqual(names, ["mpi_host/mode:pingpong/bytes:8/manual_time",
                                 "mpi_host/mode:pingpong/bytes:4096/manual_time"])
        self.assertFalse(any(failed(r) for r in rows(document)))
        context = document["context"]["xferbench"]
        self.assertIn("MPICH", context["mpi"]["library"])
        self.assertEqual(context["world_size"], 2)

    def test_four_ranks_in_halves(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run.json")
            proc = self.launch(4, ["--xfer_pairs=halves", "--xfer_modes=stream",
                                   "--xfer_max_time=0.05"], out)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        names = [r["name"] for r in rows(document)]
        self.assertIn("mpi_host/mode:stream/pairs:2/bytes:4096/manual_time", names)
        pairs = document["context"]["xferbench"]["pairs"]
        self.assertEqual([p["ranks"] for p in pairs], [[0, 2], [1, 3]])

    def test_bad_input_is_said_once_with_exit_2(self):
        proc = self.launch(2, ["--xfer_pairs=0:7"])
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(proc.stderr.count("--xfer_pairs"), 1, proc.stderr)


if __name__ == "__main__":
    unittest.main()
