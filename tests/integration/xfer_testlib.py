"""Runs the real xferbench binary under the MPI launcher, for the integration tests.

ctest provides XFERBENCH (the binary), XFER_MPIRUN (launcher prefix ending in the rank-count
flag) and PLAIN_PINGPONG. Every run has a timeout: a hang fails the test, it never stalls CI.
"""

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import unittest

XFERBENCH = os.environ.get("XFERBENCH", "xferbench")
MPIRUN = shlex.split(os.environ.get("XFER_MPIRUN", "mpirun --oversubscribe -np"))
# Small and quick: the tests check behaviour, not speed.
QUICK = ["--xfer_sizes=8,4K,256K", "--benchmark_min_time=0.01"]
# Open MPI's mpirun refuses root unless told; CI runs as root.
OPENMPI_AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def launch(ranks, args, timeout=240, env=None):
    """Runs xferbench on `ranks` ranks (0: without the launcher) and returns the result."""
    command = ([XFERBENCH] if ranks == 0 else MPIRUN + [str(ranks), XFERBENCH]) + list(args)
    full_env = dict(OPENMPI_AS_ROOT, **os.environ)
    full_env.update(env or {})
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        env=full_env,
        check=False,
    )


def launch_json(ranks, args, timeout=240):
    """Runs with --benchmark_out and returns (process, parsed result document)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        proc = launch(ranks, list(args) + ["--benchmark_out=" + out], timeout)
        document = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as f:
                document = json.load(f)
        leftovers = sorted(set(os.listdir(tmp)) - {"run.json"})
        proc.leftover_files = leftovers
        return proc, document


def rows(document, run_type="iteration"):
    return [b for b in document["benchmarks"] if b.get("run_type") == run_type]


def failed(row):
    return bool(row.get("error_occurred")) or row.get("skipped") is True


def assert_cut_short(test, document, output=None, out=None, prefix=""):
    """A run cut short kept its finished rows, each valid, and says it is incomplete; with
    `output`, rank 0 said so there too (each of its lines after `prefix`: srun --label's "0: ")."""
    kept = rows(document)
    test.assertGreaterEqual(len(kept), 1, document)
    test.assertFalse(any(failed(r) for r in kept), kept)
    incomplete = document["context"]["xferbench"]["incomplete"]
    test.assertIsNotNone(incomplete, "a run cut short is marked incomplete")
    test.assertEqual(incomplete["rows"], len(kept))
    if output is not None:
        test.assertIn(
            f"{prefix}xferbench: the run did not finish; the {len(kept)} row(s) measured "
            f"so far are in {out}",
            output,
        )


def assert_kept_from_round_one(test, document, visits=3):
    """A run of `visits` visits a row, broken in its first round (before any row was finished),
    kept each row visited once, saying so, and listed the rest as not measured."""
    incomplete = document["context"]["xferbench"]["incomplete"]
    test.assertEqual((incomplete["round"], incomplete["rounds"]), (1, visits), incomplete)
    test.assertTrue(incomplete["not_measured"], incomplete)
    for row in rows(document):
        test.assertEqual((row["visits"], row["visits_planned"]), (1, visits), row)


def programs(names, packages, unavailable, path=None):
    """{name: path} of the programs `names` (looked up in `path`, default PATH), or raises
    unavailable() naming those missing and the Debian `packages` that have them."""
    found = {name: shutil.which(name, path=path) for name in names}
    missing = [name for name, where in found.items() if not where]
    if missing:
        raise unavailable(
            "not installed: " + ", ".join(missing) + f" (Debian: apt-get install {packages})"
        )
    return found


def cannot_run(variable, what, reason):
    """What a test raises when `what` cannot run here: a skip, or a failure where the environment
    says this machine must run it (`variable`=1; tools/test sets them as root, tools/gpu-session
    XFER_EXPECT_GPU), so a CI run that silently lost a test cannot pass as green."""
    if os.environ.get(variable) == "1":
        return AssertionError(f"{variable}=1 but {what} cannot run: {reason}")
    return unittest.SkipTest(reason)


def no_gpu(reason):
    """What a GPU test raises when the GPU paths cannot run here (XFER_EXPECT_GPU=1: a failure)."""
    return cannot_run("XFER_EXPECT_GPU", "the GPU paths", reason)
