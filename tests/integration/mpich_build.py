"""xferbench built against MPICH, for the tests that launch it with MPICH's mpiexec (hydra).

The main build uses the system's default MPI (Open MPI on Debian); build() configures and builds a
second, CPU-only xferbench with MPICH's compiler wrappers into BUILD, beside the main build (about
15-60 s the first time, an up-to-date check after), holding a lock so that two tests never build
it at once. Without MPICH (Debian: libmpich-dev mpich) it raises unavailable(); with
XFER_EXPECT_MPICH=1 (tools/test sets it as root, where it installs them) that is a failure.
"""

import fcntl
import os
import subprocess
import tempfile

from xfer_testlib import XFERBENCH, cannot_run, programs

SOURCE = os.environ.get("XFER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(os.path.dirname(XFERBENCH) or tempfile.gettempdir(), "mpich-xferbench")


def unavailable(reason):
    return cannot_run("XFER_EXPECT_MPICH", "the MPICH test", reason)


def build():
    """(MPICH's mpiexec, the xferbench built against MPICH)."""
    tools = programs(
        ("mpicc.mpich", "mpicxx.mpich", "mpiexec.mpich"), "libmpich-dev mpich", unavailable
    )
    configure = [
        "cmake",
        "-S",
        SOURCE,
        "-B",
        BUILD,
        "-DCMAKE_BUILD_TYPE=Release",
        "-DXFER_WITH_CUDA=OFF",
        "-DXFER_WITH_NCCL=OFF",
        "-DXFER_BUILD_TESTS=OFF",
        "-DMPI_C_COMPILER=" + tools["mpicc.mpich"],
        "-DMPI_CXX_COMPILER=" + tools["mpicxx.mpich"],
        "-DMPIEXEC_EXECUTABLE=" + tools["mpiexec.mpich"],
    ]
    compile_ = ["cmake", "--build", BUILD, "-j", str(os.cpu_count() or 2), "--target", "xferbench"]
    os.makedirs(BUILD, exist_ok=True)
    with open(BUILD + ".lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        configured = os.path.exists(os.path.join(BUILD, "CMakeCache.txt"))
        for command in [compile_] if configured else [configure, compile_]:
            proc = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            if proc.returncode != 0:
                raise AssertionError(
                    f"{' '.join(command)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
                )
    return tools["mpiexec.mpich"], os.path.join(BUILD, "xferbench")


def mpich_env(extra=None):
    """The test's environment less an Open MPI launcher's or Slurm's variables, which would
    confuse MPICH's ranks."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OMPI_", "PMIX_", "PMI_", "SLURM_"))
    }
    env.update(extra or {})
    return env
