"""This machine's file: the spread between processes and between runs that one xferbench process
cannot see, learned from this machine's merged runs, and the plan for its next default run;
written where xferbench on the same machine finds it (--xfer_floor=auto, the default;
--xfer_jobs=auto; docs/reproducibility.md).

A floor file is results/floors/<identity key>.json, the key made from the machine identity
that tools/compare.py uses (machines.machine_identity), not from the rows run, so a filtered run
finds it. Its "match" holds the raw context fields xferbench compares with its own before using
it (machines.machine_match, as support/jobs/floor.cpp's). Format xferbench-floor/2 keeps the last
MAX_RUNS merged runs of this machine ("history", components.run_entry) and, from all of them:
"floors" (per family and size, machine_model.floor_pct: the floor a single mpirun adds),
"run_floors" (the run-level sd, machine_model.run_sd_pct, from 3 runs on), "costs" and "plan"
(plan.py). A file of format /1 (floors only) for this machine is replaced, its families
that the history does not hold kept, as a later run of fewer families keeps the others'.
"""

import json
import math
import os

from ..core import files
from ..result import machines
from . import components, history, plan
from . import model as machine_model

FORMAT = "xferbench-floor/2"
FORMAT_1 = "xferbench-floor/1"
DEFAULT_DIRECTORY = os.path.join("results", "floors")
MIN_JOBS = 3
MAX_RUNS = 10  # history entries kept; the oldest dropped
MIN_RUNS_FOR_PLAN = 3  # the plan trusts the costs and components of this many runs
ASSUMED_JOB_S = 1.0  # c0 where no run of the history had its jobs' seconds
ASSUMED_DF_PER_JOB_DF = 1.0  # q where no run states ci95_df: each row's own jobs
RULE = (
    "1.96 x 100 sqrt(process + run-level variance of ln time), each pooled over the "
    "history's runs and the family's rows within 8x in size, rounded up to 0.1%"
)


def merged_run(document, source, job_seconds):
    """context.xferbench of a finished run merged from MIN_JOBS or more jobs; InputError naming
    `source` (or --job-seconds) otherwise."""
    xferbench = machines.xferbench_context(machines.context_of(document))
    if xferbench is None:
        raise files.InputError(f"{source}: not an xferbench result (no context.xferbench)")
    jobs = xferbench.get("jobs")
    if not isinstance(jobs, int) or jobs < MIN_JOBS:
        raise files.InputError(
            f"{source}: merged from {jobs or 1} job(s); a floor needs a run merged from "
            f"{MIN_JOBS} or more (tools/run, XFER_JOBS >= {MIN_JOBS})"
        )
    if xferbench.get("incomplete") is not None:
        raise files.InputError(
            f"{source}: an incomplete run (context.xferbench.incomplete); a floor needs a "
            "finished one"
        )
    if job_seconds is not None and len(job_seconds) != jobs:
        raise files.InputError(
            f"--job-seconds: {len(job_seconds)} value(s) for {source}, a run of {jobs} jobs"
        )
    return xferbench


def earlier_file(target, match):
    """The file at `target` when it is this machine's (format /1 or /2, the same match), else
    None (no file, unreadable, or another machine's: replaced whole)."""
    try:
        with open(target, encoding="utf-8") as f:
            earlier = files.parse_json_text(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(earlier, dict) or earlier.get("format") not in (FORMAT, FORMAT_1):
        return None
    if not machines.same_machine(earlier.get("match"), match) or not isinstance(
        earlier.get("floors"), dict
    ):
        return None
    return earlier


def updated_history(earlier, entry):
    """The earlier file's history with `entry` added last (a run already there, by digest, is
    replaced in place), at most MAX_RUNS, oldest first."""
    entries = earlier.get("history") if earlier and earlier.get("format") == FORMAT else None
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    same = [i for i, e in enumerate(entries) if e.get("digest") == entry["digest"]]
    if same:
        entries[same[0]] = entry
    else:
        entries.append(entry)
    return entries[-MAX_RUNS:]


def floors_of(rows):
    """{family: [[bytes, pct], ...]}: 1.96 x 100 sqrt(p + s2R), rounded up to 0.1%: what a new
    process in another run adds to a row; its own visits' noise, which a single run's visits
    show, is not in it."""
    out = {}
    for r in rows:
        out.setdefault(r.family, []).append(
            [r.bytes, machine_model.floor_pct(r.process, r.run_level)]
        )
    return out


def run_floors_of(rows):
    """{family: [[bytes, sd_pct, df], ...]} of the rows with a run level (3 or more runs), df
    those of the run means' pooled variance (machine_model.run_level_of), to 0.01 below."""
    out = {}
    for r in rows:
        if r.run_level is not None:
            sd = machine_model.run_sd_pct(r.run_level)
            df = max(1.0, math.floor(r.run_df * 100) / 100)
            out.setdefault(r.family, []).append([r.bytes, sd, df])
    return out


def with_kept(new, earlier, key):
    """new's families, and the earlier file's `key` families that new lacks."""
    kept = machines.mapping(earlier.get(key)) if earlier else {}
    return dict(sorted({**kept, **new}.items()))


def costs_of(entries, rows):
    """What the plan is made with: c0, sum c_r, sum s_r, q, and where c0 and q came from."""
    job_s = components.job_cost(entries)
    q = components.pooled_df_ratio(entries)
    timed = sum(len(e.get("job_seconds") or []) for e in entries)
    return {
        "job_s": round(ASSUMED_JOB_S if job_s is None else job_s, 3),
        "job_s_from": f"median over {timed} jobs of their seconds less their visits'"
        if job_s is not None
        else "assumed: no run of the history had its jobs' seconds (tools/run passes them)",
        "visits_s": round(sum(r.fixed_s for r in rows), 3),
        "sample_s": round(sum(r.sample_s for r in rows), 4),
        "df_per_job_df": round(ASSUMED_DF_PER_JOB_DF if q is None else q, 3),
        "df_per_job_df_from": "median over runs of merged rows' ci95_df / (jobs - 1)"
        if q is not None
        else "assumed 1: no run of the history states ci95_df",
        "overhead_s": plan.OVERHEAD_S,
        "margin": plan.MARGIN,
        "precision_pct": plan.PRECISION_PCT,
    }


def floor_document(document, source, earlier=None, job_seconds=None, budget=plan.DEFAULT_BUDGET_S):
    """The floor file's content after the merged result `document` (read from `source`), given
    the earlier file of this machine (earlier_file) and each job's seconds."""
    xferbench = merged_run(document, source, job_seconds)
    context = machines.context_of(document)
    entry = components.run_entry(document, source, job_seconds)
    entries = updated_history(earlier, entry)
    rows = components.components(entries)
    costs = costs_of(entries, rows)
    made = None
    if len(entries) >= MIN_RUNS_FOR_PLAN:
        ran = max((e["jobs"] for e in entries if isinstance(e.get("jobs"), int)), default=0)
        made = plan.make_plan(
            rows,
            plan.Costs(costs["job_s"], costs["df_per_job_df"], budget),
            len(entries),
            most_jobs=ran + 1,
        )
    return {
        "format": FORMAT,
        "identity": machines.machine_identity(context),
        "match": machines.machine_match(context),
        "floors": with_kept(floors_of(rows), earlier, "floors"),
        "run_floors": with_kept(run_floors_of(rows), earlier, "run_floors"),
        "plan": made,
        "history": entries,
        "costs": costs,
        "measured_by": {
            "file": os.path.basename(source),
            "git_revision": xferbench.get("git_revision"),
            "jobs": xferbench.get("jobs"),
            "runs": len(entries),
            "rule": RULE,
        },
    }


def describe(content):
    """'4 runs in its history; next run: 7 jobs, 52.3 s predicted', or why there is no plan."""
    runs = len(content["history"])
    made = content["plan"]
    if made:
        what = f"next run: {made['jobs']} jobs, {made['predicted_wall_s']:g} s predicted"
    elif runs < MIN_RUNS_FOR_PLAN:
        what = f"a plan is made from {MIN_RUNS_FOR_PLAN} runs"
    else:
        what = f"no plan: {plan.MIN_JOBS} jobs do not fit in the budget"
    return f"{runs} run{'s' * (runs != 1)} in its history; {what}"


def floor_path(document, directory):
    """Where the floor file of the machine `document` ran on goes under `directory`."""
    identity = machines.machine_identity(machines.context_of(document)) or {}
    return os.path.join(directory, history.identity_key(identity) + ".json")


def layout(value, depth=0):
    """value as strict JSON that reads by line: objects, and lists of objects, one member a
    line; other lists (a family's rows) on one line."""
    pad = " " * (depth + 1)
    if isinstance(value, dict) and value:
        members = [f"{pad}{json.dumps(k)}: {layout(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + " " * depth + "}"
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        items = [pad + layout(item, depth + 1) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * depth + "]"
    return json.dumps(value, allow_nan=False)


def write_floor(path, directory, job_seconds=None, budget=plan.DEFAULT_BUDGET_S):
    """Writes this machine's file after the merged result at `path`; returns (the file written,
    its content)."""
    document = files.load_result(path)
    target = floor_path(document, directory)
    earlier = earlier_file(target, machines.machine_match(machines.context_of(document)))
    content = floor_document(document, path, earlier, job_seconds, budget)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise files.InputError(f"--floors {directory}: cannot make it: {error.strerror}") from None
    files.write_atomically(target, target, layout(content) + "\n")
    return target, content
