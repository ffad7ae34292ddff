"""Which host, which link (issue 37): every pair of a fleet's ranks measured in rounds of
disjoint pairs, and a robust model that names the slow host and the slow link with intervals.

Schedule. `schedule(n, relabel)` is the circle method: M = n (n even) or n + 1 (n odd: position
M-1 is a bye and its partner sits idle). Round r = 0..M-2 pairs position M-1 with position r,
and for k = 1..M/2-1 position (r+k) mod (M-1) with position (r-k) mod (M-1). relabel[rank] is
the position a rank plays. Pass 0 plays the identity; pass p > 0 plays `pass_relabel(n, p,
seed)`, a Fisher-Yates shuffle driven by splitmix64, so that a second pass puts other pairs in
a round together. tests/fixtures/fleet/schedules.json holds cases for the C++ to match.

Model. One series (a family and a size): log t(i, j) = g_i + g_j (+ rho_round) + e, several
observations a pair where there are passes. The fit starts from a median fit (each rank's
median over its pairs, then median polish), then iterates reweighted least squares with
Tukey's biweight (c = 4.685) at a residual scale sigma = 1.4826 * MAD of the residuals (corrected
for the parameters fitted), solving the normal equations by conjugate gradients on the dense
N x N weight matrix (so 4,096 ranks take about a second). Host effects are centred on the median
host, h_i = g_i - median(g), mu = 2 median(g): a slow host cannot hide in the baseline and one
fast host cannot move it. A round term (median-centred) takes up what a whole round shares.

Verdicts, in two stages. The screen (suspects(screen=True)) names suspects leniently: a host
whose effect is beyond the healthy spread at p <= Q_SCREEN on its own (one-sided, z = h_i /
sqrt(tau_lo^2 + se_i^2)) and at least half the minimum effect on the log scale; a pair whose
residual beyond both hosts' effects, e_ij, is beyond sigma by Benjamini-Hochberg at Q_SCREEN
(over the pairs) and at least half MIN_LINK in every pass (congestion strikes one visit). tau
is the healthy hosts' spread (the MAD of the host effects less their estimation variance),
tau_lo the lower end of its 95% interval (spread_bound): six hosts cannot prove a 3% spread, so
they do not hide a slow host behind one, and a thousand bound it near tau. A pair beyond both
hosts whose host is a suspect slow on many of its pairs is that host's, not a link. The
re-test (`retest_rounds`: each suspect host against PARTNERS passed hosts, each suspect pair
LINK_REPEATS times, control pairs of passed hosts on disjoint hosts for the re-test job's own
level) measures them afresh, and `decide` calls a suspect only when its re-test, at that
job's level, finds it slow again (at least the minimum effect and significant against its own
error) and the evidence of both measurements together (weighted by their precision) is at
least the minimum effect and beyond tau_lo and its error with Benjamini-Hochberg at q over all
the fleet's hosts (pairs, rails; one not re-tested counts as p = 1): the false-discovery
control is on what is called.
Without a required re-test and none measured (--no-retest-required), the first pass decides
at the call's level, as before the screen.

Defaults. q = 0.05: a drained host in 20 is a mistake at most, in expectation, when any is
named. MIN_HOST = 5%: hosts of one kind differ by about 2% (healthy spread), and a single pair's
figure moves 4.4% between jobs on the GPU machines (mpi_host, docs/results/2026-11-28-h200-ab-
sensitivity): a smaller effect is not worth a drained node. MIN_LINK = 25%: a link that trained
with one lane of four down is 33% slower, half width 100%; below 25% a pair's figure is within
congestion and job-to-job spread of one measurement. Both are floors: the effective threshold
is the larger of the floor and what sigma, tau and BH allow (stated in the verdict).

Several ranks a host (one per GPU or NIC): the fit is per rank, pairs within one host left out;
a host's effect is the median of its ranks' effects (what they share), a rail's effect is a
rank's effect beyond its host's, tested against the spread of the rails.
"""

import math
import re
import warnings

import numpy as np
from scipy import stats

from ..core.files import fleet_object
from ..core.text import plural
from ..verdict.decide import benjamini_hochberg
from . import topology as fleet_topology
from .robust import TUKEY_C, mad, percent_interval

FORMAT = "xferbench-fleet/1"
Q = 0.05
MIN_HOST = 0.05
MIN_LINK = 0.25
GOLDEN = 0x9E3779B97F4A7C15
MASK64 = (1 << 64) - 1
EXACT_INVERSE_MAX = 512  # ranks: exact covariance of the host effects up to this size
SCALE_SAMPLE = 2_000_000  # residuals used for the scale while iterating (all at the end)
PARTNERS = 4  # passed hosts a suspect host is re-tested against
CONTROLS = 4  # pairs of passed hosts a re-test measures for its own job's level, at least
MAX_CONTROLS = 16  # and at most: on disjoint hosts, their median is that level
Q_SCREEN = 0.05  # the screen: each host alone at this level (unadjusted), pairs by BH at it
SCREEN_FLOOR = 0.5  # the screen's minimum effects: this share of the call's (log scale)
LINK_REPEATS = 3  # visits of each suspect pair in a re-test (their median decides)


# ---------------------------------------------------------------------------- the schedule


def splitmix64(state):
    """(next state, output) of splitmix64, all arithmetic mod 2^64."""
    state = (state + GOLDEN) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def pass_relabel(n, pass_index, seed):
    """The position each rank plays in pass `pass_index`: identity for pass 0; otherwise a
    Fisher-Yates shuffle of 0..n-1 by splitmix64 from state seed ^ (pass_index * GOLDEN)
    (mod 2^64): for i = n-1 down to 1, j = next() % (i + 1), swap entries i and j."""
    perm = list(range(n))
    if pass_index == 0:
        return perm
    state = (int(seed) ^ (int(pass_index) * GOLDEN)) & MASK64
    for i in range(n - 1, 0, -1):
        state, z = splitmix64(state)
        j = z % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def schedule(n, relabel=None):
    """Rounds of disjoint (a, b) rank pairs, a < b, covering every pair once: the circle
    method over M = n or n + 1 positions, M - 1 rounds; relabel[rank] is the position a rank
    plays (None: identity). Within a round the pair with position M-1 comes first, then
    k = 1..M/2-1; a pair with the bye (odd n) is dropped."""
    if n < 2:
        return []
    relabel = list(range(n)) if relabel is None else list(relabel)
    if sorted(relabel) != list(range(n)):
        raise ValueError("relabel must be a permutation of 0..n-1")
    m = n if n % 2 == 0 else n + 1
    rank_at = [-1] * m
    for rank, position in enumerate(relabel):
        rank_at[position] = rank
    rounds = []
    for r in range(m - 1):
        pairs = [(m - 1, r)]
        pairs += [((r + k) % (m - 1), (r - k) % (m - 1)) for k in range(1, m // 2)]
        out = []
        for p, s in pairs:
            a, b = rank_at[p], rank_at[s]
            if a < 0 or b < 0:
                continue
            out.append((min(a, b), max(a, b)))
        rounds.append(out)
    return rounds


def round_matrix(n, relabel=None):
    """N x N int array: the round of each pair in `schedule(n, relabel)` (-1 on the diagonal),
    computed with numpy for large n."""
    m = n if n % 2 == 0 else n + 1
    relabel = np.arange(n) if relabel is None else np.asarray(relabel)
    pos = np.arange(m - 1)
    # positions p, s < M-1 meet in the round r with p + s = 2r (mod M-1); M-1 is odd
    inv2 = (m // 2) % (m - 1) if m > 2 else 0  # 2 * (M/2) = M = 1 mod (M-1)
    rnd = np.full((m, m), -1, dtype=np.int64)
    rnd[: m - 1, : m - 1] = ((pos[:, None] + pos[None, :]) * inv2) % (m - 1)
    rnd[m - 1, : m - 1] = pos
    rnd[: m - 1, m - 1] = pos
    np.fill_diagonal(rnd, -1)
    out = rnd[np.ix_(relabel, relabel)]
    return out


# ------------------------------------------------------------------------------- the fit


class Fit:
    """What `fit` returns: g (per-rank effects, log), h (g less the median rank's), mu
    (baseline log time of a pair of median ranks), var_g (variance of each g), se_h, sigma
    (residual scale, log), rho (round effects), resid (N x N mean residual of each pair beyond
    both ranks' effects, NaN where unmeasured), resid_low (the lowest over passes), count
    (observations a pair), judged (ranks with data), dof (residual degrees of freedom), k (psi
    factor of the variance)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def _sample(values, limit=SCALE_SAMPLE):
    if values.size <= limit:
        return values
    return values[:: int(math.ceil(values.size / limit))]


def _cg(apply, b, x0, precond, tol=1e-10, maxiter=200):
    """Preconditioned conjugate gradients for the SPD operator `apply`."""
    x = x0.copy()
    r = b - apply(x)
    z = precond * r
    p = z.copy()
    rz = float(r @ z)
    norm_b = float(np.linalg.norm(b)) or 1.0
    for _ in range(maxiter):
        if float(np.linalg.norm(r)) <= tol * norm_b:
            break
        ap = apply(p)
        alpha = rz / float(p @ ap)
        x += alpha * p
        r -= alpha * ap
        z = precond * r
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x


def _row_median(y, complete):
    """Median over axis 1 of a 2-D array, ignoring NaNs unless `complete` (NaN rows: NaN)."""
    if complete:
        return np.median(y, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmedian(y, axis=1)


def _median_start(y, judged, only_diagonal):
    """Each rank's starting effect: the median over its pairs, less half the median of those,
    then one median polish (y: K x N x N log times, NaN unmeasured)."""
    kk, n = y.shape[0], y.shape[1]
    flat = np.concatenate(list(y), axis=1) if kk > 1 else y[0].copy()
    if only_diagonal:  # the diagonal as +inf or -inf in turn: a median of N - 1 values
        for k in range(kk):
            idx = np.arange(n)
            flat[idx, idx + k * n] = np.where(idx % 2 == 0, np.inf, -np.inf)
    a = _row_median(flat, only_diagonal)
    g = np.where(judged, a - np.nanmedian(a[judged]) / 2, 0.0)
    flat -= np.tile(g, kk)[None, :]
    return np.where(judged, _row_median(flat, only_diagonal), 0.0)


class _Work:
    """The arrays of one fit (float32 for large fleets) and its residual scale: yf (log times,
    0 where unmeasured), mask, maskf, rounds, e (residuals), w (weights), g, rho, correction
    (sqrt(observations / residual dof), for the MAD)."""

    def __init__(self, y, mask, rounds, n_rounds, correction, g):
        self.dtype = y.dtype.type
        self.mask, self.maskf = mask, mask.astype(y.dtype)
        self.rounds, self.n_rounds, self.correction = rounds, n_rounds, correction
        self.yf = np.nan_to_num(y, copy=False, nan=0.0)
        self.e = np.empty_like(self.yf)
        self.w = np.empty_like(self.yf)
        self.g, self.rho = g, np.zeros(max(n_rounds, 1))

    def round_terms(self):
        return self.rho.astype(self.dtype)[np.maximum(self.rounds, 0)]

    def residuals(self):
        e = self.e
        np.subtract(self.yf, self.g.astype(self.dtype)[None, :, None], out=e)
        np.subtract(e, self.g.astype(self.dtype)[None, None, :], out=e)
        if self.n_rounds:
            np.subtract(e, self.round_terms(), out=e)
        np.multiply(e, self.maskf, out=e)

    def sample(self, limit):
        """Residuals of measured pairs: all, or a strided sample of about `limit`."""
        e, mask = self.e, self.mask
        if e.size <= 2 * limit:
            return e[mask].astype(float)
        step = int(math.ceil(e.size / (2 * limit)))
        return e.ravel()[::step][mask.ravel()[::step]].astype(float)

    def scale(self, limit):
        return mad(self.sample(limit)) * self.correction


def _irls_step(work, sigma):
    """One reweighted least-squares step: Tukey weights at scale sigma, the rank effects by
    conjugate gradients, the round terms (median-centred). Returns the largest change."""
    w, kk = work.w, work.yf.shape[0]
    np.multiply(work.e, work.dtype(1.0 / (TUKEY_C * sigma)), out=w)
    w *= w
    np.subtract(1, w, out=w)
    np.maximum(w, 0, out=w)
    w *= w
    w *= work.maskf
    ws = w.sum(axis=0) if kk > 1 else w[0]
    d = ws.sum(axis=1, dtype=float)
    target = work.yf - work.round_terms() if work.n_rounds else work.yf
    b = np.einsum("kij,kij->i", w, target, dtype=float)
    live = d > 0

    def apply(x, ws=ws, d=d):
        return d * x + ws @ x.astype(ws.dtype)

    precond = np.where(live, 1.0 / np.where(live, d, 1.0), 0.0)
    g = work.g
    g_new = _cg(apply, np.where(live, b, 0.0), np.where(live, g, 0.0), precond, 1e-7)
    change = float(np.max(np.abs(g_new - g))) if g.size else 0.0
    work.g = g_new
    if work.n_rounds:
        r = work.yf - g_new[None, :, None] - g_new[None, None, :]
        mask = work.mask
        idx = work.rounds[mask]
        num = np.bincount(idx, weights=(w * r)[mask], minlength=work.n_rounds)
        den = np.bincount(idx, weights=w[mask], minlength=work.n_rounds)
        new = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        new -= np.median(new[den > 0]) if (den > 0).any() else 0.0
        change = max(change, float(np.max(np.abs(new - work.rho))))
        work.rho = new
    return change


def _psi_factor(r):
    """E psi^2 / (E psi')^2 of Tukey's psi on residuals r (in units of sigma): the variance
    factor of the fitted effects."""
    u = r / TUKEY_C
    inside = np.abs(u) < 1
    psi = np.where(inside, r * (1 - u * u) ** 2, 0.0)
    dpsi = np.where(inside, (1 - u * u) * (1 - 5 * u * u), 0.0)
    return float(np.mean(psi**2)) / max(float(np.mean(dpsi)) ** 2, 1e-12) if r.size else 1.0


def _pair_residuals(work, kk):
    """(N x N mean residual of each pair over its observations, and the lowest of them), NaN
    where unmeasured: a slow link is slow in every pass, congestion in one."""
    if kk > 1:
        e = work.e.astype(float)
        e[~work.mask] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(e, axis=0), np.nanmin(e, axis=0)
    resid = work.e[0].astype(float)
    resid[~work.mask[0]] = np.nan
    return resid, resid


def _effect_variances(count, judged, sigma, k):
    """Each rank's effect variance: the exact inverse of the unweighted normal equations up to
    EXACT_INVERSE_MAX ranks, their diagonal beyond; times sigma^2 and the psi factor k."""
    n = count.shape[0]
    d0 = count.sum(axis=1).astype(float)
    var_g = np.full(n, np.inf)
    if n <= EXACT_INVERSE_MAX:
        a0 = np.diag(d0) + count.astype(float)
        sub = np.ix_(judged, judged)
        var_g[judged] = np.diag(np.linalg.pinv(a0[sub])) * sigma**2 * k
    else:
        var_g[judged] = sigma**2 * k / d0[judged]
    return var_g


def fit(layers, rounds=None, iterations=30, tol=1e-5):
    """Robust fit of log t = g_i + g_j (+ rho_round) + e to `layers`, a (K, N, N) or (N, N)
    array of log times (symmetric, NaN where a pair was not measured, diagonal ignored);
    `rounds` an int array of the same shape (-1: none) or None. Stops when no effect moves by
    `tol` (log) and sigma by `tol` relative. Large fleets (N >= 1,024) iterate in float32."""
    shape = np.shape(layers)
    dtype = np.float32 if shape[-1] >= 1024 else np.float64
    y = np.array(layers, dtype=dtype)
    if y.ndim == 2:
        y = y[None]
        rounds = None if rounds is None else np.asarray(rounds)[None]
    kk, n = y.shape[0], y.shape[1]
    for layer in y:
        np.fill_diagonal(layer, np.nan)
    mask = np.isfinite(y)
    if rounds is not None:
        rounds = np.where(mask, rounds, -1)
    count = mask.sum(axis=0)
    judged = count.sum(axis=1) > 0
    n_obs = int(count.sum() // 2)
    n_rounds = int(rounds.max()) + 1 if rounds is not None and rounds.max() >= 0 else 0
    dof = max(n_obs - (int(judged.sum()) + max(n_rounds - 1, 0)), 1)
    correction = math.sqrt(n_obs / dof) if n_obs > 0 else 1.0
    g = _median_start(y, judged, int(mask.sum()) == kk * n * (n - 1))
    work = _Work(y, mask, rounds, n_rounds, correction, g)
    del y
    work.residuals()
    sigma = work.scale(SCALE_SAMPLE // 10)
    if not sigma > 0:
        sigma = float(np.std(work.e[mask])) or 1e-9
    for _ in range(iterations):
        change = _irls_step(work, sigma)
        work.residuals()
        sigma_new = work.scale(SCALE_SAMPLE // 10)
        change = max(change, abs(sigma_new - sigma) / sigma)
        sigma = sigma_new if sigma_new > 0 else sigma
        if change < tol:
            break
    sigma = work.scale(SCALE_SAMPLE)
    k = _psi_factor(work.sample(SCALE_SAMPLE // 10) / sigma)
    resid, resid_low = _pair_residuals(work, kk)
    g = work.g
    var_g = _effect_variances(count, judged, sigma, k)
    med_g = float(np.median(g[judged])) if judged.any() else 0.0
    var_med = (math.pi / 2) * float(np.median(var_g[judged])) / max(int(judged.sum()), 1)
    return Fit(
        g=g,
        h=np.where(judged, g - med_g, np.nan),
        mu=2 * med_g,
        var_g=var_g,
        se_h=np.sqrt(var_g + var_med),
        sigma=sigma,
        rho=work.rho[:n_rounds],
        resid=resid,
        resid_low=resid_low,
        count=count,
        judged=judged,
        dof=dof,
        k=k,
        n_obs=n_obs,
    )


# ------------------------------------------------------------------------------ the tests


def spread_bound(tau, hosts):
    """The lower end of the healthy spread's 95% interval (chi-squared with hosts - 1 degrees
    of freedom): what the hosts prove of it. Few hosts cannot prove a wide spread, so a slow
    host is not hidden behind a spread they only estimated; many hosts bound it near tau."""
    if tau <= 0 or hosts < 2:
        return 0.0
    return tau * math.sqrt((hosts - 1) / stats.chi2.isf(0.025, hosts - 1))


def test_hosts(effects, se, q=Q, min_effect=MIN_HOST, where=None, spread=None, adjust=True):
    """One-sided tests that each effect is beyond the healthy spread: z = h / sqrt(tau_lo^2 +
    se^2), with tau^2 = (1.4826 MAD(h))^2 - median(se^2) (floored at 0) and tau_lo its
    spread_bound; adjust: Benjamini-Hochberg over the hosts at q (a call), else each host
    alone at q (a screen); and h >= log(1 + min_effect). Returns dict of arrays: p, slow
    (bool), tau, tau_lo, threshold (the smallest log effect flagged for a typical host).
    `spread`, when given, replaces 1.4826 MAD(h) (rails: their spread measured within hosts)."""
    h = np.asarray(effects, dtype=float)
    se = np.asarray(se, dtype=float)
    where = np.isfinite(h) if where is None else where & np.isfinite(h)
    n = int(where.sum())
    spread = mad(h[where]) if spread is None else spread
    tau2 = max(spread**2 - float(np.median(se[where] ** 2)), 0.0) if n else 0.0
    tau_lo = spread_bound(math.sqrt(tau2), n)
    scale = np.sqrt(tau_lo**2 + se**2)
    p = np.ones_like(h)
    p[where] = stats.norm.sf(h[where] / scale[where])
    rejected = np.zeros(h.size, dtype=bool)
    if adjust:
        rejected[where] = benjamini_hochberg(p[where], q)
        crit_p = q * max(int(rejected.sum()), 1) / max(n, 1)  # BH's cut-off for one more
    else:
        rejected[where] = p[where] <= q
        crit_p = q
    floor = math.log1p(min_effect)
    slow = rejected & (h >= floor)
    threshold = max(floor, float(stats.norm.isf(crit_p) * np.median(scale[where])))
    return {"p": p, "slow": slow, "tau": math.sqrt(tau2), "tau_lo": tau_lo, "threshold": threshold}


def test_pairs(f, q=Q, min_effect=MIN_LINK, where=None, every_pass=False):
    """One-sided tests of each pair's residual beyond both ranks' effects against sigma;
    BH over the measured pairs (upper triangle) at q and residual >= log(1 + min_effect), in
    every pass where every_pass (a slow link is slow in each; congestion in one visit).
    Returns (a, b, residual, se, p) arrays of the pairs flagged, and the threshold."""
    resid = f.resid
    var_g = np.where(np.isfinite(f.var_g), f.var_g, 0.0)
    m = np.maximum(f.count, 1)
    se = np.sqrt(f.sigma**2 / m + var_g[:, None] + var_g[None, :])
    measured = np.triu(f.count > 0, 1)
    if where is not None:
        measured &= where[:, None] & where[None, :]
    tests = int(measured.sum())
    dof = max(f.dof, 1)
    with np.errstate(invalid="ignore"):
        z = resid / se
    zcut = stats.t.isf(q, dof)
    cand = measured & (np.nan_to_num(z, nan=-np.inf) > zcut)
    a, b = np.nonzero(cand)
    p = stats.t.sf(z[a, b], dof)
    rejected = benjamini_hochberg(p, q, tests=tests)
    floor = math.log1p(min_effect)
    crit_p = q * max(int(rejected.sum()), 1) / max(tests, 1)
    threshold = max(floor, float(stats.t.isf(crit_p, dof) * f.sigma))
    keep = rejected & (resid[a, b] >= floor)
    if every_pass:
        keep &= np.nan_to_num(f.resid_low[a, b], nan=-np.inf) >= floor
    return {
        "a": a[keep],
        "b": b[keep],
        "resid": resid[a, b][keep],
        "se": se[a, b][keep],
        "p": p[keep],
        "threshold": threshold,
        "tests": tests,
    }


def _screen_floor(min_effect):
    """The screen's minimum effect: SCREEN_FLOOR of the called one, on the log scale."""
    return math.expm1(SCREEN_FLOOR * math.log1p(min_effect))


def suspects(f, q=Q, min_host=MIN_HOST, min_link=MIN_LINK, where=None, screen=False):
    """Hosts (ranks) and links one fit flags, as a dict. screen=False: the call's level (BH at
    q, the minimum effects), as a first pass alone would name them (repeatability); True: the
    screen's (each host alone at Q_SCREEN, pairs by BH at Q_SCREEN, SCREEN_FLOOR of the
    minimum effects), the suspects a re-test decides. Both state the call's thresholds."""
    where = f.judged if where is None else where & f.judged
    called = test_hosts(f.h, f.se_h, q, min_host, where)
    called_links = test_pairs(f, q, min_link, where)
    hosts, links = called, called_links
    if screen:
        hosts = test_hosts(f.h, f.se_h, Q_SCREEN, _screen_floor(min_host), where, adjust=False)
        links = test_pairs(f, Q_SCREEN, _screen_floor(min_link), where, every_pass=True)
    slow = np.nonzero(hosts["slow"])[0]
    # pairs of a flagged host that are beyond both effects: the host's, when it is slow on
    # many of its pairs (a quarter of its outlying pairs at least, and 2 or more)
    explained = np.zeros(links["a"].size, dtype=bool)
    for host in slow:
        mine = (links["a"] == host) | (links["b"] == host)
        pairs = int((f.count[host] > 0).sum())
        if mine.sum() >= max(2, 0.25 * pairs):
            explained |= mine
    return {
        "hosts": [int(x) for x in slow],
        "host_p": hosts["p"],
        "tau": called["tau"],
        "tau_lo": called["tau_lo"],
        "host_threshold": called["threshold"],
        "screen_threshold": hosts["threshold"],
        "links": [(int(a), int(b)) for a, b in zip(links["a"][~explained], links["b"][~explained])],
        "link_resid": links["resid"][~explained],
        "link_se": links["se"][~explained],
        "link_threshold": called_links["threshold"],
        "link_screen_threshold": links["threshold"],
        "pair_tests": links["tests"],
        "called_hosts": [int(x) for x in np.nonzero(called["slow"])[0]],
        "called_links": [(int(a), int(b)) for a, b in zip(called_links["a"], called_links["b"])],
        "explained": [
            (int(a), int(b)) for a, b in zip(links["a"][explained], links["b"][explained])
        ],
    }


# ---------------------------------------------------------------------------- re-testing


def retest_rounds(suspect_hosts, suspect_pairs, passed_hosts, partners=PARTNERS, controls=CONTROLS):
    """Rounds of disjoint pairs for a re-test: each suspect pair again, each suspect host
    against `partners` hosts that passed (taken in turn from passed_hosts, so that the load is
    spread), and control pairs of passed hosts that are no suspect pair (_controls: `controls`
    at least, on disjoint hosts where there are enough): the re-test runs in a job of its own,
    whose level (a whole job a few percent faster or slower: 7.6-18% at 8 B
    between jobs on two H200s) `confirm` takes from them. Greedy edge colouring: each pair goes
    to the first round where both are free. Returns (rounds, plan) where plan maps each suspect
    to its pairs: {"hosts": {h: [pairs]}, "pairs": [pairs], "controls": [pairs]}."""
    passed = list(passed_hosts)
    wanted, seen = [], set()

    def want(pair):
        if pair not in seen:
            seen.add(pair)
            wanted.append(pair)

    for a, b in suspect_pairs:
        want((min(a, b), max(a, b)))
    links = list(wanted)
    host_plan, cursor = {}, 0
    for host in suspect_hosts:
        chosen, tried = [], 0
        while len(chosen) < min(partners, len(passed)) and tried < len(passed):
            partner = passed[cursor % len(passed)]
            cursor, tried = cursor + 1, tried + 1
            if partner != host and partner not in chosen:
                chosen.append(partner)
        host_plan[host] = [(min(host, o), max(host, o)) for o in chosen]
        for pair in host_plan[host]:
            want(pair)
    chosen_controls = _controls(passed, set(suspect_hosts), seen, controls)
    for pair in chosen_controls:
        want(pair)
    # each suspect pair LINK_REPEATS times, in as many rounds: one congested visit is outvoted
    return colour(wanted + links * (LINK_REPEATS - 1)), {
        "hosts": host_plan,
        "pairs": links,
        "controls": chosen_controls,
    }


def _controls(passed, suspects, taken, wanted):
    """Control pairs of passed hosts, none a pair already `taken`: as many as there are free
    hosts for, up to MAX_CONTROLS, on disjoint hosts first (so that one slow or congested host
    cannot move several), then, where too few hosts are free for `wanted`, pairs sharing them."""
    free = [h for h in passed if h not in suspects]
    out = []
    for a, b in zip(free[0::2], free[1::2]):
        if len(out) < MAX_CONTROLS and (min(a, b), max(a, b)) not in taken:
            out.append((min(a, b), max(a, b)))
    for i, a in enumerate(free):
        for b in free[i + 1 :]:
            pair = (min(a, b), max(a, b))
            if len(out) < wanted and pair not in taken and pair not in out:
                out.append(pair)
    return out


def colour(pairs):
    """Pairs as rounds of disjoint pairs: each in the first round where both ranks are free."""
    busy, rounds = {}, []
    for a, b in pairs:
        free = ~(busy.get(a, 0) | busy.get(b, 0))
        r = (free & -free).bit_length() - 1
        while len(rounds) <= r:
            rounds.append([])
        rounds[r].append((a, b))
        busy[a] = busy.get(a, 0) | (1 << r)
        busy[b] = busy.get(b, 0) | (1 << r)
    return rounds


def _norm_sf(z):
    """One-sided normal p-value of z."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def _expected(f, a, b):
    """The model's log time of pair (a, b): mu, both effects and, with a topology, the uplink
    terms the pair carries (fleet_topology.fit_uplinks' offset)."""
    offset = getattr(f, "offset", None)
    return f.mu + f.h[a] + f.h[b] + (0.0 if offset is None else float(offset[a, b]))


def _job_level(f, retests, suspect_set, suspect_pair_set):
    """(shift, its variance): the re-test job's level, the median over its pairs with no
    suspect host that are no suspect pair (retest_rounds' controls) of the time beyond mu and
    both hosts' effects; (0, 0) without such pairs (the first job's level stands)."""
    level = [
        t - _expected(f, a, b)
        for (a, b), times in retests.items()
        if a not in suspect_set
        and b not in suspect_set
        and (a, b) not in suspect_pair_set
        and np.isfinite(f.h[a])
        and np.isfinite(f.h[b])
        for t in times
    ]
    if not level:
        return 0.0, 0.0
    return float(np.median(level)), (1.2533**2) * f.sigma**2 / len(level)


def retest_estimates(f, retests, suspect_hosts, suspect_pairs):
    """What a re-test measured of each suspect, at its own job's level (_job_level): a host's
    effect, the median over its partners' pairs of the time beyond mu and the partner's effect;
    a pair's residual, the mean of its re-tests beyond mu and both hosts' effects. Returns
    ({host: (estimate, se)}, {(a, b): (estimate, se)}), None where a suspect was not measured."""
    suspect_set = set(suspect_hosts)
    pair_set = {(min(a, b), max(a, b)) for a, b in suspect_pairs}
    shift, var_shift = _job_level(f, retests, suspect_set, pair_set)
    retests = {pair: [t - shift for t in times] for pair, times in retests.items()}
    by_rank = {}
    for (a, b), times in retests.items():
        if (a, b) in pair_set:  # a suspect link's visits say nothing of its host alone
            continue
        for host, other in ((a, b), (b, a)):
            if host in suspect_set and other not in suspect_set and np.isfinite(f.h[other]):
                by_rank.setdefault(host, []).append((other, times))
    hosts = {}
    for host in suspect_hosts:
        values, var = [], []
        for other, times in by_rank.get(host, []):
            values += [t - _expected(f, host, other) + f.h[host] for t in times]
            var += [f.sigma**2 + f.var_g[other]] * len(times)
        if not values:
            hosts[host] = None
            continue
        est = float(np.median(values)) if len(values) > 2 else float(np.mean(values))
        efficiency = 1.2533**2 if len(values) > 2 else 1
        hosts[host] = (est, math.sqrt(float(np.mean(var)) / len(values) * efficiency + var_shift))
    pairs = {}
    for a, b in suspect_pairs:
        times = retests.get((min(a, b), max(a, b)))
        if not times:
            pairs[(a, b)] = None
            continue
        # the median of 3 or more visits: one congested visit does not confirm a link
        middle, efficiency = (np.median, 1.2533**2) if len(times) > 2 else (np.mean, 1.0)
        est = float(middle(times)) - _expected(f, a, b)
        se = math.sqrt(efficiency * f.sigma**2 / len(times) + f.var_g[a] + f.var_g[b] + var_shift)
        pairs[(a, b)] = (est, se)
    return hosts, pairs


def confirm(f, retests, suspect_hosts, suspect_pairs, q=Q, min_host=MIN_HOST, min_link=MIN_LINK):
    """Each suspect's re-test on its own (retest_estimates): confirmed when its estimate is at
    least the minimum effect and one-sided significant at q against its own error. Returns
    ({host: (estimate, se, confirmed)}, {(a, b): (estimate, se, confirmed)}), None where a
    suspect was not measured. judge() decides with `decide`, which also weighs the healthy
    spread and controls false discoveries over the fleet."""
    hosts, pairs = retest_estimates(f, retests, suspect_hosts, suspect_pairs)

    def alone(x, floor):
        if x is None:
            return None
        return (x[0], x[1], bool(x[0] >= math.log1p(floor) and _norm_sf(x[0] / x[1]) <= q))

    return (
        {h: alone(x, min_host) for h, x in hosts.items()},
        {p: alone(x, min_link) for p, x in pairs.items()},
    )


def decide(estimates, units, q, min_effect, tau=0.0, first=None):
    """The call on re-tested suspects. Each re-test estimate (log effect, se) must be slow
    again on its own: at least log(1 + min_effect) and one-sided significant at q against its
    own error. And the evidence, the re-test's with the first pass's where `first` gives it
    ({key: (log effect, se)}: independent measurements of one host, weighted by their
    precision), must be at least log(1 + min_effect) too, and beyond sqrt(tau^2 + se^2) (tau:
    the healthy spread's bound, spread_bound) with Benjamini-Hochberg at q over all `units`
    judged (hosts, rails or pairs; one not re-tested counts with p = 1). Returns {key:
    (estimate, se, p, called)} of the re-test's estimate and the combined p, None where not
    measured."""
    keys = [k for k, x in estimates.items() if x is not None]
    floor = math.log1p(min_effect)
    p, big = [], []
    for k in keys:
        est, se = estimates[k]
        if first is not None and first.get(k) is not None and first[k][1] > 0:
            w1, w2 = first[k][1] ** -2, se**-2
            est, se = (w1 * first[k][0] + w2 * est) / (w1 + w2), (w1 + w2) ** -0.5
        p.append(_norm_sf(est / math.sqrt(tau**2 + se**2)))
        big.append(est >= floor)
    padded = np.ones(max(units, len(keys)))
    padded[: len(keys)] = p
    rejected = benjamini_hochberg(padded, q)[: len(keys)] if keys else []
    out = {k: None for k, x in estimates.items() if x is None}
    for k, pk, ok, large in zip(keys, p, rejected, big):
        est, se = estimates[k]
        again = est >= floor and _norm_sf(est / se) <= q
        out[k] = (est, se, pk, bool(ok and large and again))
    return out


# ------------------------------------------------------------------------------ reporting


def hostlist(names):
    """A Slurm hostlist of `names`: numeric suffixes compressed into ranges, zero padding kept
    (node001,node002,node003,node007 -> node[001-003,007]); names without a numeric suffix are
    listed as they are (Slurm has no letter ranges)."""
    groups = {}
    plain = []
    for name in sorted(set(names)):
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if not m:
            plain.append(name)
            continue
        prefix, digits = m.groups()
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        groups.setdefault((prefix, width), []).append(int(digits))
    parts = list(plain)
    for (prefix, width), numbers in groups.items():
        numbers = sorted(set(numbers))
        spans = []
        start = prev = numbers[0]
        for x in numbers[1:] + [None]:
            if x is not None and x == prev + 1:
                prev = x
                continue
            spans.append((start, prev))
            if x is not None:
                start = prev = x

        def fmt(x, width=width):
            return str(x).zfill(width)

        text = ",".join(fmt(s) if s == e else f"{fmt(s)}-{fmt(e)}" for s, e in spans)
        if len(numbers) == 1:
            parts.append(prefix + text)
        else:
            parts.append(f"{prefix}[{text}]")
    return ",".join(sorted(parts, key=lambda s: (re.sub(r"[\[\d].*", "", s), s)))


def host_line(name, effect, se, slow_pairs, pairs):
    pct, half = percent_interval(effect, se)
    share = (
        f"all {pairs} of its pairs" if slow_pairs == pairs else f"{slow_pairs} of its {pairs} pairs"
    )
    return f"slow host {name}: {pct:+.0f}% +-{half:.0f}% on {share}"


def link_line(name_a, name_b, effect, se):
    pct, half = percent_interval(effect, se)
    return f"slow link {name_a}-{name_b}: {pct:+.0f}% +-{half:.0f}% beyond both hosts' effects"


# ----------------------------------------------------------------------------- one series


class Series:
    """One family (a path and its variant) and size of a fleet: path, family (the path where
    not given), names (per rank), hosts, host_of, layers (K x N x N log time per pass, NaN
    unmeasured), rounds (same shape, -1 none), passes, retests ({(a, b): [log t]}), lost
    (ranks), incomplete (reason or None)."""

    def __init__(self, **fields):
        self.retests = {}
        self.lost = []
        self.incomplete = None
        self.rounds = None
        self.passes = [0]
        self.path, self.bytes = "", 0
        self.__dict__.update(fields)
        if not getattr(self, "family", None):
            self.family = self.path
        n = self.layers.shape[-1]
        if not hasattr(self, "host_of"):
            self.host_of = list(range(n))
        if not hasattr(self, "hosts"):
            self.hosts = list(self.names)


class Screened:
    """What the screen of one series names (screen_series): host_ids (a host per entry of the
    host arrays), h_host, se_host, host_p, host_threshold (the call's, log), host_tau (the
    healthy spread's bound the call weighs, spread_bound), slow_hosts (host ids), called_hosts
    (what the first pass alone calls), rail, rail_se, rail_tau, slow_rails (ranks),
    suspect_ranks, links, link_resid, link_se, passed (ranks), first (suspects()' dict),
    units (hosts judged), rail_units, screen_pct."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def _shared(effects):
    """What all of a host's ranks share: the median of their effects with 3 ranks or more,
    the smaller with 2 (a median of two is their mean, half a slow rail)."""
    effects = effects[np.isfinite(effects)]
    if effects.size == 0:
        return float("nan")
    return float(np.min(effects)) if effects.size <= 2 else float(np.median(effects))


def _rank_groups(series):
    groups = {}
    for rank, host in enumerate(series.host_of):
        groups.setdefault(host, []).append(rank)
    return groups


def _slow_pairs(f, rank, threshold):
    """How many of a rank's measured pairs are slower than mu + partner's effect by at least
    `threshold` (the host threshold), and how many it has."""
    row = f.count[rank] > 0
    excess = f.resid[rank] + f.h[rank]
    return int((row & (np.nan_to_num(excess, nan=-np.inf) >= threshold)).sum()), int(row.sum())


def _prepared(series):
    """(layers K x N x N, rounds K x N x N or None, groups {host: [ranks]}, several ranks a
    host?) of a series: lost ranks' pairs, and pairs within one host, left out (they measure
    another path)."""
    layers = np.array(series.layers, dtype=float)
    if layers.ndim == 2:
        layers = layers[None]
    rounds = None if series.rounds is None else np.array(series.rounds)
    if rounds is not None and rounds.ndim == 2:
        rounds = rounds[None]
    for rank in set(series.lost):
        layers[:, rank, :] = np.nan
        layers[:, :, rank] = np.nan
    groups = _rank_groups(series)
    multi = any(len(r) > 1 for r in groups.values())
    if multi:
        same = np.equal.outer(np.array(series.host_of), np.array(series.host_of))
        layers[:, same] = np.nan
    return layers, rounds, groups, multi


def _new_verdict(series, q, min_host, min_link):
    names = list(series.names)
    return {
        "format": FORMAT,
        "path": series.path,
        "family": series.family,
        "bytes": series.bytes,
        "ranks": len(names),
        "hosts_count": len(series.hosts),
        "q": q,
        "min_effect": {"host": min_host, "link": min_link},
        "hosts": [],
        "links": [],
        "rails": [],
        "switches": [],
        "fabric": [],
        "suspects": {"hosts": [], "links": [], "rails": []},
        "not_judged": {
            "lost": [names[r] for r in sorted(set(series.lost))],
            "incomplete": series.incomplete,
        },
        "lines": [],
        "drain": "",
        "retest_rounds": [],
        "retest_controls": [],
    }


def _too_few_hosts(groups, lost):
    """Why a series cannot tell hosts from links (fewer than 4 live hosts), or None."""
    live = [h for h, ranks in groups.items() if any(r not in lost for r in ranks)]
    if len(live) >= 4:
        return None
    if len(live) == 2:
        return "two hosts, one pair: a slow host cannot be told from a slow link; none named"
    what = f"{len(live)} hosts" if len(live) != 1 else "one host"
    return what + ": too few pairs to tell hosts from links; none named"


def screen_series(f, series, groups, multi, q, min_host, min_link, lenient=True):
    """The screen: the suspects a re-test decides (lenient: each host alone at Q_SCREEN and
    SCREEN_FLOOR of the minimum effects, see suspects()), and the call's tests whose spread
    and thresholds the decision uses. Several ranks a host: a host is what its ranks share
    (_shared), a rail a rank beyond its host, tested against the rails' spread within hosts."""
    first = suspects(f, q, min_host, min_link, screen=lenient)
    n = len(series.host_of)
    out = Screened(first=first, links=first["links"], link_resid=first["link_resid"])
    out.link_se, out.slow_rails, out.rail = first["link_se"], [], None
    out.rail_tau, out.rail_units = 0.0, 0
    if not multi:
        out.host_ids, out.h_host, out.se_host = list(range(n)), f.h, f.se_h
        out.host_p, out.slow_hosts = first["host_p"], first["hosts"]
        out.called_hosts = set(first["called_hosts"])
        out.host_tau = first["tau_lo"]
        out.host_threshold, out.units = first["host_threshold"], int(f.judged.sum())
        out.suspect_ranks = list(out.slow_hosts)
    else:
        _screen_hosts_and_rails(out, f, series, groups, q, min_host, lenient)
    busy = set(out.suspect_ranks)
    out.passed = [r for r in range(n) if f.judged[r] and r not in busy]
    out.screen_pct = {
        "host": 100 * math.expm1(first["screen_threshold"]),
        "link": 100 * math.expm1(first["link_screen_threshold"]),
    }
    return out


def _screen_hosts_and_rails(out, f, series, groups, q, min_host, lenient):
    """screen_series' part for several ranks a host: hosts, then rails beyond their host."""
    host_ids = sorted(groups)
    h_host = np.array([_shared(f.h[groups[h]]) for h in host_ids])
    se_host = np.array(
        [1.2533 * np.nanmedian(f.se_h[groups[h]]) / math.sqrt(len(groups[h])) for h in host_ids]
    )
    live = np.array([np.isfinite(x) for x in h_host])
    level, floor = (Q_SCREEN, _screen_floor(min_host)) if lenient else (q, min_host)
    called = test_hosts(h_host, se_host, q, min_host, live)
    ht = test_hosts(h_host, se_host, level, floor, live, adjust=not lenient)
    slow_hosts = [host_ids[i] for i in np.nonzero(ht["slow"])[0]]
    rail = np.array([f.h[r] - h_host[host_ids.index(h)] for r, h in enumerate(series.host_of)])
    # the rails' spread from differences between ranks of one host (var = 2 tau^2): the
    # MAD of rank-less-median would shrink it towards 0 for few ranks a host
    diffs = [
        f.h[a] - f.h[b]
        for ranks in groups.values()
        for i, a in enumerate(ranks)
        for b in ranks[i + 1 :]
        if np.isfinite(f.h[a]) and np.isfinite(f.h[b])
    ]
    diffs = np.array(diffs + [-x for x in diffs])
    spread = mad(diffs) / math.sqrt(2) if diffs.size else None
    where = f.judged & np.isfinite(rail)
    rails_called = test_hosts(rail, f.se_h, q, min_host, where, spread=spread)
    rt = test_hosts(rail, f.se_h, level, floor, where, spread=spread, adjust=not lenient)
    host_of = series.host_of
    out.slow_rails = [r for r in np.nonzero(rt["slow"])[0] if host_of[r] not in slow_hosts]
    out.suspect_ranks = sorted({r for h in slow_hosts for r in groups[h]} | set(out.slow_rails))
    out.host_ids, out.h_host, out.se_host, out.slow_hosts = host_ids, h_host, se_host, slow_hosts
    out.host_p, out.host_tau = ht["p"], called["tau_lo"]
    out.host_threshold, out.units = called["threshold"], int(live.sum())
    out.called_hosts = {host_ids[i] for i in np.nonzero(called["slow"])[0]}
    out.rail, out.rail_se, out.rail_tau = rail, f.se_h, rails_called["tau_lo"]
    out.rail_units = int(where.sum())
    out.rail_threshold = rails_called["threshold"]


def decide_series(f, series, groups, multi, screened, q, min_host, min_link):
    """The confirmation: what the series' re-tests measured of each suspect
    (retest_estimates), decided (decide) against the healthy spread with false-discovery
    control over the fleet's hosts, rails and pairs. Returns {"ranks": {rank: (est, se) or
    None}, "hosts": {host id: (est, se, p, called) or None}, "rails": {rank: ...}, "links":
    {(a, b): ...}}."""
    s = screened
    ranks, pairs = retest_estimates(f, series.retests, s.suspect_ranks, s.links)
    hosts = {}
    for h in s.slow_hosts:
        mine = [ranks.get(r) for r in (groups[h] if multi else [h])]
        mine = [x for x in mine if x is not None]
        if not mine:
            hosts[h] = None
        elif not multi:
            hosts[h] = mine[0]
        else:
            se = 1.2533 * float(np.median([x[1] for x in mine])) / math.sqrt(len(mine))
            hosts[h] = (_shared(np.array([x[0] for x in mine])), se)
    rails = {r: ranks.get(r) for r in s.slow_rails}
    first = {h: (s.h_host[s.host_ids.index(h)], s.se_host[s.host_ids.index(h)]) for h in hosts}
    first_rails = {r: (s.rail[r], s.rail_se[r]) for r in rails}
    return {
        "ranks": ranks,
        "hosts": decide(hosts, s.units, q, min_host, s.host_tau, first),
        "rails": decide(rails, s.rail_units, q, min_host, s.rail_tau, first_rails),
        "links": decide(pairs, s.first["pair_tests"], q, min_link),
    }


def _status(decided, first_call, require_retest):
    """A suspect's status: 'slow' or 'cleared' by its re-test; not re-tested: 'suspect', or
    without a required re-test 'slow' where the first pass alone calls it (None: dropped)."""
    if decided is not None:
        return "slow" if decided[3] else "cleared"
    if require_retest:
        return "suspect"
    return "slow" if first_call else None


def _interval(effect, se):
    return [100 * math.expm1(effect - 1.96 * se), 100 * math.expm1(effect + 1.96 * se)]


def report_hosts(verdict, f, series, groups, multi, screened, decided, require_retest):
    """The verdict's hosts and rails: an entry per suspect with its status, a line per call;
    returns the hosts to drain."""
    s, names, drained = screened, list(series.names), []
    call_level = s.called_hosts
    for h in s.slow_hosts:
        i = s.host_ids.index(h)
        first_call = h in call_level
        status = _status(decided["hosts"].get(h), first_call, require_retest)
        if status is None:
            continue
        effect, se = float(s.h_host[i]), float(s.se_host[i])
        slow_n = pairs = 0
        for r in groups[h] if multi else [h]:
            k, t = _slow_pairs(f, r, s.host_threshold)
            slow_n, pairs = slow_n + k, pairs + t
        again = [decided["ranks"].get(r) for r in (groups[h] if multi else [h])]
        again = [None if x is None else {"effect_pct": 100 * math.expm1(x[0])} for x in again]
        verdict["hosts"].append(
            {
                "host": series.hosts[h],
                "status": status,
                "effect_pct": 100 * math.expm1(effect),
                "ci95_pct": _interval(effect, se),
                "p": float(s.host_p[i]),
                "slow_pairs": slow_n,
                "pairs": pairs,
                "retest": again,
            }
        )
        if status == "slow":
            drained.append(series.hosts[h])
            verdict["lines"].append(host_line(series.hosts[h], effect, se, slow_n, pairs))
    for r in s.slow_rails:
        status = _status(decided["rails"].get(r), True, require_retest)
        effect, se = float(s.rail[r]), float(s.rail_se[r])
        verdict["rails"].append(
            {
                "rank": names[r],
                "host": series.hosts[series.host_of[r]],
                "status": status,
                "effect_pct": 100 * math.expm1(effect),
                "ci95_pct": _interval(effect, se),
            }
        )
        if status == "slow":
            pct, half = percent_interval(effect, se)
            verdict["lines"].append(
                f"slow rail {names[r]}: {pct:+.0f}% +-{half:.0f}% beyond its host's effect"
            )
    return drained


def report_links(verdict, f, series, screened, decided, require_retest):
    """The verdict's links: an entry per suspect pair with its status, a line per call."""
    s, names = screened, list(series.names)
    call_level = set(s.first["called_links"])
    for k, (a, b) in enumerate(s.links):
        x = decided["links"].get((a, b))
        status = _status(x, (a, b) in call_level, require_retest)
        if status is None:
            continue
        effect, se = float(s.link_resid[k]), float(s.link_se[k])
        verdict["links"].append(
            {
                "link": f"{names[a]}-{names[b]}",
                "ranks": [a, b],
                "status": status,
                "effect_pct": 100 * math.expm1(effect),
                "ci95_pct": _interval(effect, se),
                "retest_effect_pct": None if x is None else 100 * math.expm1(x[0]),
            }
        )
        if status == "slow":
            verdict["lines"].append(link_line(names[a], names[b], effect, se))


def report_close(verdict, series, screened, drained, require_retest):
    """The verdict's last lines: suspects not re-tested, 'no slow host or link', the drain
    hostlist and every host's effect with its interval."""
    waiting = {
        kind: sum(e["status"] == "suspect" for e in verdict[kind])
        for kind in ("hosts", "rails", "links")
    }
    if require_retest and not series.retests and any(waiting.values()):
        counts = [plural(count, f"suspect {kind[:-1]}") for kind, count in waiting.items() if count]
        verdict["lines"].append(
            f"not re-tested: {', '.join(counts)} (none called until a re-test confirms them)"
        )
    if not verdict["lines"]:
        verdict["lines"].append("no slow host or link")
    verdict["drain"] = hostlist(drained)
    s = screened
    verdict["host_effects"] = {
        series.hosts[h]: {
            "effect_pct": 100 * math.expm1(float(s.h_host[i])),
            "ci95_pct": _interval(float(s.h_host[i]), float(s.se_host[i])),
        }
        for i, h in enumerate(s.host_ids)
        if np.isfinite(s.h_host[i])
    }


def model_fit(layers, rounds, series, topology, q, multi=False):
    """The model fit: (Fit, Uplinks or None, notes). With a topology ({leaf switch: [hosts]},
    fleet_topology.read_topology), each leaf's uplink has a term on the pairs leaving it
    (fleet_topology.fit_uplinks), so that a slow uplink is not put on its hosts; the Fit's
    `offset` holds the terms each pair carries (None without a topology)."""
    if topology is None:
        split = None if multi else fleet_topology.two_sides(layers, q)
        if split is None:
            f = fit(layers, rounds)
            f.offset = None
            return f, None, []
        topology = {
            _hosts_of(series, ranks): [series.hosts[series.host_of[r]] for r in ranks]
            for ranks in split["sides"]
        }
        f, up, _ = model_fit(layers, rounds, series, topology, q)
        up.inferred = True
        return f, up, []
    leaf, note = fleet_topology.leaf_of(topology, series.hosts)
    f, up = fleet_topology.fit_uplinks(
        layers,
        np.asarray(leaf)[np.asarray(series.host_of)],
        list(topology),
        fit=fit,
        test_hosts=test_hosts,
        rounds=rounds,
        q=q,
    )
    f.offset = up.offset
    return f, up, [note] if note else []


def _switch_entry(switch, hosts, effect, se, line, **more):
    """A verdict's switch entry, called slow: the switch (None: the fleet's own boundary), its
    hosts as a hostlist, the effect on pairs crossing it with its interval, the report line."""
    entry = {
        "switch": switch,
        "hosts": hosts,
        "status": "slow",
        "effect_pct": 100 * math.expm1(effect),
        "ci95_pct": _interval(effect, se),
        "line": line,
    }
    entry.update(more)
    return entry


def _hosts_of(series, ranks):
    return hostlist(series.hosts[series.host_of[int(r)]] for r in ranks)


def boundaries(f, series, screened, q, min_host):
    """Without a topology: groups of suspect hosts slow only on pairs leaving the group, fine
    among themselves (fleet_topology.boundary_groups), taken out of the host suspects (a member
    slow beyond the group's own effect by the minimum effect stays one) and returned as the
    verdict's switch entries: a switch or its uplink, named with its hosts; none drained."""
    entries = []
    for group in fleet_topology.boundary_groups(f, screened.slow_hosts, q):
        members = [int(r) for r in group["ranks"]]
        apart = {r for r, b in zip(members, group["beyond"]) if b >= math.log1p(min_host)}
        gone = set(members) - apart
        screened.slow_hosts = [h for h in screened.slow_hosts if h not in gone]
        screened.suspect_ranks = [r for r in screened.suspect_ranks if r not in gone]
        label = _hosts_of(series, members)
        line = fleet_topology.group_line(group, label)
        within = 100 * math.expm1(group["within"])
        entries.append(
            _switch_entry(None, label, group["effect"], group["se"], line, within_pct=within)
        )
    return entries


def _inferred_boundary(b):
    """The switch entry of a boundary the fleet showed without a topology (two_sides): its
    smaller side (a leaf behind a slow uplink, or one of two switches) named with the other."""
    pct, half = percent_interval(b["effect"], b["se"])
    small, other = b["leaves"]
    if not b["slow"]:
        return []
    line = (
        f"slow boundary around {small}: {pct:+.0f}% +-{half:.0f}% on pairs between it and "
        f"{other}, fine on each side: a switch's uplink or the link between two switches, not "
        "the hosts (no topology given; none drained)"
    )
    return [_switch_entry(None, small, b["effect"], b["se"], line, sides=[small, other])]


def uplink_entries(series, up):
    """With a topology: the verdict's switch entries (each slow uplink, a slow path between two
    leaves) and the lines about the fabric (the pairs across leaves: no verdict)."""
    entries, lines = [], []
    for k in np.flatnonzero(up.slow):
        label = _hosts_of(series, up.ranks[k])
        pct, half = percent_interval(up.effect[k], up.se[k])
        line = (
            f"slow uplink of switch {up.names[k]} ({label}): {pct:+.0f}% +-{half:.0f}% on pairs "
            "leaving it, beyond the median switch: the uplink, not its hosts (none drained)"
        )
        entries.append(_switch_entry(up.names[k], label, up.effect[k], up.se[k], line))
    b = up.boundary
    if b is not None and getattr(up, "inferred", False):
        return _inferred_boundary(b), lines
    if b is not None:
        pct, half = percent_interval(b["effect"], b["se"])
        sides = [
            f"{name} ({_hosts_of(series, up.ranks[up.names.index(name)])})" for name in b["leaves"]
        ]
        text = (
            f"between switches {sides[0]} and {sides[1]}: {pct:+.0f}% +-{half:.0f}% on pairs "
            "across them"
        )
        if b["slow"]:
            hosts = _hosts_of(series, [r for x in up.ranks for r in x])
            line = f"slow path {text}: their uplinks, not the hosts (none drained)"
            entries.append(_switch_entry("-".join(b["leaves"]), hosts, b["effect"], b["se"], line))
        else:
            lines.append(f"path {text}: not slow")
    if np.isfinite(up.cross):
        pct, half = percent_interval(up.cross, up.cross_se)
        lines.append(
            f"pairs across switches: {pct:+.0f}% +-{half:.0f}% over pairs within one (the "
            "fabric's oversubscription; no verdict)"
        )
    return entries, lines + list(up.notes)


def judge(series, q=Q, min_host=MIN_HOST, min_link=MIN_LINK, require_retest=True, topology=None):
    """The verdict on one series, as a JSON-able dict (see module docstring), in its steps:
    the model fit, the screen, the re-test plan, the confirmation, the report. Hosts, links,
    rails, switches, sigma, thresholds, intervals, repeatability between passes, what was not
    judged, report lines and the hosts to drain as a Slurm hostlist. Without a required
    re-test and none measured, the screen is the call's level (the first pass decides, as
    before the screen existed). topology: {leaf switch: [hosts]} or None (model_fit)."""
    verdict = _new_verdict(series, q, min_host, min_link)
    layers, rounds, groups, multi = _prepared(series)
    why = _too_few_hosts(groups, set(series.lost))
    if why:
        verdict["not_judged"]["reason"] = why
        verdict["lines"].append(why)
        return verdict
    f, up, notes = model_fit(layers, rounds, series, topology, q, multi)
    lenient = require_retest or bool(series.retests)
    s = screen_series(f, series, groups, multi, q, min_host, min_link, lenient)
    switches, fabric = uplink_entries(series, up) if up is not None else ([], [])
    if up is None and not multi:
        switches = boundaries(f, series, s, q, min_host)
    verdict.update(_summary(f, s, multi))
    names = list(series.names)
    verdict["suspects"] = {
        "hosts": [series.hosts[h] for h in s.slow_hosts],
        "rails": [names[r] for r in s.slow_rails],
        "links": [f"{names[a]}-{names[b]}" for a, b in s.links],
    }
    plan, planned = retest_rounds(s.suspect_ranks, s.links, s.passed)
    verdict["retest_rounds"] = [[list(pair) for pair in rnd] for rnd in plan]
    verdict["retest_controls"] = [list(pair) for pair in planned["controls"]]
    decided = decide_series(f, series, groups, multi, s, q, min_host, min_link)
    verdict["switches"] = [{k: v for k, v in e.items() if k != "line"} for e in switches]
    verdict["lines"] += [e["line"] for e in switches]
    drained = report_hosts(verdict, f, series, groups, multi, s, decided, require_retest)
    report_links(verdict, f, series, s, decided, require_retest)
    report_close(verdict, series, s, drained, require_retest)
    verdict["fabric"] = fabric + notes
    if layers.shape[0] >= 2:
        verdict["repeatability"] = repeatability(layers, rounds, q, min_host, min_link)
    return verdict


def _summary(f, s, multi):
    """The verdict's fields on the fit and the screen: sigma, the baseline, the healthy spread,
    the call's and the screen's thresholds."""
    out = {
        "sigma_pct": 100 * math.expm1(f.sigma),
        "mu_log": f.mu,
        "baseline_us": math.exp(f.mu),
        "observations": f.n_obs,
        "tau_pct": 100 * math.expm1(s.first["tau"]),
        "thresholds_pct": {
            "host": 100 * math.expm1(s.host_threshold),
            "link": 100 * math.expm1(s.first["link_threshold"]),
        },
        "screen_pct": s.screen_pct,
    }
    if multi:
        out["thresholds_pct"]["rail"] = 100 * math.expm1(s.rail_threshold)
    return out


def repeatability(layers, rounds, q=Q, min_host=MIN_HOST, min_link=MIN_LINK):
    """Suspects of the first two passes fitted alone: how often the second gives the same
    verdict, per host (all hosts; and of those flagged in either) and per link (flagged in
    either)."""
    found = []
    for k in range(2):
        f = fit(layers[k], None if rounds is None else rounds[k])
        found.append(suspects(f, q, min_host, min_link))
    n = layers.shape[-1]
    h0, h1 = set(found[0]["hosts"]), set(found[1]["hosts"])
    l0, l1 = set(found[0]["links"]), set(found[1]["links"])
    either_h, either_l = h0 | h1, l0 | l1
    return {
        "hosts_same": 1 - len(h0 ^ h1) / n,
        "hosts_flagged_either": len(either_h),
        "hosts_flagged_both": len(h0 & h1),
        "links_flagged_either": len(either_l),
        "links_flagged_both": len(l0 & l1),
    }


# ------------------------------------------------------------------------------- the input


def unpack_upper(values, n):
    """An N x N symmetric float array (NaN diagonal and nulls) from upper-triangle order
    (0,1),(0,2)..(0,N-1),(1,2)..(N-2,N-1)."""
    out = np.full((n, n), np.nan)
    a, b = np.triu_indices(n, 1)
    if len(values) != a.size:
        raise ValueError(f"{len(values)} values for {n} ranks: want {a.size}")
    v = np.array([np.nan if x is None else float(x) for x in values])
    out[a, b] = v
    out[b, a] = v
    return out


def family_of(entry):
    """The family of a series or re-test entry (mpi_host/mode:pingpong), else its path: two
    families of one path (ping-pong and stream) are two series."""
    return entry.get("family") or entry["path"]


def from_result(document):
    """Series of a result document's "fleet" object (format xferbench-fleet/1): one per
    (family, bytes), its passes as layers of log time per message (us), the rounds of each
    pass (its round_of where given, else from its relabel), its re-tests (of the same family
    and size), lost ranks and the reason it is incomplete."""
    fleet = fleet_object(document) or document
    if fleet.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} object: {fleet.get('format')!r}")
    n = int(fleet["ranks"])
    hosts = list(fleet["hosts"])
    host_of = [int(x) for x in fleet["host_of"]]
    per_host = {}
    for rank, host in enumerate(host_of):
        per_host.setdefault(host, []).append(rank)
    if all(len(r) == 1 for r in per_host.values()):
        names = [hosts[h] for h in host_of]
    else:
        names = [f"{hosts[h]}/{per_host[h].index(r)}" for r, h in enumerate(host_of)]
    relabels = {int(p["pass"]): p.get("relabel") for p in fleet.get("passes", [])}
    seed = int(fleet.get("seed", 0))
    by_key = {}
    for s in fleet.get("series", []):
        key = (family_of(s), int(s["bytes"]))
        by_key.setdefault(key, []).append(s)
    retests = {}
    for r in fleet.get("retests", []):
        key = (family_of(r), int(r["bytes"]))
        bucket = retests.setdefault(key, {})
        for (a, b), t in zip(r["pairs"], r["time_us"]):
            if t is not None and t > 0:
                bucket.setdefault((min(a, b), max(a, b)), []).append(math.log(t))
    out = []
    for (family, nbytes), items in by_key.items():
        items = sorted(items, key=lambda s: int(s.get("pass", 0)))
        layers, rounds, passes = [], [], []
        for s in items:
            p = int(s.get("pass", 0))
            t = unpack_upper(s["time_us"], n)
            with np.errstate(invalid="ignore", divide="ignore"):
                layers.append(np.where(t > 0, np.log(t), np.nan))
            relabel = relabels.get(p) or pass_relabel(n, p, seed)
            planned = round_matrix(n, relabel)
            if s.get("round_of") is not None:  # as measured; the plan where it says none
                measured = unpack_upper(s["round_of"], n)
                planned = np.where(measured >= 0, measured, planned).astype(np.int64)
                np.fill_diagonal(planned, -1)
            rounds.append(planned)
            passes.append(p)
        out.append(
            Series(
                path=items[0]["path"],
                family=family,
                bytes=nbytes,
                names=names,
                hosts=hosts,
                host_of=host_of,
                layers=np.array(layers),
                rounds=np.array(rounds),
                passes=passes,
                retests=retests.get((family, nbytes), {}),
                lost=[int(x) for x in fleet.get("lost", [])],
                incomplete=fleet.get("incomplete"),
            )
        )
    return out


def judge_result(document, **options):
    """judge() of every series of a result document."""
    return [judge(s, **options) for s in from_result(document)]
