"""Attribution to the switch (issue 46): a leaf switch whose uplink is degraded makes every host
behind it slow on pairs that leave the leaf and fine on pairs inside it. The host model of
model.py (log t_ij = g_i + g_j + round + e) then names every host of that leaf a slow host;
this module names the leaf instead.

Topology. `read_topology` reads the leaf switches from Slurm's topology.conf or from the output
of `scontrol show topology` (upper switches, with Switches=, are not leaves even where scontrol
lists the nodes below them); `expand_hostlist` expands Slurm's hostlists; `leaf_of` places the
fleet's hosts.

Model with uplinks. log t_ij = g_i + g_j + c_ij (w + u_L(i) + u_L(j)) + round + e, c_ij = 1 when
i and j are in different leaves: a pair across passes both leaves' uplinks. w is what every pair
across leaves shares (oversubscription: reported, never a verdict), u_L a leaf's own uplink term,
centred on the median leaf. `fit_uplinks` alternates the host fit (fleet.fit, passed in) on the
times less the leaf terms with an estimate of the leaf terms from that fit's residuals, with the
terms put back, until they move by less than 1e-4 (two or three fits, as a rule).

The leaf terms come from block medians of those residuals R (medians: a slow host or congested
measurements must not move a leaf). The host effects take up part of an uplink's term (a host
of a degraded leaf meets most of its partners across), so the cross pairs' residuals alone would
show little; the leaf's own pairs show what its host effects took. Per leaf, D_a (the median
over its own pairs) = 2 e_a, e_a the error of its mean host effect; per pair of leaves, C_ab
(over the pairs between) = e_a + e_b + w + u_a + u_b. Both are fitted together by weighted
least squares, each block weighted by its median's variance (pi/2 times its own spread, from
its MAD, squared, over its pairs: pairs across may be noisier than pairs within); the host
effects' own errors cancel (a leaf's hosts appear alike in its D and its C), so the result does
not depend on how much the hosts took, and one step finds it. The C are reweighted by Tukey's
biweight at a scale never below their own error, so that one odd pair of leaves (a spine fault)
does not move every leaf; a scale above it (blocks differing by more than their spread
explains) widens the errors by that factor. Why not difference first (Z_ab = C_ab - D_a/2 -
D_b/2, then an additive fit of Z): a leaf's D is in all its Z, whose errors are then not
independent, and the errors come out too small (by about 1.4 at 8 leaves, in simulation).

Verdicts. A leaf is slow when its term is significant against the spread of the leaves and its
own error (fleet.test_hosts, passed in: BH over leaves at q) and at least MIN_UPLINK. With two
leaves the two uplinks and w cannot be told apart: the path between them is one boundary
effect, tested against its own, sigma-based, error. A leaf with no measured pair of its own (one
host) has no uplink term: its uplink stays in its hosts' effects; a rank in no leaf likewise,
its pairs counted as pairs across.

Without a topology. `boundary_groups` looks among the hosts the host test flags for groups slow
only across a boundary: slow hosts make their pairs among themselves doubly slow (residual
beyond both effects near 0); hosts behind one degraded uplink make them fine (time near the
baseline, residual near -(h_i + h_j)).
"""

import itertools
import math
import re
import warnings

import numpy as np
from scipy import sparse, stats
from scipy.sparse.linalg import eigsh

from ..core.files import InputError, read_regular_file
from ..verdict.decide import benjamini_hochberg
from .robust import MAD_SCALE, TUKEY_C, mad, percent_interval

Q = 0.05
MIN_UPLINK = 0.05  # as fleet.MIN_HOST: a leaf's uplink is called from +5% on pairs leaving it
TOL = 1e-4
ITERATIONS = 10
MIN_GROUP = 3
MAX_HOSTS = 1_000_000  # names one hostlist may expand to
MEDIAN_VAR = math.pi / 2  # variance of a median over that of a mean (normal errors)
SHOWN_NAMES = 8
SPLIT_PERMUTATIONS = 99  # shuffles that calibrate a split found without a topology: p >= 0.01
SPLIT_SEED = 46

# ------------------------------------------------------------------------------- hostlists


def expand_hostlist(text):
    """The host names of a Slurm hostlist, in order: node[001-003,007] -> node001, node002,
    node003, node007 (zero padding as the range's first number writes it); a[1-2]-b[01-02] ->
    a1-b01, a1-b02, a2-b01, a2-b02 (several brackets: the last varies fastest, as Slurm
    expands them); plain names separated by commas. Blank text: []. ValueError naming the text
    for anything malformed (unbalanced or nested brackets, an empty item or range, a range
    that runs backwards, letters in a range)."""
    names = []
    for item in _items(text):
        names.extend(_expand_item(item, text))
        if len(names) > MAX_HOSTS:
            raise ValueError(f"hostlist {text!r}: more than {MAX_HOSTS} names")
    return names


def _bad(text, why):
    return ValueError(f"malformed hostlist {text!r}: {why}")


def _items(text):
    """The comma-separated items of a hostlist, commas within brackets kept."""
    if not text.strip():
        return []
    items, depth, start = [], 0, 0
    for k, char in enumerate(text):
        if char == "[":
            depth += 1
            if depth > 1:
                raise _bad(text, "brackets within brackets")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise _bad(text, "']' with no '['")
        elif char == "," and depth == 0:
            items.append(text[start:k])
            start = k + 1
    if depth:
        raise _bad(text, "'[' not closed")
    items.append(text[start:])
    items = [item.strip() for item in items]
    if not all(items):
        raise _bad(text, "an empty item")
    return items


def _expand_item(item, text):
    """The names of one item: its literal parts and the cartesian product of its brackets."""
    parts = re.split(r"\[([^\[\]]*)\]", item)  # literal, bracket, literal, ...
    choices = []
    for k, part in enumerate(parts):
        if k % 2 == 0:
            if re.search(r"[\[\]\s]", part):
                raise _bad(text, f"{item!r}")
            choices.append([part])
        else:
            choices.append(_range_values(part, text))
    total = math.prod(len(c) for c in choices)
    if total > MAX_HOSTS:
        raise ValueError(f"hostlist {text!r}: more than {MAX_HOSTS} names")
    return ["".join(name) for name in itertools.product(*choices)]


def _range_values(body, text):
    """The numbers of one bracket (1-3,07 -> 1, 2, 3, 07), each as wide as its range's first."""
    values = []
    for part in body.split(","):
        found = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not found:
            raise _bad(text, f"[{body}] is not numbers and ranges")
        low, high = found.group(1), found.group(2) or found.group(1)
        if int(high) < int(low):
            raise _bad(text, f"range {part} runs backwards")
        if int(high) - int(low) >= MAX_HOSTS:
            raise ValueError(f"hostlist {text!r}: more than {MAX_HOSTS} names")
        values.extend(str(x).zfill(len(low)) for x in range(int(low), int(high) + 1))
    return values


# ------------------------------------------------------------------------- topology files


def read_topology(path):
    """The leaf switches of a Slurm topology: topology.conf (SwitchName=s1 Nodes=node[01-32],
    SwitchName=spine Switches=s[1-8]; keys in any case, # comments, blank lines, a trailing
    backslash continuing a line) or the output of `scontrol show topology` (SwitchName=s1
    Level=0 LinkSpeed=1 Nodes=node[01-32]; upper levels add Switches=). A leaf is a switch
    with Nodes= and no Switches=. Returns {switch name: [host names]} in the file's order.
    InputError naming the file (and line) for an unreadable file, a malformed line, a switch
    named twice, a host in two leaves, no leaf switch."""
    where = str(path)
    data = read_regular_file(where, path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: cannot read: not UTF-8 (byte {error.start})") from None
    switches, leaves, placed = {}, {}, {}
    for number, line in _logical_lines(text):
        at = f"{where}:{number}"
        fields = _switch_fields(line, at)
        name = fields["switchname"]
        if name in switches:
            raise InputError(f"{at}: switch {name} named again (first on line {switches[name]})")
        switches[name] = number
        if "nodes" not in fields or "switches" in fields:
            continue
        try:
            hosts = expand_hostlist(fields["nodes"])
        except ValueError as error:
            raise InputError(f"{at}: {error}") from None
        for host in hosts:
            if host in placed:
                other, line_no = placed[host]
                if other == name:
                    raise InputError(f"{at}: host {host} twice in leaf {name}")
                raise InputError(
                    f"{at}: host {host} in leaf {name} and in leaf {other} (line {line_no})"
                )
            placed[host] = (name, number)
        leaves[name] = hosts
    if not leaves:
        raise InputError(f"{where}: no leaf switch (a SwitchName= line with Nodes=)")
    return leaves


def _logical_lines(text):
    """(line number, text) of each line that holds something: comments from '#' dropped, a
    line ending in a backslash joined to the next."""
    pending, first = "", None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].rstrip()
        if first is None:
            first = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        if whole:
            yield first, whole
        first = None
    if pending.strip():
        yield first, pending.strip()


def _switch_fields(line, at):
    """{lower-case key: value} of a SwitchName= line; InputError at `at` for anything else."""
    fields, spelled = {}, {}
    for word in line.split():
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise InputError(
                f"{at}: not a topology line (KEY=VALUE words, SwitchName= among them): "
                f"{line[:80]!r}"
            )
        if key.lower() in fields:
            raise InputError(f"{at}: {key}= given twice")
        fields[key.lower()] = value
        spelled[key.lower()] = key
    if "switchname" not in fields:
        if "blockname" in fields:
            raise InputError(f"{at}: a block topology (BlockName=), not a tree of switches")
        raise InputError(f"{at}: no SwitchName=: {line[:80]!r}")
    for key in ("switchname", "nodes", "switches"):
        if key in fields and not fields[key]:
            raise InputError(f"{at}: {spelled[key]}= is empty")
    return fields


def leaf_of(topology, hosts):
    """Each host's leaf as an index into `topology` (read_topology's dict, in its order), -1
    for a host of the fleet in no leaf; a host named host.domain is looked up as host too
    (Slurm names nodes by their short name). Returns (int array, note): the note (None when
    every host is placed) names the hosts in no leaf, for the caller to print. Hosts of the
    topology that are not in the fleet are fine."""
    index = {}
    for k, members in enumerate(topology.values()):
        for host in members:
            index[host] = k
    placed = np.array(
        [index.get(host, index.get(str(host).split(".")[0], -1)) for host in hosts], dtype=int
    )
    missing = [str(h) for h, k in zip(hosts, placed) if k < 0]
    if not missing:
        return placed, None
    note = (
        f"{len(missing)} host{'s' * (len(missing) != 1)} in no leaf switch of the topology: "
        f"{_some(missing)} (no uplink term for them)"
    )
    return placed, note


def _some(names):
    shown = ", ".join(names[:SHOWN_NAMES])
    return shown if len(names) <= SHOWN_NAMES else f"{shown} and {len(names) - SHOWN_NAMES} more"


# ------------------------------------------------------------------ the model with uplinks


class Uplinks:
    """What `fit_uplinks` found, per leaf (arrays in the order of `names`): names, ranks (the
    ranks of each leaf), estimated (bool: a leaf with a pair of its own and pairs across), effect
    (log: its uplink's term on pairs leaving it, beyond the median leaf; NaN where not
    estimated, and with two leaves), se, p (one-sided; 1 where not tested), slow (bool),
    cross_pairs (its measured pairs to the other estimated leaves). Fleet-wide: cross and
    cross_se (log: what every pair across leaves shares, for two leaves of median uplink; NaN
    with two leaves), tau (the leaves' own spread), threshold (the smallest log effect called),
    scale (the blocks' spread over what sigma explains, >= 1), boundary (two leaves: a dict
    of leaves, effect, se, p, slow; else None), offset (N x N log term each pair carried in the
    final fit: the expected log time of a pair is mu + h_i + h_j + offset_ij), iterations,
    converged, notes (lines for the caller to print)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def fit_uplinks(
    layers,
    leaf,
    names,
    *,
    fit,
    test_hosts,
    rounds=None,
    q=Q,
    min_effect=MIN_UPLINK,
    tol=TOL,
    iterations=ITERATIONS,
):
    """The host model with uplink terms (module docstring). `layers`: (K, N, N) or (N, N) log
    times, NaN where not measured (as fleet.fit takes them); `leaf`: each rank's leaf, an index
    into `names` or -1; `fit`, `test_hosts`: fleet.fit and fleet.test_hosts (passed in: fleet
    imports this module). Returns (the final fit, host effects with the uplink terms taken out,
    and its resid beyond them; Uplinks)."""
    y = np.asarray(layers, dtype=float)
    n = y.shape[-1]
    leaf = np.asarray(leaf, dtype=int)
    if leaf.shape != (n,) or leaf.max(initial=-1) >= len(names) or leaf.min(initial=0) < -1:
        raise ValueError(f"leaf: one index into {len(names)} leaf names (or -1) for each rank")
    members = [np.flatnonzero(leaf == k) for k in range(len(names))]
    offsets = np.zeros((n, n))
    previous, converged = None, False
    for done in range(1, iterations + 1):
        f = fit(y - offsets, rounds)
        terms = _leaf_terms(f, offsets, members)
        if terms is None:  # fewer than two leaves to tell apart: the host model as it is
            return f, _no_uplinks(names, members, offsets, done)
        vector = terms["vector"]
        change = np.inf if previous is None else float(np.max(np.abs(vector - previous)))
        previous = vector
        if change < tol:
            converged = True
            break
        if done < iterations:
            offsets = _offsets(terms, leaf, n)
    up = _verdicts(terms, names, members, test_hosts, q, min_effect)
    up.offset, up.iterations, up.converged = offsets, done, converged
    if not converged:
        up.notes.append(f"the uplink terms still moved by {change:.1e} after {done} fits")
    missing = int((leaf < 0).sum())
    if missing:
        up.notes.append(
            f"{missing} rank{'s' * (missing != 1)} in no leaf: their pairs count as pairs across "
            "leaves, with no uplink term of their own"
        )
    return f, up


def _leaf_blocks(f, offsets, members):
    """The leaves with a measured pair of their own; per such leaf (D, its variance), the
    median of its own pairs' residuals with the leaf terms put back; per pair of them (a < b)
    (C, its variance), that of the pairs between."""
    resid = f.resid + offsets
    count = np.asarray(f.count, dtype=float)

    def block(values, counts):
        values = values[(counts > 0) & np.isfinite(values)]
        if not values.size:
            return np.nan, np.nan
        median = float(np.median(values))
        spread = mad(values) if values.size > 2 else 0
        # the median's variance from the block's own spread (pairs across may be noisier than
        # pairs within: oversubscription), at least sigma's over the pairs' observations
        spread = max(spread, f.sigma / math.sqrt(float(np.max(counts))))
        return median, MEDIAN_VAR * spread**2 / values.size

    own = {}
    for k, ranks in enumerate(members):
        upper = np.triu_indices(ranks.size, 1)
        sub = np.ix_(ranks, ranks)
        median, variance = block(resid[sub][upper], count[sub][upper])
        if np.isfinite(median):
            own[k] = (median, variance)
    leaves = sorted(own)
    between = {}
    for i, a in enumerate(leaves):
        for b in leaves[i + 1 :]:
            sub = np.ix_(members[a], members[b])
            between[(a, b)] = block(resid[sub], count[sub])
    return leaves, own, between


def _leaf_terms(f, offsets, members):
    """w and u (K >= 3 leaves) or the one boundary (K = 2) from the block medians, with their
    errors; the leaves estimated and their pairs across. None with fewer than two leaves."""
    leaves, own, between = _leaf_blocks(f, offsets, members)
    linked = {x for (a, b), (c, _) in between.items() if np.isfinite(c) for x in (a, b)}
    leaves = [a for a in leaves if a in linked]
    k = len(leaves)
    if k < 2:
        return None
    blocks = [
        (i, j, *between[(leaves[i], leaves[j])])
        for i in range(k)
        for j in range(i + 1, k)
        if np.isfinite(between[(leaves[i], leaves[j])][0])
    ]
    pairs = np.zeros(k, dtype=int)
    for i, j, _, _ in blocks:
        measured = int(np.sum(f.count[np.ix_(members[leaves[i]], members[leaves[j]])] > 0))
        pairs[i] += measured
        pairs[j] += measured
    terms = {"leaves": leaves, "pairs": pairs}
    d = np.array([own[a][0] for a in leaves])
    var_d = np.array([own[a][1] for a in leaves])
    if k == 2:
        _, _, c, var_c = blocks[0]
        boundary = c - d[0] / 2 - d[1] / 2
        terms.update(boundary=boundary, boundary_se=math.sqrt(var_c + var_d.sum() / 4))
        terms["vector"] = np.array([boundary])
        return terms
    w, u, var_w, var_u, scale = _additive(d, var_d, blocks, k)
    terms.update(cross=w, cross_se=math.sqrt(var_w), effect=u, se=np.sqrt(var_u), scale=scale)
    terms["vector"] = np.concatenate([[w], u])
    return terms


def _tukey(r):
    """Tukey's biweight: (1 - (r/c)^2)^2 inside c, 0 outside (r in units of its scale)."""
    u = r / TUKEY_C
    return np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0)


def _additive(d, var_d, blocks, k):
    """w and u (K >= 3 leaves) by weighted least squares on the blocks, each a median with its
    own variance: D_a = 2 e_a and C_ab = e_a + e_b + w + u_a + u_b, e_a the error of leaf a's
    mean host effect (a nuisance; one D a leaf anchors it). The D and C blocks are disjoint
    sets of pairs, so their errors are independent; a leaf's D is shared by all its C, which is
    why they are fitted together rather than differenced first. The C are reweighted by Tukey's
    biweight at scale = max(1, their standardised residuals' MAD) where 3 or more degrees of
    freedom allow it. Solved with u_0 = 0 (a sparse design: 128 leaves in well under a second),
    then u centred on the median leaf (w takes twice the shift). Returns (w, u, var w, var u,
    scale): the variances from the weighted normal equations times scale^2, plus the median's
    own variance as fleet.fit adds it."""
    a = np.array([b[0] for b in blocks])
    b = np.array([b[1] for b in blocks])
    y = np.concatenate([d, [x[2] for x in blocks]])
    v = np.concatenate([var_d, [x[3] for x in blocks]])
    x = _design(a, b, k)
    dof = y.size - 2 * k
    weights, scale = np.ones(y.size), 1.0
    if dof >= 3:  # the first weights from a median fit, so that an odd block cannot lead
        z = y[k:] - d[a] / 2 - d[b] / 2
        r = (z - _median_additive(z, a, b, k)) / np.sqrt(v[k:] + var_d[a] / 4 + var_d[b] / 4)
        weights, scale = _reweighted(weights, r, a, b, k, dof)
    for _ in range(50):
        normal = (x.T @ sparse.diags(weights / v) @ x).toarray()
        theta = np.linalg.solve(normal, x.T @ (weights / v * y))
        if dof < 3:
            break
        r = ((y - x @ theta) / np.sqrt(v))[k:]
        new, scale = _reweighted(weights, r, a, b, k, dof)
        if np.max(np.abs(new - weights)) < 1e-6:
            break
        weights = new
    # (w, u_1 .. u_K-1) with u_0 = 0 -> (w + 2 mean u, u - mean u)
    place = np.vstack([np.zeros(k - 1), np.eye(k - 1)])
    transform = np.zeros((k + 1, k))
    transform[0, 0] = 1.0
    transform[0, 1:] = 2 * place.sum(axis=0) / k
    transform[1:, 1:] = place - place.sum(axis=0) / k
    params = transform @ theta[k:]
    cov = transform @ np.linalg.inv(normal)[k:, k:] @ transform.T * scale**2
    w, u = float(params[0]), params[1:]
    var_w, var_u = float(cov[0, 0]), np.diag(cov)[1:].copy()
    middle = float(np.median(u))
    var_middle = MEDIAN_VAR * float(np.median(var_u)) / k
    return w + 2 * middle, u - middle, var_w + 4 * var_middle, var_u + var_middle, scale


def _reweighted(weights, r, a, b, k, dof):
    """Tukey weights for the C blocks (standardised residuals r) at scale = max(1, their MAD,
    corrected for the parameters), the D blocks' kept at 1; the weights as they were where a
    leaf would lose its blocks. Returns (weights, scale)."""
    spread = MAD_SCALE * float(np.median(np.abs(r - np.median(r)))) * math.sqrt(r.size / dof)
    scale = max(1.0, spread)
    new = np.concatenate([np.ones(k), _tukey(r / scale)])
    per_leaf = np.bincount(a, new[k:], k) + np.bincount(b, new[k:], k)
    return (weights if per_leaf.min() < 1 else new), scale


def _median_additive(z, a, b, k, rounds=10):
    """Fitted values w + u_a + u_b of the blocks z (pairs a, b of K leaves) by median polish:
    each leaf's u moved by the median of its blocks' residuals, then w by theirs."""
    w, u = float(np.median(z)), np.zeros(k)
    for _ in range(rounds):
        r = z - w - u[a] - u[b]
        both = np.concatenate([r, r])
        leaves = np.concatenate([a, b])
        u += np.array([np.median(both[leaves == x]) for x in range(k)])
        w += float(np.median(z - w - u[a] - u[b]))
    return w + u[a] + u[b]


def _design(a, b, k):
    """The sparse design of _additive: K rows D_a (2 at e_a), then a row per block C_ab (1 at
    e_a, e_b, w, u_a, u_b); columns e (K), w, u_1 .. u_K-1 (u_0 = 0)."""
    m = a.size
    rows = [np.arange(k)] + [k + np.arange(m)] * 3
    cols = [np.arange(k), a, b, np.full(m, k)]
    vals = [np.full(k, 2.0)] + [np.ones(m)] * 3
    for leaf in (a, b):
        keep = leaf > 0
        rows.append(k + np.flatnonzero(keep))
        cols.append(k + leaf[keep])
        vals.append(np.ones(int(keep.sum())))
    data = (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols)))
    return sparse.csr_matrix(data, shape=(k + m, 2 * k))


def _offsets(terms, leaf, n):
    """The N x N log term each pair carries: w + u_L(i) + u_L(j) across leaves (a rank in no
    leaf, or in a leaf not estimated, adds no u of its own), 0 within one; with two leaves the
    boundary on the pairs between them, 0 elsewhere."""
    leaves = terms["leaves"]
    offsets = np.zeros((n, n))
    if "boundary" in terms:
        in_a, in_b = leaf == leaves[0], leaf == leaves[1]
        offsets[np.outer(in_a, in_b) | np.outer(in_b, in_a)] = terms["boundary"]
        return offsets
    own = np.zeros(n)
    for i, k in enumerate(leaves):
        own[leaf == k] = terms["effect"][i]
    across = (leaf[:, None] != leaf[None, :]) | (leaf[:, None] < 0)
    offsets[across] = (terms["cross"] + own[:, None] + own[None, :])[across]
    np.fill_diagonal(offsets, 0.0)
    return offsets


def _verdicts(terms, names, members, test_hosts, q, min_effect):
    """Uplinks from the last leaf terms: per leaf tested against the leaves' spread (K >= 3),
    or the one boundary against its sigma-based error (K = 2)."""
    k = len(names)
    up = _no_uplinks(names, members, None, 0)
    up.notes = []
    leaves = terms["leaves"]
    up.estimated[leaves] = True
    up.cross_pairs[leaves] = terms["pairs"]
    if "boundary" in terms:
        z, se = float(terms["boundary"]), float(terms["boundary_se"])
        p = float(stats.norm.sf(z / se))
        up.boundary = {
            "leaves": [names[x] for x in leaves],
            "effect": z,
            "se": se,
            "p": p,
            "slow": bool(p <= q and z >= math.log1p(min_effect)),
        }
        up.threshold = max(math.log1p(min_effect), float(stats.norm.isf(q)) * se)
        up.notes.append(
            "two leaves: their two uplinks (and the fabric between them) cannot be told apart; "
            "the path between them is one boundary effect"
        )
    else:
        up.effect[leaves] = terms["effect"]
        up.se[leaves] = terms["se"]
        tested = test_hosts(up.effect, up.se, q=q, min_effect=min_effect, where=up.estimated)
        up.p = np.where(up.estimated, tested["p"], 1.0)
        up.slow = np.asarray(tested["slow"], dtype=bool) & up.estimated
        up.tau, up.threshold = float(tested["tau"]), float(tested["threshold"])
        up.cross, up.cross_se, up.scale = terms["cross"], terms["cross_se"], terms["scale"]
    alone = [names[x] for x in range(k) if members[x].size and not up.estimated[x]]
    if alone:
        up.notes.append(
            f"leaves with no pair of their own measured (one host): {_some(alone)}; "
            "their uplinks stay in their hosts' effects"
        )
    return up


def _no_uplinks(names, members, offsets, done):
    """Uplinks with nothing estimated: fewer than two leaves with pairs of their own."""
    k = len(names)
    return Uplinks(
        names=list(names),
        ranks=[[int(r) for r in m] for m in members],
        estimated=np.zeros(k, dtype=bool),
        effect=np.full(k, np.nan),
        se=np.full(k, np.nan),
        p=np.ones(k),
        slow=np.zeros(k, dtype=bool),
        cross_pairs=np.zeros(k, dtype=int),
        cross=float("nan"),
        cross_se=float("nan"),
        tau=float("nan"),
        threshold=float("nan"),
        scale=1.0,
        boundary=None,
        offset=offsets,
        iterations=done,
        converged=True,
        notes=[
            "fewer than two leaves with pairs of their own and pairs between them: no uplink "
            "term (the host model as it is)"
        ],
    )


# ---------------------------------------------------------------------- without a topology


def boundary_groups(f, suspect_ranks, q=Q, min_size=MIN_GROUP):
    """Groups of suspect ranks (flagged slow by the host test, on fit `f`) that are slow only on
    pairs leaving the group: behind one degraded uplink, their pairs among themselves are fine
    (residual near -(h_i + h_j)), where slow hosts' would be doubly slow (residual near 0). A
    pair among suspects is fine when its residual is below -(h_i + h_j) / 2; groups are the
    connected sets of fine pairs, less members fine with under half of the rest, of min_size
    (3) ranks or more: two ranks fine with each other cannot be told from two slow hosts whose
    one pair is fast (a link beyond both effects, the other way). Each group is tested: its
    pairs' median residual below 0 (one-sided, against sigma and the host effects' error),
    BH over the groups at q. Returns the groups called, largest first, as dicts: ranks, effect
    (log: the boundary's term on pairs leaving the group, the median over members of each
    one's median time, over its partners outside, beyond the baseline and the partner's
    effect) and se, within (median log time of their pairs among themselves beyond the
    baseline: near 0), within_resid (their median residual beyond both effects), within_se,
    p, pairs (measured among them), beyond (each member's effect on pairs leaving, less the
    group's: a slow host inside the group stands out here). The caller reports a group as one
    boundary, not as slow hosts, and drains none of it (a re-test of a member against a
    partner outside would find it slow again: the boundary, not the host)."""
    ranks = np.array(sorted({int(r) for r in suspect_ranks if f.judged[int(r)]}), dtype=int)
    if ranks.size < max(min_size, 2):
        return []
    sub = np.ix_(ranks, ranks)
    resid = np.asarray(f.resid, dtype=float)[sub]
    measured = (np.asarray(f.count)[sub] > 0) & np.isfinite(resid)
    np.fill_diagonal(measured, False)
    both = f.h[ranks][:, None] + f.h[ranks][None, :]
    fine = measured & (np.where(measured, resid, 0.0) < -both / 2)
    found = []
    for component in _components(fine):
        kept = _prune(component, fine, measured, min_size)
        if len(kept) >= min_size:
            found.append(_group(f, ranks[kept]))
    called = benjamini_hochberg([g["p"] for g in found], q)
    floor = math.log1p(MIN_UPLINK)
    found = [g for g, ok in zip(found, called) if ok and g["effect"] >= floor]
    return sorted(found, key=lambda g: (-len(g["ranks"]), g["ranks"]))


def _least_squares_residuals(y):
    """y (N x N log times, NaN diagonal; unmeasured pairs filled with the median pair) less the
    least-squares fit g_i + g_j: (n - 2) g_i + sum(g) = row sum, sum(g) = total / (n - 1). Not
    robust on purpose: a block pattern must stay in the residuals (a robust fit can bend it
    into a slope of host effects)."""
    n = y.shape[0]
    filled = np.where(np.isfinite(y), y, np.nanmedian(y))
    np.fill_diagonal(filled, 0.0)
    rows = filled.sum(axis=1)
    total = rows.sum() / 2 / (n - 1)
    g = (rows - total) / (n - 2)
    r = filled - g[:, None] - g[None, :]
    np.fill_diagonal(r, 0.0)
    return r


def two_sides(layers, q=Q, min_effect=MIN_UPLINK):
    """Without a topology: the fleet in two sides whose pairs across are slow and within fine,
    as two switches joined by a slow link, or one leaf behind a slow uplink, make it (with two
    equal halves every host meets half its partners across, so no host stands out). The sides
    are the signs of the eigenvector of the lowest eigenvalue of the pairs' residuals beyond a
    least-squares host fit (~ -c s s^T for sides s = +-1). The split is called when the median
    residual across exceeds the median within by at least min_effect and by more than
    norm.isf(q / ranks) of its error, and when no more than a share q of SPLIT_PERMUTATIONS
    shuffles of the residuals among the measured pairs, split the same way, show as much (the
    split was chosen to show the most: with noise alone some split always shows a contrast);
    each side 2 ranks or more, and half the pairs measured at least (a schedule cut short is not
    split). layers: (K, N, N) or (N, N) log times, NaN unmeasured. Returns None or a dict:
    sides (two lists of ranks, the smaller first), effect (log, across over within), se, z, p
    (the shuffles' share)."""
    y = np.asarray(layers, dtype=float)
    if y.ndim == 3:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            y = np.nanmean(y, axis=0)
    ranks = np.flatnonzero(np.isfinite(y).any(axis=1))
    sub = y[np.ix_(ranks, ranks)]
    # a schedule cut short (a lost host, rounds not measured) leaves too few pairs to split by
    if ranks.size < 4 or np.isfinite(sub).sum() < 0.5 * ranks.size * (ranks.size - 1):
        return None
    r = _least_squares_residuals(sub)
    measured = np.triu(np.isfinite(sub), 1)
    side = _lowest_split(r)
    found = _split_contrast(r, measured, side)
    if found is None:
        return None
    effect, se, z = found
    if effect < math.log1p(min_effect) or z < stats.norm.isf(q / ranks.size):
        return None
    p = _shuffled_share(r, measured, z)
    if p > q:
        return None
    sides = sorted(([int(x) for x in ranks[side]], [int(x) for x in ranks[~side]]), key=len)
    return {"sides": sides, "effect": effect, "se": se, "z": z, "p": p}


def _lowest_split(r):
    """The signs of the eigenvector of r's lowest eigenvalue."""
    if r.shape[0] <= 256:
        vector = np.linalg.eigh(r)[1][:, 0]
    else:  # Lanczos: the one eigenvector, not all N
        vector = eigsh(r, k=1, which="SA", v0=np.ones(r.shape[0]))[1][:, 0]
    return vector > 0


def _split_contrast(r, measured, side):
    """(effect, se, z) of the median residual across the split over the median within, or None
    where a side has fewer than 2 ranks or either kind fewer than 2 measured pairs."""
    if min(side.sum(), (~side).sum()) < 2:
        return None
    across = measured & (side[:, None] != side[None, :])
    within = measured & (side[:, None] == side[None, :])
    if across.sum() < 2 or within.sum() < 2:
        return None
    r_across, r_within = r[across], r[within]
    effect = float(np.median(r_across) - np.median(r_within))
    spread = [mad(x) for x in (r_across, r_within)]
    se = math.sqrt(MEDIAN_VAR * (spread[0] ** 2 / r_across.size + spread[1] ** 2 / r_within.size))
    return effect, se, effect / se if se > 0 else math.inf


def _shuffled_share(r, measured, z):
    """The share of SPLIT_PERMUTATIONS shuffles of r's measured residuals among the measured
    pairs, each fitted again as r was (seeded: a verdict is the same every time), whose own
    lowest split shows a contrast of z or more, the observed split counted among them."""
    rng = np.random.default_rng(SPLIT_SEED)
    values = r[measured]
    shuffled = np.full_like(r, np.nan)
    beyond = 1
    for _ in range(SPLIT_PERMUTATIONS):
        shuffled[measured] = rng.permutation(values)
        full = _least_squares_residuals(np.fmax(shuffled, shuffled.T))  # as the observed r
        found = _split_contrast(full, measured, _lowest_split(full))
        beyond += found is not None and found[2] >= z
    return beyond / (SPLIT_PERMUTATIONS + 1)


def _components(adjacent):
    """The connected sets (lists of indices) of a symmetric boolean adjacency matrix."""
    seen = np.zeros(adjacent.shape[0], dtype=bool)
    sets = []
    for start in range(adjacent.shape[0]):
        if seen[start]:
            continue
        seen[start] = True
        stack, found = [start], [start]
        while stack:
            for other in np.flatnonzero(adjacent[stack.pop()] & ~seen):
                seen[other] = True
                stack.append(int(other))
                found.append(int(other))
        sets.append(sorted(found))
    return sets


def _prune(members, fine, measured, min_size):
    """members less, one at a time, the one fine with the smallest share (under half) of the
    others it was measured with: a slow host that one fine pair joined to a group."""
    kept = list(members)
    while len(kept) >= min_size:
        idx = np.ix_(kept, kept)
        share = fine[idx].sum(axis=1) / np.maximum(measured[idx].sum(axis=1), 1)
        worst = int(np.argmin(share))
        if share[worst] >= 0.5:
            break
        kept.pop(worst)
    return kept


def _group(f, members):
    """The evidence of one group of ranks (boundary_groups' dict)."""
    n = members.size
    count = np.asarray(f.count)
    i, j = np.triu_indices(n, 1)
    a, b = members[i], members[j]
    keep = (count[a, b] > 0) & np.isfinite(f.resid[a, b])
    a, b = a[keep], b[keep]
    resid = f.resid[a, b]
    # each member's effect on pairs leaving the group: the median, over its partners outside,
    # of the time beyond the baseline and the partner's effect (its h less what its own pairs
    # inside the group pulled it by)
    outside = np.flatnonzero(f.judged & ~np.isin(np.arange(f.h.size), members))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        leaving = np.nanmedian(f.resid[np.ix_(members, outside)], axis=1) + f.h[members]
    leaving = np.where(np.isfinite(leaving), leaving, f.h[members])
    effect = float(np.median(leaving))
    var_g = float(np.median(f.var_g[members]))
    # the median's error: the members' own spread (a robust one: a slow host inside the group
    # must not widen it), at least their estimation error
    spread = max(MAD_SCALE * float(np.median(np.abs(leaving - effect))), math.sqrt(var_g))
    # the host effects' errors are shared by a member's pairs: 4 var_g / n for the group
    inverse = float(np.mean(1.0 / count[a, b])) if a.size else 1.0
    within_se = math.sqrt(MEDIAN_VAR * f.sigma**2 * inverse / max(a.size, 1) + 4 * var_g / n)
    within_resid = float(np.median(resid)) if a.size else float("nan")
    # slow hosts: residual near 0; a boundary: near -(h_i + h_j). Tested against the midpoint,
    # so that healthy hosts the screen let through, whose pairs scatter around 0, make no group
    half = float(np.median(f.h[a] + f.h[b])) / 2 if a.size else 0.0
    p = float(stats.norm.sf(-(within_resid + half) / within_se)) if a.size else 1.0
    return {
        "ranks": [int(r) for r in members],
        "effect": effect,
        "se": math.sqrt(MEDIAN_VAR) * spread / math.sqrt(n),
        "within": float(np.median(resid + f.h[a] + f.h[b])) if a.size else float("nan"),
        "within_resid": within_resid,
        "within_se": within_se,
        "p": p,
        "pairs": int(a.size),
        "beyond": [float(x - effect) for x in leaving],
    }


# --------------------------------------------------------------------------------- report


def group_line(group, label):
    """The report line of one of boundary_groups' groups; `label` names its members (a Slurm
    hostlist, say)."""
    pct, half = percent_interval(group["effect"], group["se"])
    within = 100 * math.expm1(group["within"])
    return (
        f"slow boundary around {len(group['ranks'])} hosts {label}: {pct:+.0f}% +-{half:.0f}% "
        f"on pairs leaving them, {within:+.0f}% on their {group['pairs']} pairs among "
        "themselves: a switch or its uplink, not the hosts (none drained)"
    )
