"""The history a tracker judges runs by: xferbench result files filed under their machine
identity, as plain JSON files a user can read and keep in git.

    DIR/<key>/identity.json            the identity (what must match for runs to be compared)
    DIR/<key>/<time>-<commit>.json     one run: when, which commit, and each row's figures

A run file keeps per row its time, latency, GB/s and stated ci95_pct (the mean over the
run's repetitions), or why it failed; not the whole result file. Every file is written
atomically and as strict JSON. docs/tracking.md says what the identity holds and why. Standard
library only: recording needs no numpy.
"""

import dataclasses
import datetime
import hashlib
import json
import os
import re

from ..core import fields, files, names
from ..result import machines, rows

RUN_FORMAT = "xferbench-track-run/1"
IDENTITY_FORMAT = "xferbench-track-identity/1"
IDENTITY_FILE = "identity.json"
UNKNOWN_COMMIT = "unknown"
FIGURES = ("time_us", fields.LATENCY_US, "gbps", fields.CI95_PCT)


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of the history, or one being recorded or checked."""

    time: datetime.datetime  # when it ran (the result file's context.date), in UTC
    commit: str  # context.xferbench.git_revision
    digest: str  # of the result document: the same run recorded twice has the same digest
    source: str  # the result file's name when recorded
    figures: dict  # row name -> rows.Figure
    path: str | None = None  # its file in the history

    def label(self):
        """'2026-11-23 15:49 fed485a0ff35': how pages and messages name a run (the commit
        cut to 12 characters, as git's short hashes)."""
        return f"{self.time:%Y-%m-%d %H:%M} {self.commit[:12]}"


# ------------------------------------------------------------------ reading a result file


def xferbench_of(where, document):
    """context.xferbench of a result document; InputError unless it is a complete xferbench
    run."""
    xferbench = machines.xferbench_context(machines.context_of(document))
    if xferbench is None:
        raise files.InputError(
            f"{where}: not an xferbench result (no context.xferbench; plain Google Benchmark "
            "files have no machine identity to file them under)"
        )
    incomplete = xferbench.get("incomplete")
    if incomplete is not None:
        reason = machines.mapping(incomplete).get("reason") or "no reason given"
        raise files.InputError(
            f"{where}: an incomplete run (context.xferbench.incomplete: {reason}); "
            "only a finished run can be tracked"
        )
    return xferbench


def run_time(where, context):
    """context.date (Google Benchmark's run date) as an aware UTC datetime; a date without a
    zone is taken as UTC."""
    text = context.get("date")
    try:
        when = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise files.InputError(
            f"{where}: no run date this tool can read (context.date: {rows.shown(text)})"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.astimezone(datetime.timezone.utc)


def document_digest(document):
    """A digest of the document's content, whatever its layout on disk."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]


def load_run(path):
    """(Run, identity facts) of the result file at path, with InputError (naming the file)
    for anything but a complete xferbench run."""
    document = files.load_result(path)
    xferbench = xferbench_of(path, document)
    context = machines.context_of(document)
    commit = xferbench.get("git_revision")
    run = Run(
        run_time(path, context),
        commit if isinstance(commit, str) and commit else UNKNOWN_COMMIT,
        document_digest(document),
        os.path.basename(path),
        rows.figures_from_document(document),
    )
    return run, context


# ------------------------------------------------------------------ identity


def rank_layout(ranks):
    """'0:0 0:0': per rank its host (numbered in order of appearance) and GPU index."""
    ranks = [r for r in ranks if isinstance(r, dict)] if isinstance(ranks, list) else []
    hosts = list(dict.fromkeys(str(r.get("host")) for r in ranks))
    return " ".join(f"{hosts.index(str(r.get('host')))}:{r.get('gpu')}" for r in ranks) or None


def identity(context, figures, any_host=False):
    """What two runs must share to be judged against each other: the machine's make-up
    (machines.machine_identity: GPUs, links, driver, CUDA, NCCL, MPI and its CUDA-awareness,
    world size, CPUs), the driver release, the paths measured, where each rank ran, and the
    host names unless any_host."""
    xferbench = machines.xferbench_context(context) or {}
    facts = dict(machines.machine_identity(context) or {})
    facts["driver_release"] = machines.mapping(xferbench.get("cuda")).get("driver_release")
    facts["paths"] = ",".join(sorted({names.path_of(row) for row in figures}))
    facts["ranks"] = rank_layout(xferbench.get("ranks"))
    if not any_host:
        facts["hosts"] = machines.describe_hosts(xferbench.get("ranks"))
    return machines.plain(facts)


def slug(text, width):
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")[:width].strip("-")


def identity_key(facts):
    """A folder name that a person can read and that differs for different identities:
    'nvidia-h200-x1-2-ranks-vm-1f3a9c0e' (GPUs, ranks, first host, a digest of the rest)."""
    hosts = (facts.get("hosts") or "any-host").split(",")
    readable = [
        slug(facts.get("gpus") or "no-gpu", 24),
        f"{facts.get('world_size')}-ranks",
        slug(hosts[0], 16) + (f"-{len(hosts) - 1}-more" if len(hosts) > 1 else ""),
    ]
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:8]
    return "-".join(part for part in readable if part) + "-" + digest


def differences(first, second):
    """'field: A vs B' for every identity field where two identities differ."""
    keys = dict.fromkeys(list(first) + list(second))
    return [
        f"{k}: {first.get(k)!r} vs {second.get(k)!r}" for k in keys if first.get(k) != second.get(k)
    ]


# ------------------------------------------------------------------ the files


def strict_json(value, indent=None):
    return json.dumps(value, indent=indent, sort_keys=True, allow_nan=False)


def write_json(path, value):
    """value as strict JSON in the file at path, written atomically; a run's rows one to a
    line, so that a diff of two runs reads row by row."""
    rows = value.get("rows")
    if isinstance(rows, dict):
        head = strict_json({k: v for k, v in value.items() if k != "rows"}, 1)
        lines = [f"  {strict_json(row)}: {strict_json(rows[row])}" for row in sorted(rows)]
        text = head[:-2] + ',\n "rows": {\n' + ",\n".join(lines) + "\n }\n}"
    else:
        text = strict_json(value, 1)
    files.write_atomically(path, path, text + "\n")


def read_json(path):
    return files.decode_json(path, files.read_regular_file(path, path))


def figure_record(figure):
    if figure.error:
        return {"failed": figure.error}
    # 7 significant digits: far below any row's noise, and half the file
    record = {
        k: float(f"{getattr(figure, k):.7g}") for k in FIGURES if getattr(figure, k) is not None
    }
    record["repetitions"] = figure.repetitions
    return record


def figure_from_record(record):
    record = machines.mapping(record)
    if "failed" in record:
        return rows.Figure(None, None, None, None, 0, str(record["failed"]))
    return rows.Figure(
        *(rows.positive(record.get(k)) for k in FIGURES[:3]),
        rows.stated_ci95(record),
        int(record.get("repetitions") or 1),
    )


def run_record(run):
    return {
        "format": RUN_FORMAT,
        "time": run.time.isoformat(),
        "commit": run.commit,
        "digest": run.digest,
        "source": run.source,
        "rows": {row: figure_record(f) for row, f in run.figures.items()},
    }


def run_from_record(path, record):
    """The Run in a history file; InputError naming the file if it is not one."""
    record = machines.mapping(record)
    if record.get("format") != RUN_FORMAT or not isinstance(record.get("rows"), dict):
        raise files.InputError(f"{path}: not a run of a history ({RUN_FORMAT} expected)")
    figures = {str(row): figure_from_record(r) for row, r in record["rows"].items()}
    return Run(
        run_time(path, {"date": record.get("time")}),
        str(record.get("commit") or UNKNOWN_COMMIT),
        str(record.get("digest")),
        str(record.get("source")),
        figures,
        path,
    )


def run_file_name(run):
    commit = re.sub(r"[^0-9A-Za-z._-]+", "_", run.commit)[:40]
    return f"{run.time:%Y%m%dT%H%M%SZ}-{commit}"


class History:
    """The history in folder `root`: its identities and their runs."""

    def __init__(self, root):
        self.root = root
        self.recorded = {}  # key -> {digest: path} of its runs, read once

    def check_exists(self):
        if not os.path.isdir(self.root):
            what = "no such directory" if not os.path.exists(self.root) else "not a directory"
            raise files.InputError(f"--history {self.root}: {what}")

    def identities(self):
        """{key: identity facts} of every identity folder, in key order."""
        self.check_exists()
        found = {}
        for key in sorted(os.listdir(self.root)):
            path = os.path.join(self.root, key, IDENTITY_FILE)
            if os.path.isfile(path):
                record = machines.mapping(read_json(path))
                if record.get("format") != IDENTITY_FORMAT:
                    raise files.InputError(f"{path}: not an identity ({IDENTITY_FORMAT} expected)")
                found[key] = machines.mapping(record.get("identity"))
        return found

    def runs(self, key):
        """The runs filed under key, oldest first."""
        folder = os.path.join(self.root, key)
        paths = sorted(
            os.path.join(folder, name)
            for name in os.listdir(folder)
            if name.endswith(".json") and name != IDENTITY_FILE
        )
        found = [run_from_record(p, read_json(p)) for p in paths]
        return sorted(found, key=lambda r: (r.time, os.path.basename(r.path)))

    def digests(self, key):
        """{digest: path} of the runs filed under key."""
        if key not in self.recorded:
            folder = os.path.join(self.root, key)
            runs = self.runs(key) if os.path.isdir(folder) else []
            self.recorded[key] = {r.digest: r.path for r in runs}
        return self.recorded[key]

    def record(self, run, facts):
        """File run under its identity: (key, path, True) when written, (key, path of the
        same run, False) when it was there already."""
        key = identity_key(facts)
        folder = os.path.join(self.root, key)
        identity_path = os.path.join(folder, IDENTITY_FILE)
        known = self.digests(key)
        if run.digest in known:
            return key, known[run.digest], False
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise files.InputError(
                f"--history {self.root}: cannot create {folder}: {e.strerror}"
            ) from None
        if not os.path.exists(identity_path):
            write_json(identity_path, {"format": IDENTITY_FORMAT, "key": key, "identity": facts})
        stem, number = run_file_name(run), 1
        path = os.path.join(folder, stem + ".json")
        while os.path.exists(path):
            number += 1
            path = os.path.join(folder, f"{stem}-{number}.json")
        write_json(path, run_record(run))
        known[run.digest] = path
        return key, path, True


def earlier_runs(runs, run):
    """The runs of a history that ran before run, never run itself (same digest)."""
    return [r for r in runs if r.time < run.time and r.digest != run.digest]
