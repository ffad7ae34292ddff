"""tools/ab's document: B's merged result with an "ab" object beside it (schema SCHEMA)
holding A's merged result, the sides, the order and the report; written here, read back for
tools/compare.py AB.json by compare/ab_sides.py."""

import json

from ..compare.ab_sides import SCHEMA
from ..core import files
from .plan import SIDES

PROG = "tools/ab"


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
