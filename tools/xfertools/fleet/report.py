"""tools/fleet's judgement: a fleet result (xferbench --xfer_fleet) and its re-tests read and
checked, every series (family and size) judged by fleet.judge, and what a person reads: the
verdict as text, the host-by-host matrix, the re-test rounds file and the verdict document.

What tools/fleet exits with follows from the verdicts (status()): 1 where a host, rail or link
is called slow in any series; else 3 where the verdict is not final (suspects not re-tested, or
the schedule did not finish: lost ranks, rounds not measured); else 0.
"""

import json
import math

import numpy as np

from ..core import files
from ..core.files import InputError, decode_json, read_regular_file, write_atomically
from ..core.finite import is_finite_number, non_finite_as_none
from ..core.sizes import format_size
from ..core.text import clip, one_line, plural
from . import model as fleet

VERDICT_FORMAT = "xferbench-fleet-verdict/1"
ROUNDS_FORMAT = "xferbench-fleet-rounds/1"
EXIT_FINE = 0  # nothing named (or every suspect cleared by its re-test)
EXIT_NAMED = 1  # a host, rail or link called slow
EXIT_BAD_INPUT = 2
EXIT_NOT_FINAL = 3  # suspects not re-tested, or the schedule did not finish
MATRIX_DEFAULT_HOSTS = 16  # the matrix is printed without --matrix up to this many hosts
SLOW, SUSPECT = "*", "^"  # marks in the matrix


# ----------------------------------------------------------------------------- reading


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _check_times(where, values, count, what):
    if not isinstance(values, list) or len(values) != count:
        length = len(values) if isinstance(values, list) else type(values).__name__
        raise InputError(f"{where}: {what}: {length} values, expected {count}")
    for k, value in enumerate(values):
        if value is None:
            continue
        if not is_finite_number(value) or value <= 0:
            raise InputError(
                f"{where}: {what}[{k}]: {value!r} is not a positive time in us (null marks a "
                "pair not measured)"
            )


def check_fleet(where, document):
    """The "fleet" object of document, checked against format xferbench-fleet/1; InputError
    naming `where` and the field for anything a judgement cannot use."""
    found = files.fleet_object(document)
    if found is not None:  # xferbench writes it in context.xferbench; read it as "fleet"
        document["fleet"] = found
    if found is None:
        raise InputError(
            f"{where}: no 'fleet' object: not a result of xferbench --xfer_fleet or "
            f"--xfer_fleet_rounds (format {fleet.FORMAT})"
        )
    f = document["fleet"]
    if f.get("format") != fleet.FORMAT:
        raise InputError(
            f"{where}: fleet.format is {clip(repr(f.get('format')))}, expected {fleet.FORMAT}"
        )
    n = _check_ranks(where, f)
    _check_passes(where, f, n)
    _check_series(where, f, n)
    _check_retests(where, f, n)
    _check_progress(where, f, n)
    return f


def _check_ranks(where, f):
    """fleet.ranks, hosts and host_of; returns the rank count."""
    n = f.get("ranks")
    if not _is_int(n) or n < 2:
        raise InputError(f"{where}: fleet.ranks: {n!r}, expected a whole number of 2 or more")
    hosts = f.get("hosts")
    if (
        not isinstance(hosts, list)
        or not hosts
        or not all(isinstance(h, str) and h for h in hosts)
        or len(set(hosts)) != len(hosts)
    ):
        raise InputError(f"{where}: fleet.hosts: expected a list of distinct host names")
    host_of = f.get("host_of")
    if (
        not isinstance(host_of, list)
        or len(host_of) != n
        or not all(_is_int(h) and 0 <= h < len(hosts) for h in host_of)
    ):
        raise InputError(
            f"{where}: fleet.host_of: expected {n} indices into fleet.hosts (0 to "
            f"{len(hosts) - 1}), one a rank"
        )
    if set(host_of) != set(range(len(hosts))):
        raise InputError(f"{where}: fleet.host_of: a host of fleet.hosts has no rank")
    return n


def _check_passes(where, f, n):
    """fleet.passes: each pass's number and the relabelling of its schedule."""
    passes = f.get("passes", [])
    if not isinstance(passes, list):
        raise InputError(f"{where}: fleet.passes: expected a list")
    for k, p in enumerate(passes):
        relabel = p.get("relabel") if isinstance(p, dict) else None
        if not isinstance(p, dict) or not _is_int(p.get("pass")):
            raise InputError(
                f"{where}: fleet.passes[{k}]: expected {{'pass': N, 'relabel': [...]}}"
            )
        if relabel is not None and sorted(relabel) != list(range(n)):
            raise InputError(f"{where}: fleet.passes[{k}].relabel: not a permutation of the ranks")


def _check_series(where, f, n):
    """fleet.series: one entry a family, size and pass, a time (or null) for every pair."""
    if not isinstance(f.get("series", []) or [], list):
        raise InputError(f"{where}: fleet.series: expected a list")
    pairs = n * (n - 1) // 2
    seen = set()
    for k, s in enumerate(f.get("series", []) or []):
        name = f"fleet.series[{k}]"
        if not isinstance(s, dict) or not isinstance(s.get("path"), str):
            raise InputError(f"{where}: {name}: expected an object with a 'path'")
        if not _is_int(s.get("bytes")) or s["bytes"] < 0:
            raise InputError(f"{where}: {name}.bytes: {s.get('bytes')!r}, expected a size")
        if not _is_int(s.get("pass", 0)):
            raise InputError(f"{where}: {name}.pass: expected a whole number")
        key = (fleet.family_of(s), s["bytes"], s.get("pass", 0))
        if key in seen:
            raise InputError(f"{where}: {name}: {key[0]} at {key[1]} B, pass {key[2]}, given twice")
        seen.add(key)
        _check_times(where, s.get("time_us"), pairs, f"{name}.time_us")
        rounds = s.get("round_of")
        if rounds is not None and (
            not isinstance(rounds, list)
            or len(rounds) != pairs
            or not all(_is_int(r) and r >= -1 for r in rounds)
        ):
            raise InputError(f"{where}: {name}.round_of: expected {pairs} round numbers (-1: none)")


def _check_retests(where, f, n):
    """fleet.retests: pairs of ranks and a time for each."""
    retests = f.get("retests", []) or []
    if not isinstance(retests, list):
        raise InputError(f"{where}: fleet.retests: expected a list")
    for k, r in enumerate(retests):
        name = f"fleet.retests[{k}]"
        if not isinstance(r, dict) or not isinstance(r.get("path"), str):
            raise InputError(f"{where}: {name}: expected an object with a 'path'")
        if not _is_int(r.get("bytes")) or r["bytes"] < 0:
            raise InputError(f"{where}: {name}.bytes: {r.get('bytes')!r}, expected a size")
        given = r.get("pairs")
        if not isinstance(given, list) or not all(
            isinstance(p, list)
            and len(p) == 2
            and all(_is_int(x) and 0 <= x < n for x in p)
            and p[0] != p[1]
            for p in given
        ):
            raise InputError(f"{where}: {name}.pairs: expected [a, b] pairs of ranks 0 to {n - 1}")
        _check_times(where, r.get("time_us"), len(given), f"{name}.time_us")


def _check_progress(where, f, n):
    """fleet.lost, incomplete and rounds."""
    lost = f.get("lost", []) or []
    if not isinstance(lost, list) or not all(_is_int(x) and 0 <= x < n for x in lost):
        raise InputError(f"{where}: fleet.lost: expected a list of ranks 0 to {n - 1}")
    incomplete = f.get("incomplete")
    if incomplete is not None and not isinstance(incomplete, str):
        raise InputError(f"{where}: fleet.incomplete: expected null or a text")
    rounds = f.get("rounds")
    if rounds is not None and not (
        isinstance(rounds, dict) and all(_is_int(rounds.get(k)) for k in ("planned", "measured"))
    ):
        raise InputError(f"{where}: fleet.rounds: expected {{'planned': R, 'measured': M}}")


def load_fleet(path, where=None):
    """The result document at path, its fleet object checked (check_fleet)."""
    where = path if where is None else where
    document = decode_json(where, read_regular_file(where, path))
    check_fleet(where, document)
    return document


def same_fleet(where, fleet_object, main_where, main):
    """InputError naming `where` and what differs where a re-test's fleet is not the main
    result's: ranks, hosts, the host of each rank."""
    if fleet_object["ranks"] != main["ranks"]:
        raise InputError(
            f"{where}: {fleet_object['ranks']} ranks, but {main_where} has {main['ranks']}: "
            "a re-test must run on the fleet it re-tests"
        )
    if fleet_object["hosts"] != main["hosts"]:
        mine, theirs = fleet_object["hosts"], main["hosts"]
        missing = [h for h in theirs if h not in mine]
        extra = [h for h in mine if h not in theirs]
        if missing or extra:
            what = "; ".join(
                part
                for part in (
                    f"not in it: {', '.join(missing)}" if missing else "",
                    f"not in {main_where}: {', '.join(extra)}" if extra else "",
                )
                if part
            )
        else:
            what = "the same hosts in another order"
        raise InputError(f"{where}: its hosts differ from {main_where}'s ({clip(what)})")
    if fleet_object["host_of"] != main["host_of"]:
        rank = next(
            r for r, (a, b) in enumerate(zip(fleet_object["host_of"], main["host_of"])) if a != b
        )
        raise InputError(
            f"{where}: rank {rank} ran on {fleet_object['hosts'][fleet_object['host_of'][rank]]},"
            f" but on {main['hosts'][main['host_of'][rank]]} in {main_where}"
        )


def combined(path, retest_paths):
    """(the result document with every re-test file's re-tests added to its own, notes):
    InputError for an unreadable file, a result with nothing to judge, or a re-test of another
    fleet."""
    document = load_fleet(path)
    main = document["fleet"]
    if not main.get("series"):
        if main.get("retests"):
            raise InputError(
                f"{path}: holds only re-tests (a --xfer_fleet_rounds run): give the fleet "
                f"result first and this one with --retest"
            )
        raise InputError(f"{path}: fleet.series is empty: no pair measured, nothing to judge")
    merged = dict(document)
    merged["fleet"] = dict(main)
    merged["fleet"]["retests"] = list(main.get("retests") or [])
    notes = []
    for retest in retest_paths:
        where = f"--retest {retest}"
        other = load_fleet(retest, where)["fleet"]
        same_fleet(where, other, path, main)
        if other.get("series") and not other.get("retests"):
            raise InputError(
                f"{where}: a fleet result with no re-tests (fleet.series measured, "
                "fleet.retests empty): give a --xfer_fleet_rounds run's result"
            )
        if not other.get("retests"):
            notes.append(f"{retest}: holds no re-tests ({other.get('incomplete') or 'none run'})")
        merged["fleet"]["retests"] += other.get("retests") or []
        if other.get("incomplete"):
            notes.append(f"{retest}: the re-test is incomplete: {other['incomplete']}")
    keys = {(fleet.family_of(s), s["bytes"]) for s in main["series"]}
    strays = sorted({(fleet.family_of(r), r["bytes"]) for r in merged["fleet"]["retests"]} - keys)
    for family, nbytes in strays:
        notes.append(f"re-tests of {family} at {format_size(nbytes)} match no series: left out")
    return merged, notes


# ---------------------------------------------------------------------------- judging


class Judgement:
    """Every series of a fleet result judged: series (fleet.Series), verdicts (one each),
    fleet (the merged fleet object), notes (on the input), unfinished (why the schedule did
    not finish, [] where it did)."""

    def __init__(self, series, verdicts, fleet_object, notes, unfinished):
        self.series = series
        self.verdicts = verdicts
        self.fleet = fleet_object
        self.notes = notes
        self.unfinished = unfinished

    def called(self, kind):
        """(series index, entry) of each host, rail or link (kind) called slow."""
        return [
            (k, e)
            for k, v in enumerate(self.verdicts)
            for e in v.get(kind, [])
            if e["status"] == "slow"
        ]

    def named(self):
        """Whether anything is called slow: a host, rail, link, or a switch (its uplink)."""
        return any(self.called(kind) for kind in ("hosts", "rails", "links", "switches"))

    def drain(self):
        """The Slurm hostlist of the hosts called slow in any series."""
        return fleet.hostlist(e["host"] for _, e in self.called("hosts"))

    def untested(self):
        """Per series, (host ranks, links) of the suspects not re-tested: ([ranks], [(a, b)])."""
        out = []
        for s, v in zip(self.series, self.verdicts):
            ranks = set()
            for e in v.get("hosts", []):
                if e["status"] == "suspect":
                    index = s.hosts.index(e["host"])
                    ranks |= {r for r, h in enumerate(s.host_of) if h == index}
            for e in v.get("rails", []):
                if e["status"] == "suspect":
                    ranks.add(list(s.names).index(e["rank"]))
            links = [tuple(e["ranks"]) for e in v.get("links", []) if e["status"] == "suspect"]
            out.append((sorted(ranks), links))
        return out

    def suspects_left(self):
        return any(ranks or links for ranks, links in self.untested())

    def status(self):
        if self.named():
            return EXIT_NAMED
        if self.suspects_left() or self.unfinished:
            return EXIT_NOT_FINAL
        return EXIT_FINE


def unfinished(fleet_object, launch_note=None):
    """Why the schedule did not finish, as lines ([] where it did)."""
    lines = []
    if launch_note:
        lines.append(launch_note)
    if fleet_object.get("incomplete"):
        lines.append(f"incomplete: {one_line(fleet_object['incomplete'])}")
    rounds = fleet_object.get("rounds") or {}
    if _is_int(rounds.get("planned")) and rounds.get("measured", 0) < rounds["planned"]:
        lines.append(f"{rounds['measured']} of {rounds['planned']} rounds measured")
    lost = fleet_object.get("lost") or []
    if lost:
        lines.append(f"{plural(len(set(lost)), 'rank')} lost: not judged")
    return lines


def judge_all(document, notes=(), launch_note=None, **options):
    """The Judgement of a result document (combined() with its re-tests); options go to
    fleet.judge (q, min_host, min_link, require_retest)."""
    series = fleet.from_result(document)
    verdicts = [fleet.judge(s, **options) for s in series]
    f = document["fleet"]
    return Judgement(series, verdicts, f, list(notes), unfinished(f, launch_note))


def merge_rounds(pair_lists):
    """Pairs as rounds of disjoint pairs (fleet.colour: each pair in the first round where
    both its ranks are free). A pair a list gives k times (a suspect link's repeated visits) is
    measured k times, the most any list asks; across lists it is not repeated."""
    wanted, times = [], {}
    for pairs in pair_lists:
        mine = {}
        for a, b in pairs:
            pair = (min(a, b), max(a, b))
            mine[pair] = mine.get(pair, 0) + 1
            if mine[pair] > times.get(pair, 0):
                times[pair] = mine[pair]
                wanted.append(pair)
    return [[list(pair) for pair in rnd] for rnd in fleet.colour(wanted)]


def retest_plan(judgement):
    """The re-test rounds file's document for the suspects not re-tested, or None where there
    are none: the pairs each series' verdict planned for them, merged into disjoint rounds."""
    wanted, why = [], {}
    for s, v, (ranks, links) in zip(judgement.series, judgement.verdicts, judgement.untested()):
        if not ranks and not links:
            continue
        ranks, links = set(ranks), {tuple(sorted(pair)) for pair in links}
        controls = {tuple(sorted(pair)) for pair in v.get("retest_controls", [])}
        pairs = [
            tuple(sorted(p))
            for rnd in v["retest_rounds"]
            for p in rnd
            if tuple(sorted(p)) in links | controls or p[0] in ranks or p[1] in ranks
        ]
        wanted.append(pairs)
        where = f"{s.family} at {format_size(s.bytes)}"
        for kind, key in (("hosts", "host"), ("rails", "rank"), ("links", "link")):
            for e in v.get(kind, []):
                if e["status"] == "suspect":
                    why.setdefault(f"{kind[:-1]} {e[key]}", []).append(where)
    rounds = merge_rounds(wanted)
    if not rounds:
        return None
    f = judgement.fleet
    return {
        "format": ROUNDS_FORMAT,
        "ranks": f["ranks"],
        "hosts": f["hosts"],
        "rounds": rounds,
        "why": "suspects not re-tested: "
        + "; ".join(f"{what} ({', '.join(where)})" for what, where in why.items()),
    }


# ---------------------------------------------------------------------------- the text


def _signed(percent):
    """'+3', '-1', '0' for a percentage."""
    text = f"{percent:+.0f}"
    return "0" if text in ("+0", "-0") else text


def _pct(log_value):
    """'+3', '-1', '0' for a log ratio, in percent."""
    return _signed(100 * math.expm1(log_value))


def pair_logs(series):
    """N x N log time of each pair, the mean over passes (NaN: not measured)."""
    layers = np.asarray(series.layers, dtype=float)
    if layers.ndim == 2:
        layers = layers[None]
    measured = np.isfinite(layers)
    count = measured.sum(axis=0)
    total = np.where(measured, layers, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def host_matrix(series):
    """(host names, H x H log time of each host pair relative to the fleet's median pair, NaN
    where not measured and on the diagonal, the median pair's time in us). A host pair of
    several ranks a host: the mean log time of its rank pairs."""
    logs = pair_logs(series)
    host_of = np.asarray(series.host_of)
    count = len(series.hosts)
    same = np.equal.outer(host_of, host_of)
    upper = np.triu(np.isfinite(logs) & ~same, 1)
    median = float(np.median(logs[upper])) if upper.any() else float("nan")
    member = (host_of[None, :] == np.arange(count)[:, None]).astype(float)  # host x rank
    measured = np.isfinite(logs) & ~same
    sums = member @ np.where(measured, logs, 0.0) @ member.T
    counts = member @ measured.astype(float) @ member.T
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(counts > 0, sums / np.maximum(counts, 1) - median, np.nan)
    np.fill_diagonal(values, np.nan)
    return list(series.hosts), values, math.exp(median) if math.isfinite(median) else None


def statuses(series, verdict):
    """({host name: status}, {(host i, host j): status}) of what the verdict calls slow or
    suspects and has not cleared: status 'slow' or 'suspect'. A rail marks its host."""
    live = ("slow", "suspect")
    hosts = {e["host"]: e["status"] for e in verdict.get("hosts", []) if e["status"] in live}
    for e in verdict.get("rails", []):
        if e["status"] in live and hosts.get(e["host"]) != "slow":
            hosts[e["host"]] = e["status"]
    cells = {}
    for e in verdict.get("links", []):
        if e["status"] in live:
            a, b = (series.host_of[r] for r in e["ranks"])
            cells[(a, b)] = cells[(b, a)] = e["status"]
    return hosts, cells


def marks(series, verdict):
    """({host: mark}, {(host i, host j): mark}): '*' called slow, '^' suspect not re-tested."""
    symbol = {"slow": SLOW, "suspect": SUSPECT}
    hosts, cells = statuses(series, verdict)
    return (
        {k: symbol[v] for k, v in hosts.items()},
        {k: symbol[v] for k, v in cells.items()},
    )


def _column_labels(names):
    """Short column labels: the names less their common prefix, else their indices."""
    prefix = 0
    shortest = min(len(n) for n in names)
    while len(names) > 1 and prefix < shortest - 1 and len({n[prefix] for n in names}) == 1:
        prefix += 1
    short = [n[prefix:] for n in names]
    if max(len(s) for s in short) <= 6:
        return short, names[0][:prefix]
    return [str(i) for i in range(len(names))], None


def matrix_text(series, verdict):
    """The host-by-host matrix of a series as lines: each cell the pair's time against the
    fleet's median pair, in percent; '.' the diagonal, '?' not measured; a trailing mark for
    what the verdict calls slow (*) or suspects (^)."""
    names, values, median_us = host_matrix(series)
    host_marks, cell_marks = marks(series, verdict)
    labels, prefix = _column_labels(names)
    cells = []
    for i in range(len(names)):
        row = []
        for j in range(len(names)):
            if i == j:
                text = "."
            elif not math.isfinite(values[i, j]):
                text = "?"
            else:
                text = _pct(values[i, j])
            row.append(text + cell_marks.get((i, j), ""))
        cells.append(row)
    width = max(4, max(len(c) for row in cells for c in row), max(len(x) for x in labels)) + 1
    rows = [
        (n if prefix is not None else f"{i} {n}") + host_marks.get(n, "")
        for i, n in enumerate(names)
    ]
    left = max(len(r) for r in rows) + 1
    lines = [" " * left + "".join(x.rjust(width) for x in labels)]
    for label, row in zip(rows, cells):
        lines.append(label.ljust(left) + "".join(c.rjust(width) for c in row))
    base = f"{median_us:.3g} us" if median_us else "none measured"
    columns = (
        f"columns: the hosts less '{prefix}'" if prefix else "columns: the hosts in this order"
    )
    lines.append(
        f"cells: a host pair's time against the fleet's median pair ({base}), percent; "
        f". same host, ? not measured; {SLOW} called slow, {SUSPECT} suspect; {columns}"
    )
    return lines


def _pct_range(entry):
    lo, hi = entry["ci95_pct"]
    return f"{entry['effect_pct']:+.0f}% (95%: {lo:+.0f}% to {hi:+.0f}%)"


def detail_lines(series, verdict):
    """A line for each suspect not re-tested and each suspect the re-test cleared."""
    lines = []
    for e in verdict.get("hosts", []):
        if e["status"] == "suspect":
            lines.append(f"suspect host {e['host']}: {_pct_range(e)}, not re-tested")
        elif e["status"] == "cleared":
            again = [x["effect_pct"] for x in e.get("retest") or [] if x]
            after = f"{_signed(sorted(again)[len(again) // 2])}%" if again else "not slow"
            lines.append(
                f"cleared host {e['host']}: {e['effect_pct']:+.0f}% in the fleet run, {after} "
                "on its re-test: not called"
            )
    for e in verdict.get("rails", []):
        if e["status"] in ("suspect", "cleared"):
            lines.append(
                f"{e['status']} rail {e['rank']}: {_pct_range(e)} beyond its host's effect"
                + (", not re-tested" if e["status"] == "suspect" else ": not slow on re-test")
            )
    for e in verdict.get("links", []):
        if e["status"] == "suspect":
            lines.append(
                f"suspect link {e['link']}: {_pct_range(e)} beyond both hosts' effects, "
                "not re-tested"
            )
        elif e["status"] == "cleared":
            after = e.get("retest_effect_pct")
            after = f"{_signed(after)}%" if after is not None else "not slow"
            lines.append(
                f"cleared link {e['link']}: {e['effect_pct']:+.0f}% in the fleet run, {after} on "
                "its re-test: not called"
            )
    return lines


def heading(series, verdict):
    layers = np.asarray(series.layers)
    passes = layers.shape[0] if layers.ndim == 3 else 1
    head = (
        f"{series.family} at {format_size(series.bytes)}: "
        f"{plural(verdict['ranks'], 'rank')} on {plural(verdict['hosts_count'], 'host')}, "
        f"{plural(passes, 'pass', 'passes')}"
    )
    if "sigma_pct" not in verdict:
        return head
    thresholds = verdict["thresholds_pct"]
    called = f"host from {thresholds['host']:+.1f}%, link from {thresholds['link']:+.1f}%"
    if "rail" in thresholds:
        called += f", rail from {thresholds['rail']:+.1f}%"
    screen = verdict.get("screen_pct")
    called += f" (q {verdict['q']:g})"
    if screen:  # what a re-test is asked to decide (fleet.suspects)
        called += f"; re-tested: host from {screen['host']:+.1f}%, link from {screen['link']:+.1f}%"
    return (
        f"{head}; pair {verdict['baseline_us']:.3g} us, sigma {verdict['sigma_pct']:.1f}%, "
        f"host spread {verdict['tau_pct']:.1f}%; called: {called}"
    )


def unmeasured_line(series):
    """'K of P pairs not measured' (pairs between hosts), or None."""
    logs = pair_logs(series)
    host_of = np.asarray(series.host_of)
    between = np.triu(~np.equal.outer(host_of, host_of), 1)
    missing = int((between & ~np.isfinite(logs)).sum())
    if not missing:
        return None
    return f"{missing} of {int(between.sum())} host pairs not measured: their links not judged"


def repeatability_line(verdict):
    r = verdict.get("repeatability")
    if not r:
        return None
    return (
        f"repeatability (passes 0 and 1 fitted apart): {100 * r['hosts_same']:.0f}% of hosts "
        f"alike; hosts flagged in either pass {r['hosts_flagged_either']}, in both "
        f"{r['hosts_flagged_both']}; links flagged in either {r['links_flagged_either']}, in "
        f"both {r['links_flagged_both']}"
    )


def series_lines(series, verdict, judgement, with_matrix):
    lines = [heading(series, verdict)]
    said = list(verdict["lines"])
    index = judgement.series.index(series)
    ranks, links = judgement.untested()[index]
    if said == ["no slow host or link"] and (ranks or links):
        said = ["no slow host or link called yet: suspects not re-tested"]
    lines += [f"  {x}" for x in said + detail_lines(series, verdict) + verdict.get("fabric", [])]
    for extra in (repeatability_line(verdict), unmeasured_line(series)):
        if extra:
            lines.append(f"  {extra}")
    lost = verdict["not_judged"]["lost"]
    if lost:
        lines.append(f"  not judged: lost {', '.join(lost)}")
    if with_matrix and len(series.hosts) >= 2:  # one host has no pair of hosts to show
        lines += [f"  {x}" for x in matrix_text(series, verdict)]
    return lines


def render(judgement, matrix=None, retest=None):
    """The judgement as text: each series (heading, verdict, details, matrix where `matrix`,
    or None: up to MATRIX_DEFAULT_HOSTS hosts), what was not judged, the line `retest` (the
    re-test still wanted), then the drain line."""
    lines = [f"note: {one_line(x)}" for x in judgement.notes]
    for s, v in zip(judgement.series, judgement.verdicts):
        show = matrix if matrix is not None else len(s.hosts) <= MATRIX_DEFAULT_HOSTS
        lines += series_lines(s, v, judgement, show)
        lines.append("")
    for x in judgement.unfinished:
        lines.append(f"not finished: {x}")
    if retest:
        lines.append(retest)
    drain = judgement.drain()
    lines.append(f"drain: {drain or '(none)'}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- documents


def plain(value):
    """value with numpy scalars and arrays as Python numbers and lists, NaN as null."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    return non_finite_as_none(value)


def verdict_document(judgement, files=None):
    """{"format": xferbench-fleet-verdict/1, "series": [verdicts], "drain", "named", ...}."""
    return plain(
        {
            "format": VERDICT_FORMAT,
            "series": judgement.verdicts,
            "drain": judgement.drain(),
            "named": judgement.named(),
            "suspects_left": judgement.suspects_left(),
            "unfinished": judgement.unfinished,
            "notes": judgement.notes,
            "exit_status": judgement.status(),
            "files": files or {},
        }
    )


def write_json(where, path, document):
    """document as JSON at path, atomically (a temporary file, then a rename)."""
    write_atomically(where, path, json.dumps(document, indent=1, allow_nan=False) + "\n")


# ----------------------------------------------------------------------------- heatmaps


def load_verdict(path):
    """The verdict document tools/fleet judge --json wrote; InputError for anything else."""
    where = f"--verdict {path}"
    document = decode_json(where, read_regular_file(where, path))
    if not isinstance(document, dict) or document.get("format") != VERDICT_FORMAT:
        raise InputError(
            f"{where}: not a tools/fleet verdict (format {VERDICT_FORMAT}: tools/fleet judge "
            "--json writes one)"
        )
    if not isinstance(document.get("series"), list):
        raise InputError(f"{where}: its 'series' is not a list")
    return document


class Heatmap:
    """One series drawn: title, hosts, values (H x H log time against the fleet's median pair,
    NaN not measured or diagonal), median_us, host_status {host index: 'slow'|'suspect'},
    link_status {(i, j): 'slow'|'suspect'}."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def heatmaps(path, verdict_path=None):
    """A Heatmap per series of the fleet result at path, marked with what the verdict at
    verdict_path (tools/fleet judge --json) calls slow or suspects."""
    document = load_fleet(path)
    if not document["fleet"].get("series"):
        raise InputError(f"{path}: fleet.series is empty: no pair measured, nothing to draw")
    verdicts = {}
    if verdict_path:
        for v in load_verdict(verdict_path)["series"]:
            if isinstance(v, dict):
                verdicts[(v.get("family") or v.get("path"), v.get("bytes"))] = v
    try:
        series = fleet.from_result(document)
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(f"{path}: cannot read its fleet object: {error}") from None
    out = []
    for s in series:
        hosts, values, median_us = host_matrix(s)
        verdict = verdicts.get((s.family, s.bytes))
        host_status, link_status = {}, {}
        if verdict is not None:
            ranks = len(s.host_of)
            try:
                links = [e["ranks"] for e in verdict.get("links", [])]
                if not all(0 <= r < ranks for pair in links for r in pair):
                    raise IndexError
                named, link_status = statuses(s, verdict)
            except (KeyError, TypeError, IndexError, AttributeError):
                raise InputError(
                    f"--verdict {verdict_path}: its verdict on {s.family} at "
                    f"{format_size(s.bytes)} is not one of {path}'s fleet ({ranks} ranks)"
                ) from None
            unknown = sorted(set(named) - set(hosts))
            if unknown:
                raise InputError(
                    f"--verdict {verdict_path}: names hosts {path} does not have "
                    f"({clip(', '.join(unknown))}): a verdict of another fleet"
                )
            host_status = {hosts.index(h): status for h, status in named.items()}
        layers = np.asarray(s.layers)
        out.append(
            Heatmap(
                title=f"{s.family} at {format_size(s.bytes)}",
                subtitle=(
                    f"{plural(len(s.names), 'rank')} on {plural(len(hosts), 'host')}, "
                    f"{plural(layers.shape[0] if layers.ndim == 3 else 1, 'pass', 'passes')}"
                ),
                hosts=hosts,
                values=values,
                median_us=median_us,
                host_status=host_status,
                link_status=link_status,
                judged=verdict is not None,
            )
        )
    return out
