"""tools/ab's document: B's merged result with an "ab" object beside it (schema SCHEMA)
holding A's merged result, the sides, the order and the report; written, and read back for
tools/compare.py AB.json."""

import json

from . import files, machines, report
from .ab_plan import SIDES

PROG = "tools/ab"
SCHEMA = "xferbench-ab/1"


def ab_object(args, by_label, order, jobs, wall, a_result, result):
    """The document's "ab" object (schema SCHEMA)."""
    return {
        "schema": SCHEMA,
        "a_result": a_result,
        "jobs_per_side": jobs,
        "order": order,
        "wall_s": round(wall, 1),
        "flags": args.flags,
        "sides": {label: by_label[label].to_dict() for label in SIDES},
        "software_differences": result["ab"]["software_differences"] if result else [],
        "report": result,
    }


def write(out, document):
    files.write_atomically(PROG, out, json.dumps(document, indent=1, allow_nan=False) + "\n")


def software_differences(sides, report_dict):
    """What differs between the sides' software: their settings, then the facts their runs
    recorded (build revision, MPI library, recorded environment, ...)."""
    a, b = sides
    out = []
    if a.build != b.build:
        out.append({"field": "build", "A": a.build, "B": b.build})
    for key in dict.fromkeys(list(a.env) + list(b.env)):
        if a.env.get(key) != b.env.get(key):
            out.append({"field": f"env {key}", "A": a.env.get(key), "B": b.env.get(key)})
    if a.launcher != b.launcher:
        out.append({"field": "launcher", "A": a.launcher, "B": b.launcher})
    recorded = {d["field"] for d in out}
    for d in report_dict["context_diff"]:
        if d["field"] not in recorded and d["field"] not in ("date",):
            out.append({"field": d["field"], "A": d["base"], "B": d["new"]})
    return out


def read_document(path):
    """A tools/ab document as JSON (without a verdict it is no result file)."""
    document = files.decode_json(path, files.read_regular_file(path, path))
    return document if isinstance(document, dict) else {}


def sides_of(path):
    """compare.py's (base, new) report.Side of a tools/ab document: A and B."""
    document = read_document(path)
    ab = machines.mapping(document.get("ab"))
    if ab.get("schema") != SCHEMA:
        raise files.InputError(
            f"{path}: one file is compared only if tools/ab wrote it (no 'ab' object of schema "
            f"{SCHEMA}); give BASE NEW"
        )
    incomplete = machines.mapping(ab.get("incomplete"))
    if ab.get("report") is None and incomplete:
        raise files.InputError(
            f"{path}: no verdict: tools/ab was {incomplete.get('reason', 'stopped')} before "
            "2 jobs a side finished (ab.incomplete)"
        )
    files.check_result_document(path, document)
    a_document = ab.get("a_result")
    files.check_result_document(f"{path}: ab.a_result", a_document)
    b_document = {k: v for k, v in document.items() if k != "ab"}
    base = report.load_side("base", [f"{path} (A)"], {f"{path} (A)": a_document})
    new = report.load_side("new", [f"{path} (B)"], {f"{path} (B)": b_document})
    return base, new


def incomplete_note(path):
    """A line for a tools/ab document whose sitting a signal cut short, else None."""
    ab = machines.mapping(read_document(path).get("ab"))
    incomplete = machines.mapping(ab.get("incomplete"))
    if not incomplete:
        return None
    return (
        f"{path}: an incomplete sitting ({incomplete.get('reason')}): "
        f"{ab.get('jobs_per_side')} jobs a side judged of "
        f"{incomplete.get('jobs_planned', 0) // 2} planned (ab.incomplete)"
    )
