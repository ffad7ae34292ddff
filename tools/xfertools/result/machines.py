"""What machine and software a run ran on, from its context: the machine identity (its make-up,
host names left out), every fact worth showing in a difference, and a label for charts.

The context is a result document's "context" object: Google Benchmark's fields (host_name,
num_cpus, library_build_type, ...) and xferbench's typed "xferbench" object."""

import json
import math
from collections import Counter

from ..core import fields, files
from ..core.text import clip

# The make-up two runs must share to be compared as the same machine.
IDENTITY_FIELDS = (
    "gpus",
    "gpu_links",
    "cuda_driver",
    "cuda_runtime",
    "nccl",
    "mpi_library",
    "mpi_cuda_aware",
    "world_size",
    "num_cpus",
)


def mapping(value):
    """value if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def first_item(value):
    """The first element of a JSON array if it is an object, else {}."""
    return mapping(value[0]) if isinstance(value, list) and value else {}


def text_or_none(value):
    """A non-empty string, else None: labels are made of strings only."""
    return value if isinstance(value, str) and value else None


def context_of(document):
    """A result document's context object ({} when absent)."""
    return mapping(document.get(fields.CONTEXT))


def xferbench_context(context):
    """context.xferbench (also when stored as a JSON string), or None when the run does not
    say (plain Google Benchmark JSON)."""
    xferbench = context.get(fields.XFERBENCH)
    if isinstance(xferbench, str):
        try:
            xferbench = files.parse_json_text(xferbench)
        except (ValueError, RecursionError):
            return None
        if files.nesting_depth(xferbench) > files.MAX_NESTING:
            return None
    return xferbench if isinstance(xferbench, dict) else None


def plain(value):
    """value with every NaN and infinity written as a string, so contexts compare equal to
    themselves and render as strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def describe_gpus(devices):
    if not isinstance(devices, list):
        return None
    counts = Counter(str(d.get("name")) for d in devices if isinstance(d, dict))
    return ", ".join(f"{name} x{n}" for name, n in sorted(counts.items()))


def describe_links(pairs):
    if not isinstance(pairs, list):
        return None
    links = []
    for pair in (p for p in pairs if isinstance(p, dict)):
        text = f"{pair.get('src')}-{pair.get('dst')} {pair.get('link')}"
        if pair.get("nvlink_count"):
            text += f" x{pair['nvlink_count']}"
        if pair.get("pcie_relation"):
            text += f" {pair['pcie_relation']}"
        if pair.get("p2p") is False:
            text += " no-p2p"
        links.append(text)
    return "; ".join(links)


def describe_hosts(ranks):
    if not isinstance(ranks, list):
        return None
    hosts = [str(r.get("host")) for r in ranks if isinstance(r, dict)]
    return ",".join(dict.fromkeys(hosts))


def describe_skipped(skipped):
    if not isinstance(skipped, list):
        return None
    return "; ".join(f"{s.get('path')} ({s.get('reason')})" for s in skipped if isinstance(s, dict))


def machine_identity(context):
    """The machine's make-up (IDENTITY_FIELDS: GPU models and count, GPU links, CUDA driver and
    runtime, NCCL, MPI library and CUDA-awareness, world size, CPUs) as a JSON-able dict of
    strings and numbers, or None when the file does not say (no context.xferbench)."""
    xferbench = xferbench_context(context)
    if xferbench is None:
        return None
    return plain(make_up(context, xferbench, describe_gpus, describe_links))


def make_up(context, xferbench, gpus, links):
    """The fields of a machine's make-up, its GPUs and links as the functions gpus and links
    give them from the devices and pairs of context.xferbench.cuda."""
    cuda = mapping(xferbench.get("cuda"))
    mpi = mapping(xferbench.get("mpi"))
    return {
        "gpus": gpus(cuda.get("devices")),
        "gpu_links": links(cuda.get("pairs")),
        "cuda_driver": cuda.get("driver_version"),
        "cuda_runtime": cuda.get("runtime_version"),
        "nccl": mapping(xferbench.get("nccl")).get("version"),
        "mpi_library": mpi.get("library"),
        "mpi_cuda_aware": mpi.get("cuda_aware"),
        "world_size": xferbench.get("world_size"),
        "num_cpus": context.get("num_cpus"),
    }


# What two sides of an A/B comparison must share: the hardware and where the ranks ran on it.
# Software (build, CUDA runtime, NCCL, MPI library, environment) is what tools/ab compares.
HARDWARE_FIELDS = ("gpus", "gpu_links", "cuda_driver", "world_size", "num_cpus", "placement")


def describe_placement(ranks):
    """'0:node1/0/gpu0 1:node1/1/gpu0': each rank's host, node-local rank and GPU."""
    if not isinstance(ranks, list):
        return None
    return " ".join(
        f"{r.get('rank')}:{r.get('host')}/{r.get('local_rank')}/gpu{r.get('gpu')}"
        + (f"@{r['pci_bus_id']}" if r.get("pci_bus_id") else "")
        for r in ranks
        if isinstance(r, dict)
    )


def machine_match(context):
    """What of a result's context a machine file's "match" must equal for the file to be this
    machine's (support/jobs/floor.cpp machine_match computes the same from its own context): GPU
    models, GPU links, CUDA driver and runtime, NCCL, MPI library and CUDA-awareness, world
    size, CPUs. Raw fields, unlike machine_identity's labels."""
    return make_up(context, xferbench_context(context) or {}, gpu_names, lambda pairs: pairs)


def gpu_names(devices):
    """The devices' names as written, or None where devices is no list."""
    return [mapping(d).get("name") for d in devices] if isinstance(devices, list) else None


def same_machine(file_match, match):
    """Whether a machine file's "match" equals a run's, as xferbench compares them (support/
    floor.cpp same_value): objects by their keys in any order, arrays in order, numbers by
    value (1 and 1.0 alike), true and false apart from numbers, a NaN or infinity as null."""
    if isinstance(file_match, dict) or isinstance(match, dict):
        return (
            isinstance(file_match, dict)
            and isinstance(match, dict)
            and file_match.keys() == match.keys()
            and all(same_machine(file_match[k], match[k]) for k in file_match)
        )
    if isinstance(file_match, list) or isinstance(match, list):
        return (
            isinstance(file_match, list)
            and isinstance(match, list)
            and len(file_match) == len(match)
            and all(same_machine(a, b) for a, b in zip(file_match, match))
        )
    a, b = (
        None if isinstance(v, float) and not math.isfinite(v) else v for v in (file_match, match)
    )
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def hardware_identity(context):
    """The hardware part of machine_identity and the ranks' placement (HARDWARE_FIELDS), or
    None when the file does not say."""
    identity = machine_identity(context)
    if identity is None:
        return None
    identity["placement"] = describe_placement(xferbench_context(context).get("ranks"))
    return {k: identity.get(k) for k in HARDWARE_FIELDS}


def run_facts(context):
    """Everything worth showing in a context difference: the identity and the rest (hosts,
    build type, versions, revision, skipped paths, recorded environment variables)."""
    xferbench = xferbench_context(context) or {}
    facts = machine_identity(context) or {"num_cpus": context.get("num_cpus")}
    facts.update(
        {
            "hosts": describe_hosts(xferbench.get("ranks")),
            "host_name": context.get("host_name"),
            "library_build_type": context.get("library_build_type"),
            "benchmark_version": (
                xferbench.get("benchmark_version") or context.get("library_version")
            ),
            "harness_version": xferbench.get("harness_version"),
            "git_revision": xferbench.get("git_revision"),
            "skipped_paths": describe_skipped(xferbench.get(fields.SKIPPED)),
        }
    )
    env = xferbench.get("env")
    for key, value in sorted(env.items() if isinstance(env, dict) else []):
        facts[f"env {key}"] = value
    return plain(facts)


def gpu_name(xferbench):
    """Rank 0's GPU model, with a count when the run saw several GPUs of that model."""
    devices = mapping(xferbench.get("cuda")).get("devices")
    devices = [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []
    if not devices:
        return None
    index = first_item(xferbench.get("ranks")).get("gpu")
    device = next((d for d in devices if d.get("index") == index), devices[0])
    name = text_or_none(device.get("name"))
    if name and len(devices) > 1 and all(d.get("name") == name for d in devices):
        return f"{len(devices)}x {name}"
    return name


def run_label(context, fallback):
    """'host of rank 0, GPU model', else Google Benchmark's host_name, else fallback."""
    xferbench = xferbench_context(context) or {}
    host = text_or_none(first_item(xferbench.get("ranks")).get("host"))
    host = host or text_or_none(context.get("host_name"))
    parts = [p for p in (host, gpu_name(xferbench)) if p]
    return clip(", ".join(parts) if parts else fallback)


def software_line(xferbench):
    """'xferbench 0.1.0 @3f9c2ab, CUDA 13.0, NCCL 2.28.3, Open MPI v4.1.6, 2 rank(s)'."""
    parts = []
    if xferbench.get("harness_version"):
        revision = xferbench.get("git_revision")
        parts.append(
            f"xferbench {xferbench['harness_version']}" + (f" @{revision}" if revision else "")
        )
    cuda = mapping(xferbench.get("cuda"))
    if cuda.get("runtime_version"):
        parts.append(f"CUDA {cuda['runtime_version']}")
    nccl = mapping(xferbench.get("nccl"))
    if nccl.get("version"):
        parts.append(f"NCCL {nccl['version']}")
    mpi = mapping(xferbench.get("mpi"))
    if mpi.get("library"):
        parts.append(str(mpi["library"]).split(",")[0])
    if xferbench.get("world_size"):
        parts.append(f"{xferbench['world_size']} rank(s)")
    return clip(", ".join(parts))


def pool_values(values):
    """One value for several files: the value if they agree, else all of them joined by |."""
    distinct = list(dict.fromkeys(json.dumps(v, sort_keys=True) for v in values))
    if len(distinct) == 1:
        return values[0]
    return " | ".join(str(json.loads(v)) for v in distinct)


def pool_facts(fact_dicts):
    keys = list(dict.fromkeys(k for facts in fact_dicts for k in facts))
    return {k: pool_values([facts.get(k) for facts in fact_dicts]) for k in keys}


def pooled_identity(contexts, identity=machine_identity):
    """The identity of several runs taken together, or None if any of them does not say."""
    identities = [identity(c) for c in contexts]
    if any(identity is None for identity in identities):
        return None
    return pool_facts(identities)
