#!/usr/bin/env python3
"""How strong a slow host, link or uplink must be for the fleet verdict to name it, on the test
bed (issue 46): a power curve, with the false alarms of the unshaped bed beside it.

The bed is tests/integration's (testbed.py, fleet_bed.py): one rank a host under Open MPI's
mpirun started on nodeA through netns-agent, every link at fleet_bed.RATE_MBIT with tc htb, the
one series of fleet_bed.XFER_ARGS (mpi_host ping-pong at 256 KiB), `tools/fleet run` as a user
runs it (two passes, the judge, the re-test of the suspects, the final verdict). A case slows:

    hostP        the planted host (nodeC) by the factor the calibration says gives its pairs
                 about +P% (P: 5 10 15 20 30 by default)
    linkF        the planted pair (nodeA-nodeF) at RATE / F both ways, a tc filter on each end
    hostP+linkF  both in one run: they are at different hosts, so one run measures both; this
                 saves runs but puts each beside the other (not used by default: each named
                 alone gives the clean "and nothing else")
    none         nothing (the false alarms)
    sw2-upF      two switches, hosts A-D and E-H (8 hosts only), the uplink between them at
                 RATE / F (every pair across them shares it); sw2-none: the uplink unshaped.
                 A round of 4 pairs has 0, 2 or 4 across, each direction of the uplink shared
                 by those sending that way: up2 made a pair across 3.8-9.7x slower, not 2x
    sw2-bisF     the same with the uplink at the leaf's full bisection (4 x RATE) / F: a pair
                 across is slowed only in rounds where more than 4 / F cross (not by default)
    ...-topo     the same, `tools/fleet run --topology FILE` (the bed's topology.conf); run
                 only where `tools/fleet judge --help` lists --topology. There, a two-switch
                 run without it is also judged again with it (rejudged_with_topology: the same
                 measurements both ways)

The calibration (--calibrate) measures, for a few factors, the planted host's effect as the
verdict reports it (host_effects), so that hostP can pick its factor; the campaign reads
OUTDIR/calibration.json (or --calibration FILE; else DEFAULT_CALIBRATION, measured when this
script was written) and keeps the factors it chose in OUTDIR/factors.json, so a resumed campaign
uses the same ones.

usage (as root, from the repository root, after a build):
    XFERBENCH=build/xferbench power.py OUTDIR --calibrate [--hosts 6 8] [--runs 2]
                                              [--factors 1.05 1.1 1.15 1.2 1.3]
    XFERBENCH=build/xferbench power.py OUTDIR [--hosts 6 8] [--runs 10] [--cases CASE ...]
    power.py OUTDIR --summary

Each run is appended to OUTDIR/runs.jsonl (calibration: calibration.jsonl) as it ends, and a
campaign started again on the same OUTDIR skips the runs it holds: a killed campaign keeps what
it measured. Cases alternate run by run (run k of every case, then run k + 1), each run with its
own --xfer_seed (from the bed, the case and k: a resumed run gets the seed it would have had).
A run's files (fleet.json, retest.json, verdict.json, fleet.log, console.txt) are kept in
OUTDIR/raw/<hosts>h-<case>-<k>/. At the end OUTDIR/runs.json holds every run and the summary
table is printed (and written to OUTDIR/summary.txt).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
os.environ.setdefault("XFERBENCH", os.path.join(ROOT, "build", "xferbench"))
os.environ.setdefault("XFER_SOURCE_DIR", ROOT)

import fleet_bed  # noqa: E402
from xfer_testlib import MPIRUN, XFERBENCH  # noqa: E402

PLANTED_HOST = fleet_bed.SLOW_HOST
PLANTED_LINK = fleet_bed.SLOW_LINK
LINK_NAME = "-".join(PLANTED_LINK)
TARGETS_PCT = (5, 10, 15, 20, 30)
LINK_FACTORS = (1.3, 2)
UPLINK_FACTORS = (1.3, 2)
TWO_SWITCH_HOSTS = 8  # two leaves of 4
CALIBRATION_FACTORS = (1.05, 1.1, 1.15, 1.2, 1.3)
# factor: the planted host's effect (%), median of the calibration's runs on 6 hosts, measured
# on the 2-core VM on 2026-11-29 (README.md); used where no calibration.json is at hand.
DEFAULT_CALIBRATION = {1.05: 4.8, 1.1: 9.7, 1.15: 14.9, 1.2: 19.8, 1.3: 29.5}
RUN_TIMEOUT_S = fleet_bed.BOUND_S + 30


# ------------------------------------------------------------------------------- the cases


def default_cases():
    """The campaign's cases when --cases is not given."""
    cases = [f"host{p}" for p in TARGETS_PCT] + [f"link{f:g}" for f in LINK_FACTORS] + ["none"]
    for topo in ("", "-topo"):
        cases += ["sw2-none" + topo] + [f"sw2-up{f:g}{topo}" for f in UPLINK_FACTORS]
    return cases


def parse_case(name):
    """{"name", "target_pct", "link_factor", "uplink_factor", "bisection_factor", "switches",
    "topology"} of a case name (module docstring); ValueError for one that is not a case."""
    spec = {
        "name": name,
        "target_pct": None,
        "link_factor": None,
        "uplink_factor": None,
        "bisection_factor": None,
        "switches": 1,
        "topology": False,
    }
    rest = name
    if rest.startswith("sw2-"):
        spec["switches"] = 2
        rest = rest[4:]
        if rest.endswith("-topo"):
            spec["topology"] = True
            rest = rest[: -len("-topo")]
        if rest.startswith("up"):
            spec["uplink_factor"] = _factor(rest[2:], name)
        elif rest.startswith("bis"):
            spec["bisection_factor"] = _factor(rest[3:], name)
        elif rest != "none":
            raise ValueError(f"not a case: {name}")
        return spec
    if rest == "none":
        return spec
    for part in rest.split("+"):
        if part.startswith("host") and spec["target_pct"] is None:
            spec["target_pct"] = _factor(part[4:], name)
        elif part.startswith("link") and spec["link_factor"] is None:
            spec["link_factor"] = _factor(part[4:], name)
        else:
            raise ValueError(f"not a case: {name}")
    return spec


def _factor(text, name):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"not a case: {name}") from None
    if not value > 0:
        raise ValueError(f"not a case: {name}")
    return value


def runs_on(spec, hosts):
    """Whether a case runs on a bed of `hosts` hosts (two-switch cases: 8 only)."""
    return spec["switches"] == 1 or hosts == TWO_SWITCH_HOSTS


def factor_for(target_pct, points):
    """The host factor whose effect is `target_pct`, by linear interpolation between the
    calibration's `points` {factor: effect %} (and 1.0: 0%), extrapolated along the last
    segment past the ends."""
    pts = sorted({1.0: 0.0, **{float(f): float(e) for f, e in points.items()}}.items())
    for (f0, e0), (f1, e1) in zip(pts, pts[1:]):
        if target_pct <= e1 or (f1, e1) == pts[-1]:
            if e1 == e0:
                return f1
            return round(f0 + (target_pct - e0) * (f1 - f0) / (e1 - e0), 4)
    raise ValueError("no calibration points")


def fleet_case(spec, hosts, factors, topology_file):
    """The fleet_bed.Case of a parsed case on `hosts` hosts; `factors` {target %: factor}."""
    case = fleet_bed.Case(hosts_count=hosts, switches=spec["switches"])
    if spec["target_pct"] is not None:
        case.host_factors = {PLANTED_HOST: factors[spec["target_pct"]]}
    if spec["link_factor"] is not None:
        case.link_factors = {PLANTED_LINK: spec["link_factor"]}
    case.uplink_factor = spec["uplink_factor"]
    if spec["bisection_factor"] is not None:  # RATE / factor = leaf size x RATE / F
        case.uplink_factor = spec["bisection_factor"] / (hosts // 2)
    if spec["topology"]:
        case.judge_args = ("--topology", topology_file)
    return case


def judge_has_topology():
    """Whether `tools/fleet judge --help` lists --topology (issue 46's coming option)."""
    proc = subprocess.run(
        ["/usr/bin/python3", fleet_bed.FLEET, "judge", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return "--topology" in proc.stdout


# --------------------------------------------------------------------------------- one run


def run_one(bed, case, label, seed, raw_dir):
    """One `tools/fleet run` of `case` on the started `bed`, its files kept in raw_dir/label:
    the fields of a runs.jsonl record that come from the run (campaign() adds the case's)."""
    out = os.path.join(raw_dir, label)
    shutil.rmtree(out, ignore_errors=True)  # a run killed before: tools/fleet wants it new
    os.makedirs(raw_dir, exist_ok=True)
    try:
        proc, verdict, wall = fleet_bed.run_bed(bed, case, out, seed, MPIRUN[0], XFERBENCH)
        status, said = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        status, verdict, wall = "timeout", None, RUN_TIMEOUT_S
        said = _text(e.stdout) + _text(e.stderr)
        path = os.path.join(out, "verdict.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                verdict = json.load(f)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "console.txt"), "w", encoding="utf-8") as f:
        f.write(said)
    series = verdict["series"] if verdict else []
    first = series[0] if series else {}
    effects = first.get("host_effects") or {}
    planted = effects.get(PLANTED_HOST, {})
    return {
        "exit": status,
        "named": fleet_bed.named_all(verdict) if verdict else None,
        "suspects": first.get("suspects"),
        "planted_host_effect_pct": planted.get("effect_pct"),
        "planted_host_ci95_pct": planted.get("ci95_pct"),
        "host_effects_pct": {h: e.get("effect_pct") for h, e in effects.items()},
        "sigma_pct": first.get("sigma_pct"),
        "tau_pct": first.get("tau_pct"),
        "thresholds_pct": first.get("thresholds_pct"),
        "series": [
            {k: s.get(k) for k in ("path", "bytes", "sigma_pct", "tau_pct", "thresholds_pct")}
            for s in series
        ],
        "raw_pct": raw_ratios(out, bed),
        "round_wall_s": fleet_bed.round_walls(out),
        "wall_s": wall,
    }


def rejudge(out, topology_file):
    """The run in `out` judged again by `tools/fleet judge` with `--topology`: the same
    measurements with and without the topology (the re-test was planned without it, so a
    suspect only the topology finds stays unconfirmed: exit 3). {"exit", "named"}; its verdict
    in out/verdict-topology.json."""
    fleet, retest = os.path.join(out, "fleet.json"), os.path.join(out, "retest.json")
    if not os.path.exists(fleet):
        return None
    where = os.path.join(out, "verdict-topology.json")
    argv = ["/usr/bin/python3", fleet_bed.FLEET, "judge", fleet, "--topology", topology_file]
    argv += ["--retest", retest] if os.path.exists(retest) else []
    proc = subprocess.run(
        argv + ["--json", where],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    with open(os.path.join(out, "console-topology.txt"), "w", encoding="utf-8") as f:
        f.write(proc.stdout + proc.stderr)
    named = None
    if os.path.exists(where):
        with open(where, encoding="utf-8") as f:
            named = fleet_bed.named_all(json.load(f))
    return {"exit": proc.returncode, "named": named}


def _text(data):
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def raw_ratios(out, bed):
    """From fleet.json, before any model: the median time of the planted host's pairs, of the
    planted link and (two switches) of the pairs across them, each against the median of the
    other pairs, in percent; None where the file or the pairs are missing."""
    path = os.path.join(out, "fleet.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        fleet = json.load(f)["context"]["xferbench"]["fleet"]
    names = [fleet["hosts"][h] for h in fleet["host_of"]]
    n = len(names)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    times = {}
    for s in fleet["series"]:
        for pair, t in zip(pairs, s["time_us"]):
            if t is not None:
                times.setdefault((names[pair[0]], names[pair[1]]), []).append(t)
    leaf = getattr(bed, "switch_of", {})
    groups = {
        "host": lambda a, b: PLANTED_HOST in (a, b),
        "link": lambda a, b: {a, b} == set(PLANTED_LINK),
        "cross": lambda a, b: leaf.get(a) != leaf.get(b),
    }
    ratios = {}
    for key, inside in groups.items():
        mine = [t for (a, b), ts in times.items() if inside(a, b) for t in ts]
        rest = [t for (a, b), ts in times.items() if not inside(a, b) for t in ts]
        if mine and rest:
            ratios[key] = 100 * (statistics.median(mine) / statistics.median(rest) - 1)
    return ratios


# -------------------------------------------------------------------------------- campaign


def read_jsonl(path):
    """The records of a JSONL file (none if it is missing); a last line cut short by a kill is
    left out."""
    records = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
    return records


def append_jsonl(path, record):
    """Appends one record and syncs it to disk, so that a killed campaign keeps it."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def seed_of(*parts):
    """A run's --xfer_seed: the same for the same bed, case and run, different otherwise."""
    return zlib.crc32("/".join(map(str, parts)).encode()) & 0x7FFFFFFF


def campaign(args):
    """Runs the cases (module docstring), resuming from OUTDIR/runs.jsonl."""
    specs = [parse_case(name) for name in args.cases]
    topology = judge_has_topology()
    if not topology and any(s["topology"] for s in specs):
        dropped = [s["name"] for s in specs if s["topology"]]
        print(f"tools/fleet judge has no --topology yet: not run: {' '.join(dropped)}")
        specs = [s for s in specs if not s["topology"]]
    factors = choose_factors(args, {s["target_pct"] for s in specs} - {None})
    jsonl = os.path.join(args.outdir, "runs.jsonl")
    done = {(r["hosts"], r["case"], r["run"]) for r in read_jsonl(jsonl)}
    beds = [(h, 1) for h in args.hosts] + [(h, 2) for h in args.hosts if h == TWO_SWITCH_HOSTS]
    for hosts, switches in beds:
        mine = [s for s in specs if s["switches"] == switches and runs_on(s, hosts)]
        todo = [(k, s) for k in range(args.runs) for s in mine if (hosts, s["name"], k) not in done]
        if not todo:
            continue
        bed = fleet_bed.Case(hosts_count=hosts, switches=switches).bed()
        bed.start()
        try:
            topology_file = None
            if switches == 2:  # for the -topo cases, and as a record of the bed
                topology_file = bed.write_topology(
                    os.path.join(args.outdir, f"topology-{hosts}h-{switches}sw.conf")
                )
            for k, spec in todo:
                case = fleet_case(spec, hosts, factors[hosts], topology_file)
                label = f"{hosts}h-{spec['name']}-{k}"
                seed = seed_of(hosts, spec["name"], k)
                r = {
                    "case": spec["name"],
                    "hosts": hosts,
                    "switches": switches,
                    "run": k,
                    "seed": seed,
                    "target_pct": spec["target_pct"],
                    "planted": {
                        "host": PLANTED_HOST if case.host_factors else None,
                        "link": LINK_NAME if case.link_factors else None,
                        "uplink": switches == 2 and case.uplink_factor is not None,
                    },
                    "factors": {
                        "host": case.host_factors.get(PLANTED_HOST),
                        "link": case.link_factors.get(PLANTED_LINK),
                        "uplink": case.uplink_factor,
                        "uplink_of_bisection": spec["bisection_factor"],
                    },
                    "rate_mbit": fleet_bed.RATE_MBIT,
                    "judge_args": list(case.judge_args),
                    "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                }
                r.update(run_one(bed, case, label, seed, os.path.join(args.outdir, "raw")))
                if switches == 2 and topology and not spec["topology"]:
                    r["rejudged_with_topology"] = rejudge(
                        os.path.join(args.outdir, "raw", label), topology_file
                    )
                append_jsonl(jsonl, r)
                print(one_line(r), flush=True)
        finally:
            bed.stop()
    records = read_jsonl(jsonl)
    with open(os.path.join(args.outdir, "runs.json"), "w", encoding="utf-8") as f:
        json.dump(records, f, indent=1)
    show_summary(records, args.outdir)
    return 0


def choose_factors(args, targets):
    """{hosts: {target %: factor}}: from OUTDIR/factors.json where an earlier start of this
    campaign chose them, else from the calibration; written to OUTDIR/factors.json."""
    path = os.path.join(args.outdir, "factors.json")
    chosen = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        chosen = {int(h): {float(t): f for t, f in m.items()} for h, m in saved["factors"].items()}
    calibration, source = load_calibration(args)
    for hosts in args.hosts:
        points = calibration.get(hosts) or next(iter(calibration.values()), DEFAULT_CALIBRATION)
        mine = chosen.setdefault(hosts, {})
        for t in sorted(targets):
            mine.setdefault(float(t), factor_for(t, points))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"source": source, "factors": chosen}, f, indent=1)
    for hosts in args.hosts:
        pairs = ", ".join(f"+{t:g}%: {f:g}" for t, f in sorted(chosen[hosts].items()))
        print(f"{hosts} hosts, host factors ({source}): {pairs or 'none'}")
    return chosen


def load_calibration(args):
    """({hosts: {factor: effect %}}, where from): --calibration FILE, else
    OUTDIR/calibration.json, else DEFAULT_CALIBRATION (for every host count)."""
    path = args.calibration or os.path.join(args.outdir, "calibration.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        return {
            int(h): {float(f): m["median_effect_pct"] for f, m in per.items()}
            for h, per in doc["hosts"].items()
        }, path
    return {h: DEFAULT_CALIBRATION for h in args.hosts}, "DEFAULT_CALIBRATION"


def calibrate(args):
    """Runs the planted host alone at each factor, args.runs times, and writes the factor to
    effect mapping (median over runs) to OUTDIR/calibration.json."""
    jsonl = os.path.join(args.outdir, "calibration.jsonl")
    done = {(r["hosts"], r["factor"], r["run"]) for r in read_jsonl(jsonl)}
    for hosts in args.hosts:
        todo = [(k, f) for k in range(args.runs) for f in args.factors if (hosts, f, k) not in done]
        if not todo:
            continue
        bed = fleet_bed.Case(hosts_count=hosts).bed()
        bed.start()
        try:
            for k, factor in todo:
                case = fleet_bed.Case(hosts_count=hosts, host_factors={PLANTED_HOST: factor})
                seed = seed_of("calibration", hosts, factor, k)
                r = {"hosts": hosts, "factor": factor, "run": k, "seed": seed}
                label = f"calibration-{hosts}h-{factor:g}-{k}"
                r.update(run_one(bed, case, label, seed, os.path.join(args.outdir, "raw")))
                append_jsonl(jsonl, r)
                raw = (r["raw_pct"] or {}).get("host")
                print(
                    f"{hosts} hosts, factor {factor:g}: effect "
                    f"{_pct(r['planted_host_effect_pct'])}, raw {_pct(raw)}, exit {r['exit']},"
                    f" named {r['named']}, {r['wall_s']:.1f} s",
                    flush=True,
                )
        finally:
            bed.stop()
    records = read_jsonl(jsonl)
    table = {}
    for r in records:
        if r["planted_host_effect_pct"] is not None:
            table.setdefault(r["hosts"], {}).setdefault(r["factor"], []).append(r)
    doc = {"hosts": {}}
    print(f"{'hosts':>5} {'factor':>6} {'runs':>4} {'effect':>7} {'min..max':>15} {'raw':>7} named")
    for hosts, per in sorted(table.items()):
        doc["hosts"][hosts] = {}
        for factor, rs in sorted(per.items()):
            effects = [r["planted_host_effect_pct"] for r in rs]
            raws = [r["raw_pct"]["host"] for r in rs if r["raw_pct"] and "host" in r["raw_pct"]]
            named = sum(r["named"] is not None and PLANTED_HOST in r["named"]["hosts"] for r in rs)
            doc["hosts"][hosts][factor] = {
                "runs": len(rs),
                "median_effect_pct": statistics.median(effects),
                "effects_pct": effects,
                "median_raw_pct": statistics.median(raws) if raws else None,
                "named": named,
            }
            spread = f"{min(effects):+.1f}..{max(effects):+.1f}"
            raw = _pct(doc["hosts"][hosts][factor]["median_raw_pct"])
            print(
                f"{hosts:5} {factor:6g} {len(rs):4} {statistics.median(effects):+6.1f}%"
                f" {spread:>15} {raw:>7} {named}/{len(rs)}"
            )
        mapping = {
            t: factor_for(t, {f: m["median_effect_pct"] for f, m in doc["hosts"][hosts].items()})
            for t in TARGETS_PCT
        }
        doc.setdefault("factors", {})[hosts] = mapping
        print(
            f"{hosts} hosts: factor for " + ", ".join(f"+{t}%: {f:g}" for t, f in mapping.items())
        )
    with open(os.path.join(args.outdir, "calibration.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return 0


# --------------------------------------------------------------------------------- summary


def one_line(r):
    """A run as one line of the campaign's progress."""
    named = r["named"] or {}
    what = " ".join(f"{kind}={','.join(v)}" for kind, v in named.items() if v) or "nothing"
    raw = r["raw_pct"] or {}
    extra = f" cross {raw['cross']:+.0f}%" if r["switches"] == 2 and "cross" in raw else ""
    return (
        f"{r['hosts']}h {r['case']:14} run {r['run']:2} exit {r['exit']} named {what};"
        f" {PLANTED_HOST} {_pct(r['planted_host_effect_pct'])}{extra};"
        f" sigma {_pct(r['sigma_pct'], '')}; {r['wall_s']:.1f} s"
    )


def _pct(value, sign="+"):
    return "-" if value is None else f"{value:{sign}.1f}%"


def verdict_of(r):
    """(host named, link named, exactly the planted ones, anything named, anything not
    planted named) of a run; None where the run left no verdict. With a slowed uplink "exactly"
    is None: which kind names an uplink is the judge's to choose."""
    if r["named"] is None:
        return None
    named = {(kind, n) for kind, names in r["named"].items() for n in names}
    planted = set()
    if r["planted"]["host"]:
        planted.add(("hosts", r["planted"]["host"]))
    if r["planted"]["link"]:
        planted.add(("links", r["planted"]["link"]))
    wrong = {x for x in named if x not in planted}
    if r["planted"]["uplink"]:  # what names an uplink is the judge's to choose: not counted
        wrong = {(kind, n) for kind, n in wrong if kind in ("hosts", "rails")}
    return (
        ("hosts", PLANTED_HOST) in named,
        ("links", LINK_NAME) in named,
        None if r["planted"]["uplink"] else named == planted,
        bool(named),
        bool(wrong),
    )


def show_summary(records, outdir):
    """The table (per bed and case: shares named, effect, sigma, walls); also to summary.txt."""
    rows = {}
    for r in records:
        rows.setdefault((r["hosts"], r["switches"], r["case"]), []).append(r)
    head = (
        f"{'hosts':>5} {'case':16} {'runs':>4} {'host':>6} {'link':>6} {'exact':>6} {'any':>6}"
        f" {'wrong':>6} {'links':>6} {'other kinds':12} {'effect':>7} {'cross':>6} {'sigma':>6}"
        f" {'wall med':>8} {'max':>6}"
    )
    lines = [head]
    # by bed, and within one in the order the campaign ran the cases (a stable sort)
    for (hosts, _, case), rs in sorted(rows.items(), key=lambda x: (x[0][0], x[0][1])):
        verdicts = [v for v in map(verdict_of, rs) if v is not None]
        shares = [
            f"{sum(bool(v[i]) for v in verdicts)}/{len(rs)}"
            if any(v[i] is not None for v in verdicts)
            else "-"
            for i in range(5)
        ]

        others = sorted(
            {
                k
                for r in rs
                for k, v in (r["named"] or {}).items()
                if v and k not in ("hosts", "links")
            }
        )
        effects = [
            r["planted_host_effect_pct"] for r in rs if r["planted_host_effect_pct"] is not None
        ]
        cross = [r["raw_pct"]["cross"] for r in rs if r["raw_pct"] and "cross" in r["raw_pct"]]
        sigmas = [r["sigma_pct"] for r in rs if r["sigma_pct"] is not None]
        walls = [r["wall_s"] for r in rs]
        nlinks = [len(r["named"]["links"]) for r in rs if r["named"] is not None]
        lines.append(
            f"{hosts:5} {case:16} {len(rs):4} "
            + " ".join(f"{x:>6}" for x in shares)
            + f" {_med(nlinks, '', 'g'):>6} {','.join(others) or '-':12}"
            f" {_med(effects, '+'):>7} {_med(cross, '+'):>6} {_med(sigmas, ''):>6}"
            f" {statistics.median(walls):7.1f}s {max(walls):5.1f}s"
        )
    lines += [
        "host, link: runs naming the planted host (nodeC), the planted link (nodeA-nodeF);",
        "exact: those and nothing else; any: anything named; wrong: a host, link or rail not",
        "planted (uplink cases: a host or rail); links: median count of links named; other",
        "kinds: kinds named beyond hosts and links; effect: nodeC's median effect (model);",
        "cross: median time of the pairs across the switches against the others' (raw, %).",
    ]
    text = "\n".join(lines)
    print(text)
    if outdir:
        with open(os.path.join(outdir, "summary.txt"), "w", encoding="utf-8") as f:
            f.write(text + "\n")


def _med(values, sign, form=".1f%"):
    """The median of `values` as text ("-" for none): a percentage, or as `form` says."""
    if not values:
        return "-"
    if form.endswith("%"):
        return f"{statistics.median(values):{sign}{form[:-1]}}%"
    return f"{statistics.median(values):{sign}{form}}"


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="cases: " + " ".join(default_cases()) + " (and hostP+linkF)",
    )
    parser.add_argument("outdir", metavar="OUTDIR")
    parser.add_argument("--hosts", type=int, nargs="+", default=[6, 8], help="bed sizes")
    parser.add_argument(
        "--runs", type=int, help="runs of each case (default 10) or factor (--calibrate: 2)"
    )
    parser.add_argument("--cases", nargs="+", metavar="CASE", default=default_cases())
    parser.add_argument("--calibration", metavar="FILE", help="a calibration.json to use")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--calibrate", action="store_true", help="measure factor -> host effect")
    mode.add_argument("--summary", action="store_true", help="print OUTDIR's table; run nothing")
    parser.add_argument(
        "--factors",
        type=float,
        nargs="+",
        default=list(CALIBRATION_FACTORS),
        help="the host factors --calibrate measures",
    )
    args = parser.parse_args(argv)
    if args.summary:
        show_summary(read_jsonl(os.path.join(args.outdir, "runs.jsonl")), None)
        return 0
    try:
        for name in args.cases:
            parse_case(name)
    except ValueError as e:
        parser.error(str(e))
    if any(h < 4 or h > 26 for h in args.hosts):
        parser.error("--hosts: 4 to 26 (fewer than 4 hosts are not judged)")
    if os.geteuid() != 0:
        parser.error("the test bed needs root")
    args.runs = args.runs or (2 if args.calibrate else 10)
    os.makedirs(args.outdir, exist_ok=True)
    try:
        return calibrate(args) if args.calibrate else campaign(args)
    except KeyboardInterrupt:  # the bed is gone (stop() in a finally); what ran is kept
        kept = "calibration.jsonl" if args.calibrate else "runs.jsonl"
        print(f"interrupted: the runs that ended are in {os.path.join(args.outdir, kept)}")
        return 130


if __name__ == "__main__":
    sys.exit(main())
