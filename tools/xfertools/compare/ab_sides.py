"""A tools/ab document read back as compare.py's two sides: A as base, B as new
(tools/compare.py AB.json; ab/document.py writes the document)."""

from ..core import files
from ..result import machines
from . import report

SCHEMA = "xferbench-ab/1"  # the document's "ab" object


def read_document(path):
    """A tools/ab document as JSON (without a verdict it is no result file)."""
    document = files.decode_json(path, files.read_regular_file(path, path))
    return document if isinstance(document, dict) else {}


def sides_of(path, document):
    """compare.py's (base, new) report.Side of a tools/ab document (read_document's): A and B."""
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


def incomplete_note(path, document):
    """A line for a tools/ab document (read_document's) whose sitting a signal cut short, else
    None."""
    ab = machines.mapping(document.get("ab"))
    incomplete = machines.mapping(ab.get("incomplete"))
    if not incomplete:
        return None
    return (
        f"{path}: an incomplete sitting ({incomplete.get('reason')}): "
        f"{ab.get('jobs_per_side')} jobs a side judged of "
        f"{incomplete.get('jobs_planned', 0) // 2} planned (ab.incomplete)"
    )
