#!/usr/bin/env python3
"""The fleet check on simulated fleets, end to end through fleet.judge with its re-test
(issue 46, item 3): how often tools/xfertools/fleet.py calls a planted slow host or link,
and how many healthy ones it calls, after the screen, the re-test and its control pairs.
No network, no GPU.

    simulate.py [--hosts 1024 4096] [--fleets 50 20] [--settings bed wide] [--passes 1]
        [--workers 1] [--seed 46] [--out results.json.xz] [--jsonl FILE]
    simulate.py --report results.json.xz          (or a .jsonl: print the tables again)

A fleet of N hosts, one rank a host. Each measurement of a pair (time per message) is
lognormal: log t = log 5 us + a_i + a_j + link_ij + sigma z, and + log 1.5 on 2% of the
measurements (congestion), each drawn independently. Healthy hosts a_i ~ N(0, tau). Settings
(sigma, tau): "bed" (1.0%, 0.4%: what the 8-host test bed measured, docs/results/2026-11-28-
fleet-bed: sigma median 0.58-0.71%, max 1.13%, host spread 0.2-0.5%) and "wide" (3%, 2%: the
2026-11-28 simulation's setting, a stress); NAME:SIGMA:TAU gives another.

Planted in every fleet, so that one fleet gives the whole curve:
- slow hosts at +5%, +10%, +15%, +20%, +30%, 0.2% of the hosts each (at least 2 each). A
  planted host's effect is the stated one ON TOP OF its own healthy draw a_i: its true effect
  is a_i + log(1 + effect), so a +10% host is +10% +- tau.
- slow links at 1.3x and 2x, 0.05% of the pairs each (at least 5 each), between hosts not
  planted slow, no pair twice.

Each fleet, as tools/fleet run would: one or two passes (--passes), each pass every pair once
in the rounds of fleet.round_matrix(n, fleet.pass_relabel(n, p, seed)), as a fleet.Series
(layers of log times, rounds); fleet.judge(series) (the screen; its verdict's retest_rounds);
those rounds measured afresh in a job of their own: fresh noise, its own 2% congestion, and a
whole-job level shift drawn N(0, --job-sd = 3%) on the log scale (the control pairs must
absorb it), into series.retests as {(a, b): [log t, ...]} (a pair measured in several rounds
has several values); fleet.judge(series) again: the final verdict (status "slow" = called).

Counted per fleet (results.json.xz holds every fleet's): planted hosts of each effect
suspected by the screen and called; fleets where every +10% host was called; healthy hosts
suspected and called; links of each factor suspected and called; healthy pairs suspected
and called; planted links with an end called as a slow host (blamed on a host); the re-test's
size (rounds, measurements, pairs); fitted sigma, tau, thresholds; seconds (simulation and
both judges). Every planted host and every suspected host is listed (host_detail) with its
true effect, its first-pass effect and p, its re-test estimate and its status; every planted
link not called (missed_links) with what the screen and the re-test made of it.

Resumable: every fleet is a line of the JSONL (--jsonl, default OUT less .json.xz plus
.jsonl) as it finishes; a run with the same arguments skips the fleets already there, and
results.json.xz is rewritten (atomically) from the JSONL after each fleet.

BLAS threads are limited to --threads (1) before numpy loads: a worker is one core.
"""

import argparse
import hashlib
import json
import lzma
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))

BASE_US = 5.0
CONGESTION = 0.02
CONGESTION_FACTOR = 1.5
HOST_EFFECTS = (0.05, 0.10, 0.15, 0.20, 0.30)
HOST_SHARE, HOST_MIN = 0.002, 2
LINK_FACTORS = (1.3, 2.0)
LINK_SHARE, LINK_MIN = 0.0005, 5
SETTINGS = {"bed": (0.010, 0.004), "wide": (0.030, 0.020)}


def planted_counts(n):
    """(slow hosts of each effect, slow links of each factor) in a fleet of n hosts."""
    pairs = n * (n - 1) // 2
    return max(HOST_MIN, round(HOST_SHARE * n)), max(LINK_MIN, round(LINK_SHARE * pairs))


def name(i):
    return f"h{i:05d}"


def one_fleet(task):
    """One simulated fleet, judged twice (the screen, then after its re-test): its counts."""
    import numpy as np

    from xfertools.fleet import model as fleet

    n, passes = task["n"], task["passes"]
    sigma, tau, job_sd, round_sd = task["sigma"], task["tau"], task["job_sd"], task["round_sd"]
    congestion = task["congestion"]
    rng = np.random.default_rng(np.random.SeedSequence(task["entropy"]))
    t0 = time.time()

    # the fleet: healthy draws, planted hosts on top of them, planted links between others
    a = rng.normal(0, tau, n)
    per_effect, per_factor = planted_counts(n)
    order = rng.permutation(n)
    effect = np.zeros(n)
    for k, e in enumerate(HOST_EFFECTS):
        effect[order[k * per_effect : (k + 1) * per_effect]] = e
    host = a + np.log1p(effect)
    planted = effect > 0
    healthy = np.nonzero(~planted)[0]
    link = {}
    for factor in LINK_FACTORS:
        chosen = 0
        while chosen < per_factor:
            i, j = rng.choice(healthy, 2, replace=False)
            pair = (int(min(i, j)), int(max(i, j)))
            if pair not in link:
                link[pair] = factor
                chosen += 1
    la = np.array([p[0] for p in link])
    lb = np.array([p[1] for p in link])
    lv = np.log(np.array([link[p] for p in link]))
    log_c = math.log(CONGESTION_FACTOR)

    # the passes: every pair once a pass, in the rounds of that pass's relabel
    relabel_seed = int(rng.integers(0, 2**63))
    layers = np.empty((passes, n, n), dtype=np.float32)
    rounds = np.empty((passes, n, n), dtype=np.int64)
    for p in range(passes):
        rounds[p] = fleet.round_matrix(n, fleet.pass_relabel(n, p, relabel_seed))
        y = rng.standard_normal((n, n), dtype=np.float32)
        y *= np.float32(sigma)
        y += (rng.random((n, n), dtype=np.float32) < congestion) * np.float32(log_c)
        if round_sd > 0:
            y += rng.normal(0, round_sd, n).astype(np.float32)[np.maximum(rounds[p], 0)]
        y = np.triu(y, 1)
        y += y.T
        y += (host[:, None] + host[None, :] + math.log(BASE_US)).astype(np.float32)
        y[la, lb] += lv.astype(np.float32)
        y[lb, la] += lv.astype(np.float32)
        np.fill_diagonal(y, np.nan)
        layers[p] = y
        del y
    names = [name(i) for i in range(n)]
    series = fleet.Series(
        path="sim",
        family="sim",
        bytes=8,
        names=names,
        hosts=names,
        host_of=list(range(n)),
        layers=layers,
        rounds=rounds,
        passes=list(range(passes)),
    )
    t1 = time.time()

    first = fleet.judge(series)
    t2 = time.time()

    # the re-test: its rounds measured afresh in a job of its own
    job = float(rng.normal(0, job_sd))
    retests, measurements = {}, 0
    for rnd in first["retest_rounds"]:
        shift = job + (float(rng.normal(0, round_sd)) if round_sd > 0 else 0.0)
        pairs = [(min(x, y), max(x, y)) for x, y in rnd]
        if not pairs:
            continue
        ra = np.array([p[0] for p in pairs])
        rb = np.array([p[1] for p in pairs])
        v = math.log(BASE_US) + shift + host[ra] + host[rb] + rng.normal(0, sigma, ra.size)
        v += np.log(np.array([link.get(p, 1.0) for p in pairs]))
        v += (rng.random(ra.size) < congestion) * log_c
        for pair, t in zip(pairs, v):
            retests.setdefault(pair, []).append(float(t))
        measurements += len(pairs)
    series.retests = retests
    t3 = time.time()
    final = fleet.judge(series) if retests else first
    t4 = time.time()

    # the counts
    index = {nm: i for i, nm in enumerate(names)}
    suspect_hosts = {index[h] for h in first["suspects"]["hosts"]}
    suspect_links = set()
    for text in first["suspects"]["links"]:
        x, y = (index[s] for s in text.split("-"))
        suspect_links.add((min(x, y), max(x, y)))
    status = {index[e["host"]]: e for e in final["hosts"]}
    called_hosts = {i for i, e in status.items() if e["status"] == "slow"}
    link_status = {tuple(sorted(e["ranks"])): e for e in final["links"]}
    called_links = {p for p, e in link_status.items() if e["status"] == "slow"}
    fitted = final["host_effects"]

    out = {
        "n": n,
        "passes": passes,
        "fleet": task["fleet"],
        "entropy": task["entropy"],
        "job_shift_pct": 100 * math.expm1(job),
        "healthy_hosts": int((~planted).sum()),
        "healthy_pairs": n * (n - 1) // 2 - len(link),
        "hosts": {},
        "links": {},
    }
    for e in HOST_EFFECTS:
        mine = np.nonzero(effect == e)[0]
        out["hosts"][f"{e:g}"] = {
            "planted": int(mine.size),
            "suspected": sum(int(i) in suspect_hosts for i in mine),
            "called": sum(int(i) in called_hosts for i in mine),
        }
    out["all_10_called"] = int(out["hosts"]["0.1"]["called"] == out["hosts"]["0.1"]["planted"])
    out["false_hosts_suspected"] = sum(not planted[i] for i in suspect_hosts)
    out["false_hosts_called"] = sum(not planted[i] for i in called_hosts)
    for factor in LINK_FACTORS:
        mine = [p for p, f in link.items() if f == factor]
        out["links"][f"{factor:g}"] = {
            "planted": len(mine),
            "suspected": sum(p in suspect_links for p in mine),
            "called": sum(p in called_links for p in mine),
            "blamed": sum(p[0] in called_hosts or p[1] in called_hosts for p in mine),
        }
    out["false_links_suspected"] = sum(p not in link for p in suspect_links)
    out["false_links_called"] = sum(p not in link for p in called_links)
    # a pair with a planted slow host called as a link: the host's effect put on a link
    out["false_links_with_slow_host"] = sum(
        bool(p not in link and (planted[p[0]] or planted[p[1]])) for p in called_links
    )

    def detail(i):
        e = status.get(i)
        again = [x["effect_pct"] for x in (e or {}).get("retest") or [] if x]
        return {
            "host": int(i),
            "planted_pct": 100 * float(effect[i]),
            "true_pct": 100 * math.expm1(float(host[i])),
            "first_pct": fitted.get(names[i], {}).get("effect_pct"),
            "first_p": None if e is None else e["p"],
            "suspected": bool(i in suspect_hosts),
            "retest_pct": again[0] if again else None,
            "status": None if e is None else e["status"],
        }

    # every planted host and every suspect: what the first pass and the re-test made of it
    out["host_detail"] = [
        detail(i) for i in sorted(set(np.nonzero(planted)[0].tolist()) | suspect_hosts)
    ]
    out.update(derived(out))
    # a boundary (switch, uplink) named without a topology: none is planted
    out["switches_named"] = sum(e.get("status") == "slow" for e in final.get("switches", []))
    out["not_retested"] = sum(e["status"] == "suspect" for e in final["hosts"] + final["links"])
    out["missed_links"] = [
        {
            "pair": list(p),
            "factor": f,
            "suspected": p in suspect_links,
            "first_pct": None if p not in link_status else link_status[p]["effect_pct"],
            "retest_pct": None if p not in link_status else link_status[p]["retest_effect_pct"],
            "status": None if p not in link_status else link_status[p]["status"],
            "end_suspected": bool(p[0] in suspect_hosts or p[1] in suspect_hosts),
        }
        for p, f in link.items()
        if p not in called_links
    ]
    plan = first["retest_rounds"]
    out["retest"] = {
        "rounds": len(plan),
        "measurements": measurements,
        "pairs": len(retests),
        "suspect_hosts": len(suspect_hosts),
        "suspect_links": len(suspect_links),
    }
    out["fit"] = {
        "sigma_pct": final.get("sigma_pct"),
        "tau_pct": final.get("tau_pct"),
        "host_threshold_pct": final.get("thresholds_pct", {}).get("host"),
        "link_threshold_pct": final.get("thresholds_pct", {}).get("link"),
        "screen_host_pct": final.get("screen_pct", {}).get("host"),
        "screen_link_pct": final.get("screen_pct", {}).get("link"),
    }
    if "repeatability" in final:
        out["repeatability"] = final["repeatability"]
    out["seconds"] = {
        "simulate": (t1 - t0) + (t3 - t2),
        "screen": t2 - t1,
        "final": t4 - t3,
        "total": t4 - t0,
    }
    return out


# ------------------------------------------------------------------------------ summaries


def derived(row):
    """Counts of a fleet's host_detail: retest_offset_pct, the re-test's estimate less the
    first pass's (log, %), median over the suspect hosts: mostly the error of the re-test
    job's level (the control pairs), which every suspect shares; false_hosts_called_true_5,
    healthy hosts called whose own draw a_i is +5% or more (the data cannot tell them from a
    slow host)."""
    shifts = [
        math.log1p(d["retest_pct"] / 100) - math.log1p(d["first_pct"] / 100)
        for d in row["host_detail"]
        if d["suspected"] and d["retest_pct"] is not None and d["first_pct"] is not None
    ]
    shifts.sort()
    return {
        "retest_offset_pct": 100 * shifts[len(shifts) // 2] if shifts else None,
        "false_hosts_called_true_5": sum(
            d["planted_pct"] == 0 and d["status"] == "slow" and d["true_pct"] >= 5.0
            for d in row["host_detail"]
        ),
    }


def stats_of(values):
    """{"median", "max"} of the values that are not None."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return {"median": None, "max": None}
    return {"median": values[len(values) // 2], "max": values[-1]}


def summarise(rows):
    """Totals and rates over a setting's fleets."""
    rows = [r if "retest_offset_pct" in r else {**r, **derived(r)} for r in rows]
    s = {"fleets": len(rows)}
    healthy_hosts = sum(r["healthy_hosts"] for r in rows)
    healthy_pairs = sum(r["healthy_pairs"] for r in rows)
    s["healthy_hosts"], s["healthy_pairs"] = healthy_hosts, healthy_pairs
    for e in HOST_EFFECTS:
        key = f"{e:g}"
        planted = sum(r["hosts"][key]["planted"] for r in rows)
        s[f"host_{key}_planted"] = planted
        for what in ("suspected", "called"):
            s[f"host_{key}_{what}"] = sum(r["hosts"][key][what] for r in rows) / planted
    s["fleets_all_10_called"] = sum(r["all_10_called"] for r in rows) / len(rows)
    for what in ("suspected", "called"):
        s[f"false_hosts_{what}_per_1000"] = (
            1000 * sum(r[f"false_hosts_{what}"] for r in rows) / healthy_hosts
        )
        s[f"false_links_{what}_per_1000"] = (
            1000 * sum(r[f"false_links_{what}"] for r in rows) / healthy_pairs
        )
    for factor in LINK_FACTORS:
        key = f"{factor:g}"
        planted = sum(r["links"][key]["planted"] for r in rows)
        s[f"link_{key}_planted"] = planted
        for what in ("suspected", "called", "blamed"):
            s[f"link_{key}_{what}"] = sum(r["links"][key][what] for r in rows) / planted
    s["links_blamed"] = sum(
        r["links"][f"{f:g}"]["blamed"] for r in rows for f in LINK_FACTORS
    ) / sum(s[f"link_{f:g}_planted"] for f in LINK_FACTORS)
    s["false_links_with_slow_host"] = sum(r["false_links_with_slow_host"] for r in rows)
    s["not_retested"] = sum(r["not_retested"] for r in rows)
    s["switches_named"] = sum(r.get("switches_named", 0) for r in rows)
    s["false_hosts_called_true_5"] = sum(r["false_hosts_called_true_5"] for r in rows)
    offsets = [abs(r["retest_offset_pct"]) for r in rows if r["retest_offset_pct"] is not None]
    s["retest_offset_abs"] = stats_of(offsets)
    s["fleets_offset_over_2pct"] = sum(x > 2 for x in offsets) / len(rows)

    for key in ("rounds", "measurements", "pairs", "suspect_hosts", "suspect_links"):
        s[f"retest_{key}"] = stats_of(r["retest"][key] for r in rows)
    for key in rows[0]["fit"]:
        s[key] = stats_of(r["fit"][key] for r in rows)
    for key in ("total", "screen", "final", "simulate"):
        s[f"seconds_{key}"] = stats_of(r["seconds"][key] for r in rows)
    return s


def pct(x, digits=1):
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def num(x, fmt="{:.1f}"):
    return "-" if x is None else fmt.format(x)


def report(doc):
    """Markdown tables of a results document."""
    lines = []
    hosts_head = " | ".join(f"+{100 * e:g}% host" for e in HOST_EFFECTS)
    head = (
        f"| N | setting | passes | fleets | {hosts_head} | fleets with all +10% "
        "| false hosts / 1,000 | 1.3x links | 2x links | false links / 1,000 "
        "| links blamed on a host |"
    )
    lines += ["Called after the re-test (share of the planted ones):", "", head]
    lines.append("|" + "---|" * (10 + len(HOST_EFFECTS)))
    for st in doc["settings"]:
        s = st["summary"]
        hosts = " | ".join(pct(s[f"host_{e:g}_called"]) for e in HOST_EFFECTS)
        lines.append(
            f"| {st['n']} | {st['setting']} | {st['passes']} | {s['fleets']} | {hosts} "
            f"| {pct(s['fleets_all_10_called'], 0)} | {s['false_hosts_called_per_1000']:.3f} "
            f"| {pct(s['link_1.3_called'])} | {pct(s['link_2_called'])} "
            f"| {s['false_links_called_per_1000']:.4f} | {pct(s['links_blamed'], 2)} |"
        )
    head = (
        f"| N | setting | passes | {hosts_head} | false hosts / 1,000 "
        "| 1.3x links | 2x links | false links / 1,000 |"
    )
    lines += ["", "Suspected by the screen (before the re-test):", "", head]
    lines.append("|" + "---|" * (7 + len(HOST_EFFECTS)))
    for st in doc["settings"]:
        s = st["summary"]
        hosts = " | ".join(pct(s[f"host_{e:g}_suspected"]) for e in HOST_EFFECTS)
        lines.append(
            f"| {st['n']} | {st['setting']} | {st['passes']} | {hosts} "
            f"| {s['false_hosts_suspected_per_1000']:.2f} | {pct(s['link_1.3_suspected'])} "
            f"| {pct(s['link_2_suspected'])} | {s['false_links_suspected_per_1000']:.2f} |"
        )
    lines += [
        "",
        "The fit, the re-test's size and the cost (median, max over the fleets; seconds: "
        "this machine, a fleet, simulation and both judges):",
        "",
        "| N | setting | passes | sigma | tau | host call / screen | link call / screen "
        "| suspect hosts | suspect links | re-test rounds | re-test measurements "
        "| s a fleet | s a judge (screen, final) |",
        "|" + "---|" * 13,
    ]
    for st in doc["settings"]:
        s = st["summary"]

        def mm(key, fmt="{:.0f}", s=s):
            return f"{num(s[key]['median'], fmt)}, {num(s[key]['max'], fmt)}"

        lines.append(
            f"| {st['n']} | {st['setting']} | {st['passes']} "
            f"| {num(s['sigma_pct']['median'], '{:.2f}%')} "
            f"| {num(s['tau_pct']['median'], '{:.2f}%')} "
            f"| {num(s['host_threshold_pct']['median'])}% / "
            f"{num(s['screen_host_pct']['median'])}% "
            f"| {num(s['link_threshold_pct']['median'])}% / "
            f"{num(s['screen_link_pct']['median'])}% "
            f"| {mm('retest_suspect_hosts')} | {mm('retest_suspect_links')} "
            f"| {mm('retest_rounds')} | {mm('retest_measurements')} "
            f"| {mm('seconds_total', '{:.1f}')} "
            f"| {num(s['seconds_screen']['median'])}, {num(s['seconds_final']['median'])} |"
        )
    lines += [
        "",
        "The re-test job's level (the re-test's host estimates less the first pass's, median "
        "over a fleet's suspects; |offset|, median and max over the fleets; share of fleets "
        "beyond 2%) and the healthy hosts called whose own draw is +5% or more:",
        "",
        "| N | setting | passes | re-test offset, median, max | fleets beyond 2% "
        "| false hosts with a_i >= +5% |",
        "|---|---|---|---|---|---|",
    ]
    for st in doc["settings"]:
        s = st["summary"]
        off = s["retest_offset_abs"]
        lines.append(
            f"| {st['n']} | {st['setting']} | {st['passes']} "
            f"| {num(off['median'], '{:.2f}%')}, {num(off['max'], '{:.2f}%')} "
            f"| {pct(s['fleets_offset_over_2pct'], 0)} | {s['false_hosts_called_true_5']} |"
        )
    odd = [
        f"{st['n']} {st['setting']} {st['passes']}p: {s['not_retested']} suspects not "
        f"re-tested, {s['false_links_with_slow_host']} false links on a slow host's pairs, "
        f"{s.get('switches_named', 0)} switches or boundaries named (none planted)"
        for st in doc["settings"]
        for s in [st["summary"]]
        if s["not_retested"] or s["false_links_with_slow_host"] or s.get("switches_named")
    ]
    if odd:
        lines += [""] + odd
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the files


def setting_key(row):
    return (row["n"], row["setting"], row["passes"])


def read_jsonl(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:  # a line cut short by a kill: redone
                        pass
    return rows


def document(rows, args, about):
    """The results document of these rows: one entry per (N, setting, passes)."""
    groups = {}
    for r in rows:
        groups.setdefault(setting_key(r), []).append(r)
    settings = []
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2])):
        mine = sorted(groups[key], key=lambda r: r["fleet"])
        settings.append(
            {
                "n": key[0],
                "setting": key[1],
                "passes": key[2],
                "sigma": mine[0]["sigma"],
                "tau": mine[0]["tau"],
                "summary": summarise(mine),
                "fleets": mine,
            }
        )
    return {**about, "args": args, "settings": settings}


def write_atomic(path, doc):
    part = path + ".part"
    with lzma.open(part, "wt") as f:
        json.dump(doc, f, default=lambda x: x.item())
    os.replace(part, path)


def code_version():
    """The commit and the fleet model's hash (other work edits it while this runs)."""
    src = os.path.join(ROOT, "tools", "xfertools", "fleet", "model.py")
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    try:
        commit = subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", ROOT, "status", "--porcelain", "tools/xfertools/fleet/model.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = None, ""
    return {"commit": commit, "fleet_py_modified": bool(dirty), "fleet_py_sha256": digest}


def parse_settings(values):
    out = []
    for v in values:
        if v in SETTINGS:
            out.append((v, *SETTINGS[v]))
        else:
            nm, sigma, tau = v.split(":")
            out.append((nm, float(sigma), float(tau)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument(
        "--fleets", type=int, nargs="+", default=[50, 20], help="fleets a setting, per --hosts"
    )
    parser.add_argument(
        "--settings", nargs="+", default=["bed", "wide"], help="bed, wide or NAME:SIGMA:TAU"
    )
    parser.add_argument("--passes", type=int, nargs="+", default=[1], choices=[1, 2])
    parser.add_argument("--job-sd", type=float, default=0.03, help="re-test job shift sd (log)")
    parser.add_argument("--round-sd", type=float, default=0.0, help="per-round shift sd (log)")
    parser.add_argument("--congestion", type=float, default=CONGESTION)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads a worker")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--out", default="results.json.xz")
    parser.add_argument("--jsonl", help="per-fleet lines (default: from --out)")
    parser.add_argument("--report", metavar="FILE", help="print the tables of a results file")
    args = parser.parse_args()
    if args.report:
        if args.report.endswith(".jsonl"):
            doc = document(read_jsonl(args.report), None, {})
        else:
            with lzma.open(args.report, "rt") as f:
                doc = json.load(f)
        print(report(doc))
        return
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    fleets = args.fleets if len(args.fleets) > 1 else args.fleets * len(args.hosts)
    if len(fleets) != len(args.hosts):
        parser.error("--fleets: one count, or one per --hosts")
    stem = args.out[: -len(".json.xz")] if args.out.endswith(".json.xz") else args.out
    jsonl = args.jsonl or stem + ".jsonl"
    run = (args.seed, args.job_sd, args.round_sd, args.congestion)

    def same_run(r):
        return (r["seed"], r["job_sd"], r["round_sd"], r["congestion"]) == run

    done = [r for r in read_jsonl(jsonl) if same_run(r)]
    have = {(*setting_key(r), r["sigma"], r["tau"], r["fleet"]) for r in done}
    tasks = []
    for n, count in zip(args.hosts, fleets):
        for nm, sigma, tau in parse_settings(args.settings):
            for passes in args.passes:
                for i in range(count):
                    if (n, nm, passes, sigma, tau, i) in have:
                        continue
                    tasks.append(
                        {
                            "n": n,
                            "setting": nm,
                            "sigma": sigma,
                            "tau": tau,
                            "passes": passes,
                            "fleet": i,
                            "seed": args.seed,
                            # the fleet's draws: this seed, N, setting and fleet index (the
                            # passes share them: pass 0 of a 2-pass fleet is the 1-pass fleet)
                            "entropy": [args.seed, n, int(sigma * 1e6), int(tau * 1e6), i],
                            "job_sd": args.job_sd,
                            "round_sd": args.round_sd,
                            "congestion": args.congestion,
                        }
                    )
    about = {"about": "docs/results/2026-11-29-fleet-simulation/simulate.py", **code_version()}
    print(f"{len(tasks)} fleets to run, {len(have)} already in {jsonl}", flush=True)

    def results():
        if args.workers <= 1:
            for t in tasks:
                yield t, one_fleet(t)
        else:
            import multiprocessing

            with multiprocessing.Pool(args.workers) as pool:
                yield from zip(tasks, pool.imap(one_fleet, tasks))  # in order: zip is right

    with open(jsonl, "a") as f:
        for task, row in results():
            row.update(
                setting=task["setting"], sigma=task["sigma"], tau=task["tau"], seed=task["seed"],
                job_sd=task["job_sd"], round_sd=task["round_sd"], congestion=task["congestion"],
                code=about,
            )  # fmt: skip
            f.write(json.dumps(row, default=lambda x: x.item()) + "\n")  # numpy scalars
            f.flush()
            done.append(row)
            h = row["hosts"]
            print(
                f"N={row['n']} {row['setting']} {row['passes']}p fleet {row['fleet']}: "
                f"{row['seconds']['total']:.2f} s (screen {row['seconds']['screen']:.2f}, "
                f"final {row['seconds']['final']:.2f}); called "
                + " ".join(f"+{100 * float(e):g}%:{h[e]['called']}/{h[e]['planted']}" for e in h)
                + f", false hosts {row['false_hosts_called']}"
                f" (suspected {row['false_hosts_suspected']}), links "
                + " ".join(
                    f"{k}x:{v['called']}/{v['planted']}" for k, v in row["links"].items()
                )
                + f", false links {row['false_links_called']}"
                f" (suspected {row['false_links_suspected']}); re-test "
                f"{row['retest']['rounds']} rounds, {row['retest']['measurements']} measurements",
                flush=True,
            )
            write_atomic(args.out, document(done, vars(args), about))
    if done:
        print(report(document(done, vars(args), about)))


if __name__ == "__main__":
    main()
