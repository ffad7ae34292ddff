"""This machine's floor: the spread between processes that one xferbench process cannot see,
measured by a run merged from 3 or more jobs, written where a later single-process run on the
same machine finds it (xferbench --xfer_floor=auto, the default; docs/reproducibility.md).

A floor file is results/floors/<identity key>.json, the key made from the machine identity
that tools/compare.py uses (machines.machine_identity), not from the rows run, so a filtered run
finds it. Its "match" holds the raw context fields xferbench compares with its own before using
it (support/floor.cpp, machine_match), and "floors" per family the floor at each size measured:
1.96 x the sd of ln time of one job's figure between jobs, from the merged rows' between_sd_pct
(the spread pooled over the family's rows of nearby sizes), rounded up to 0.1%.
"""

import math
import os

from . import files, history, machines, names

FORMAT = "xferbench-floor/1"
DEFAULT_DIRECTORY = os.path.join("results", "floors")
MIN_JOBS = 3


def machine_match(context):
    """The raw fields xferbench compares (support/floor.cpp machine_match), from a result's
    context."""
    xferbench = machines.xferbench_context(context) or {}
    cuda = xferbench.get("cuda")
    mpi = machines.mapping(xferbench.get("mpi"))
    devices = cuda.get("devices") if isinstance(cuda, dict) else None
    cuda = machines.mapping(cuda)
    return {
        "gpus": [machines.mapping(d).get("name") for d in devices]
        if isinstance(devices, list)
        else None,
        "gpu_links": cuda.get("pairs"),
        "cuda_driver": cuda.get("driver_version"),
        "cuda_runtime": cuda.get("runtime_version"),
        "nccl": machines.mapping(xferbench.get("nccl")).get("version"),
        "mpi_library": mpi.get("library"),
        "mpi_cuda_aware": mpi.get("cuda_aware"),
        "world_size": xferbench.get("world_size"),
        "num_cpus": context.get("num_cpus"),
    }


def floor_document(document, source):
    """The floor file's content from a merged result `document` (read from `source`);
    InputError when it was not merged from MIN_JOBS or more jobs or states no spread."""
    context = machines.context_of(document)
    xferbench = machines.xferbench_context(context)
    if xferbench is None:
        raise files.InputError(f"{source}: not an xferbench result (no context.xferbench)")
    jobs = xferbench.get("jobs")
    if not isinstance(jobs, int) or jobs < MIN_JOBS:
        raise files.InputError(
            f"{source}: merged from {jobs or 1} job(s); a floor needs a run merged from "
            f"{MIN_JOBS} or more (tools/run, XFER_JOBS >= {MIN_JOBS})"
        )
    floors = {}
    for row in document.get("benchmarks", []):
        if row.get("run_type", "iteration") != "iteration" or row.get("error_occurred"):
            continue
        spread = row.get("between_sd_pct")
        name = names.normalise_name(str(row.get("name", "")))
        family, size = names.family_of(name), names.message_bytes(name)
        if not isinstance(spread, (int, float)) or not math.isfinite(spread) or size is None:
            continue
        floor = math.ceil(1.96 * spread * 10) / 10
        floors.setdefault(family, {})[size] = max(floor, floors.get(family, {}).get(size, 0))
    if not floors:
        raise files.InputError(
            f"{source}: no row states between_sd_pct (made by an xferbench before pooled "
            "intervals?)"
        )
    identity = machines.machine_identity(context)
    return {
        "format": FORMAT,
        "identity": identity,
        "match": machine_match(context),
        "floors": {
            f: sorted([s, p] for s, p in sizes.items()) for f, sizes in sorted(floors.items())
        },
        "measured_by": {
            "file": os.path.basename(source),
            "git_revision": xferbench.get("git_revision"),
            "jobs": jobs,
            "rule": "1.96 x between-job sd of ln time (between_sd_pct), rounded up to 0.1%",
        },
    }


def floor_path(document, directory):
    """Where the floor file of the machine `document` ran on goes under `directory`."""
    identity = machines.machine_identity(machines.context_of(document)) or {}
    return os.path.join(directory, history.identity_key(identity) + ".json")


def earlier_floors(target, match):
    """The families' floors of the file at `target` when it is this machine's, else {}."""
    try:
        with open(target, encoding="utf-8") as f:
            earlier = files.parse_json_text(f.read())
    except (OSError, ValueError):
        return {}
    if not isinstance(earlier, dict) or earlier.get("format") != FORMAT:
        return {}
    if earlier.get("match") != match or not isinstance(earlier.get("floors"), dict):
        return {}
    return earlier["floors"]


def write_floor(path, directory):
    """Writes the floor measured by the merged result at `path`, keeping the earlier file's
    families this run did not measure (a filtered run replaces only its own); returns the file
    written."""
    document = files.load_result(path)
    content = floor_document(document, path)
    target = floor_path(document, directory)
    kept = earlier_floors(target, content["match"])
    content["floors"] = dict(sorted({**kept, **content["floors"]}.items()))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise files.InputError(f"--floors {directory}: cannot make it: {error.strerror}") from None
    files.write_atomically(target, target, history.strict_json(content, indent=1) + "\n")
    return target
