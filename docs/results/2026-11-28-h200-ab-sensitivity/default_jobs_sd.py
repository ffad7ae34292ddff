#!/usr/bin/env python3
"""Each family's per-job shift sd in default runs (as tools/ab's judgement makes it: noise.fit
over a run's jobs), pooled over a lease's runs, and the smallest slowdown tools/ab would flag
with 80% power in a sitting of 8 minutes of the default selection (normal approximation, 11
families, Benjamini-Hochberg's bar alpha 0.01 / 11, at least the 1% minimum effect).

    default_jobs_sd.py JOBS_PER_SIDE LEASE_JSON_TAR [LEASE_JSON_TAR ...]

A default-selection job costs at least 10.3 s on the H200 (one sample of each of 308 rows, their
set-up, warm-up and checks, and its start), so 8 minutes hold about 20 jobs a side.
"""

import io
import math
import os
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import repo_tools  # noqa: E402,F401
from scipy import stats  # noqa: E402
from xfertools.compare import replicates  # noqa: E402
from xfertools.core import files  # noqa: E402
from xfertools.verdict import noise  # noqa: E402


def runs_of(tarball):
    with tarfile.open(tarball) as t, tempfile.TemporaryDirectory() as tmp:
        for m in t.getmembers():
            if m.isfile() and m.name.startswith("json/run-") and m.name.endswith(".json") and \
                    "/run-" in m.name and ".jobs/" not in m.name:
                path = os.path.join(tmp, os.path.basename(m.name))
                with open(path, "wb") as f:
                    f.write(t.extractfile(m).read())
                yield path, files.load_result(path)


def main():
    n, tarballs = int(sys.argv[1]), sys.argv[2:]
    z = stats.norm.isf(0.01 / (2 * 11)) + stats.norm.isf(0.2)
    for tarball in tarballs:
        sums = {}
        count = 0
        for path, document in runs_of(tarball):
            count += 1
            jobs = replicates.side_jobs([(path, document)])
            table = noise.table(list(jobs.runs))
            model = noise.fit(table)
            for i, family in enumerate(table.families):
                shifts = model.shifts[:, i]
                squares, df = sums.get(family, (0.0, 0))
                sums[family] = (squares + float(((shifts - shifts.mean()) ** 2).sum()),
                                df + len(shifts) - 1)
        print(f"{os.path.basename(tarball)}: {count} runs")
        for family, (squares, df) in sorted(sums.items()):
            sd = math.sqrt(squares / df) * 100
            mde = max(z * sd * math.sqrt(2 / n), 1.0)
            print(f"  {family:70s} sd/job {sd:.2f}%  MDE ({n} a side) {mde:.1f}%")


if __name__ == "__main__":
    main()
