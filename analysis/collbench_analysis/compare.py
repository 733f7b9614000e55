"""Run-vs-run comparison that separates the code from the machine and from noise.

Samples within one run share that run's state (pseudo-replicates, Hoefler & Belli SC'15), so
a verdict must allow for what changes *between* runs. Per point and side:

- each run gives the log of a low percentile of the point's samples (p10 unless told
  otherwise, see DEFAULT_QUANTILE): normalised by the same statistic of the run's own control
  point (same op, size and variant, algorithm ``library`` unless told otherwise) in
  ``normalised`` mode, absolute in ``raw`` mode; its sampling variance is bootstrapped from the
  samples (``samples_us``; from p5/p50/p95 and the sample count in older records);
- the change is exp(mean log of AFTER's runs − mean log of BEFORE's) − 1;
- its variance, when both sides have ≥ 2 runs: the spread of the point's own runs, moderated
  towards its size band's typical spread (Smyth's moderated t); else the sampling variance
  plus the robust spread (MAD) of the other algorithms' changes in the band (most points do not
  change), scaled by each point's within-run spread, plus the part of the control's move that
  normalising leaves;
- t test on the log change, p-values corrected across points (Benjamini–Hochberg or Holm).

``regressed``/``improved`` need both a corrected p below alpha *and* a change beyond the
threshold; ``inconclusive`` means too few samples or no control to normalise by. Control
points measure the machine's drift (reported) and are not judged in normalised mode.
"""
from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from scipy import stats

import pandas as pd

from .load import MATCH_FIELDS, backend_order, format_bytes, frame_note

# A row of the results frame (``DataFrame.itertuples``): its columns as attributes (``p.algo``, ``p.p50_us``).
Point = Any
from .tables import Table, fmt_num

MIN_SAMPLES = 5  # fewer samples in a run: the percentile's uncertainty cannot be estimated
BOOTSTRAP = 400  # resamples per run for the variance of the log percentile
MODES = ("auto", "normalised", "raw")
# The statistic compared: a low percentile of each point's samples. On a shared machine
# interference only ever adds time, so the lower tail measures the code and the median the code
# plus the load (Chen & Revels, "Robust benchmarking in noisy environments", 2016). Measured on
# this project's 2-core machine, A/A runs (normalised, 1–4 MiB): robust sd of the change 0.056
# at p10 against 0.18 at p50; 95th percentile of |change| 0.17 against 2.5.
DEFAULT_QUANTILE = 10.0
CORRECTIONS = ("bh", "holm")
# Degrees of freedom the band's pooled between-run variance counts for when replicate runs give a
# point its own estimate (moderated t), and of the t distribution for one run per side, whose
# between-run changes are heavier-tailed than a normal (A/A runs on this project's machine: 90th /
# 50th percentile of |change| 2.5-4.4 within groups of equal spread; normal 2.4, t3 3.1). With 4,
# none of 56 ordered A/A pairs of single runs flags a point; with 6 one pair does, with 10 three
# (tests/analysis/fixtures, docs/analysis.md "collcompare").
PRIOR_DF = 4
SINGLE_RUN_DF = 4


class Verdict(str, Enum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    UNCHANGED = "unchanged"
    INCONCLUSIVE = "inconclusive"
    CONTROL = "control"  # a control point in normalised mode: measures the machine, not judged
    ADDED = "added"
    REMOVED = "removed"
    SKIPPED = "skipped"  # skipped on at least one side: nothing to compare

    def __str__(self) -> str:
        return self.value


CHANGED = (Verdict.REGRESSED, Verdict.IMPROVED)


@dataclass(frozen=True)
class RunEstimate:
    """One run's log of the compared percentile (normalised or not) and its sampling variance."""

    log_m: float
    var: float
    n: int  # fewest samples behind it
    spread: float = 0.0  # log(p50 / p10) of the samples: how unsettled the point was in its run


@dataclass
class PointDiff:
    """One matched (or one-sided) point."""

    key: tuple[Any, ...]
    before: Point | None
    after: Point | None
    verdict: Verdict
    change: float | None = None  # AFTER/BEFORE − 1 of the (normalised) compared percentile
    ci: tuple[float, float] | None = None  # 95 % confidence interval of `change`
    p: float | None = None
    p_adj: float | None = None
    method: str = ""  # "normalised" or "raw"
    raw_change: float | None = None  # change of the compared percentile without normalising
    times: tuple[float, float] | None = None  # the compared percentile, µs, geometric mean over each side's runs
    runs: tuple[int, int] = (0, 0)
    reason: str = ""
    # intermediate values of the test
    log_change: float = field(default=0.0, repr=False)
    var_within: float = field(default=0.0, repr=False)
    var_between: float = field(default=0.0, repr=False)
    spread: float = field(default=0.0, repr=False)  # mean within-run log(p50/p10) over its runs
    df: float = field(default=math.inf, repr=False)  # degrees of freedom of the test's t distribution

    @property
    def point(self) -> Point:
        p = self.after or self.before
        assert p is not None
        return p

    @property
    def ratio(self) -> float | None:
        return None if self.change is None else 1.0 + self.change


@dataclass
class Drift:
    """The machine's drift, seen on the control points: median raw AFTER/BEFORE − 1."""

    change: float | None
    points: int
    q1: float | None = None
    q3: float | None = None

    def sentence(self, after_name: str = "AFTER") -> str:
        if self.change is None:
            return "machine drift: unknown (no control point measured on both sides)"
        way = "slower" if self.change > 0 else "faster"
        return (f"the machine is {abs(self.change):.0%} {way} in {after_name}, median over {self.points} control "
                f"point(s) (quartiles {self.q1:+.0%} … {self.q3:+.0%})")


@dataclass
class Comparison:
    diffs: list[PointDiff]
    drift: Drift
    mode: str
    threshold: float
    alpha: float
    correction: str
    controls: tuple[str, ...]
    runs: tuple[int, int]  # runs on each side
    quantile: float = DEFAULT_QUANTILE  # the percentile of each point's samples compared
    backends: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # each side's backends (load.backend_order)

    @property
    def changed(self) -> list[PointDiff]:
        return [d for d in self.diffs if d.verdict in CHANGED]

    @property
    def regressed(self) -> list[PointDiff]:
        return [d for d in self.diffs if d.verdict is Verdict.REGRESSED]

    def method_sentence(self) -> str:
        ctl = "/".join(self.controls)
        how = {"normalised": f"control-normalised (each point ÷ its run's own {ctl} point at the same size)",
               "raw": "raw (absolute times)",
               "auto": f"control-normalised (each point ÷ its run's own {ctl} point at the same size; raw where "
                       "there is none and both sides have replicate runs)"}[self.mode]
        between = ("between-run variance from each point's replicate runs, moderated towards its size band's "
                   "(t test)" if min(self.runs) >= 2
                   else "between-run variance from the other algorithms' changes at those sizes, scaled by each "
                        "point's within-run spread (one run per side: t test with "
                        f"{SINGLE_RUN_DF:g} df, only changes well beyond this machine's run-to-run noise can be "
                        "called; give several runs per side)")
        corr = {"bh": "Benjamini–Hochberg", "holm": "Holm"}[self.correction]
        stat = "median" if self.quantile == 50 else f"{self.quantile:g}th percentile"
        return (f"verdict: {how}, on each point's {stat}; {self.runs[0]} vs {self.runs[1]} run(s), {between}; "
                f"{corr}-corrected p < {self.alpha:g} and |change| > {self.threshold:.0%}")


# --------------------------------------------------------------------------- statistics (pure)

def resample_percentiles(x: np.ndarray, idx: np.ndarray, quantile: float) -> np.ndarray:
    """``np.percentile(x[idx], quantile, axis=1)`` (its linear method, bit for bit) without sorting
    each resample: a row's order statistics are read off the counts of the ranks it drew, so the
    bootstrap costs O(rows x n) instead of a partition of every row (half of a comparison's time)."""
    b, n = idx.shape
    order = np.argsort(x, kind="stable")
    xs, rank = x[order], np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n)
    counts = np.bincount((rank[idx] + n * np.arange(b)[:, None]).ravel(), minlength=b * n)
    drawn = np.cumsum(counts.reshape(b, n), axis=1)  # drawn[r, j]: how many of row r's values are <= xs[j]
    virtual = (n - 1) * np.true_divide(quantile, 100)  # numpy's linear method and its index rules
    lo = n - 1 if virtual >= n - 1 else int(np.floor(virtual))
    hi = min(lo + 1, n - 1)
    gamma = virtual - (-1 if virtual >= n - 1 else lo)
    prev, nxt = xs[(drawn <= lo).sum(axis=1)], xs[(drawn <= hi).sum(axis=1)]  # the row's lo-th, hi-th smallest
    diff = nxt - prev
    return nxt - diff * (1 - gamma) if gamma >= 0.5 else prev + diff * gamma


# A pure function of the samples: one run compared against several (collcompare over many
# files, the A/A tests' every ordered pair) bootstraps each of its points once per seed.
@functools.lru_cache(maxsize=1 << 16)
def _samples_estimate(samples: tuple[float, ...], quantile: float, seed: int) -> RunEstimate:
    x = np.asarray(samples, dtype=float)
    n = len(x)
    v = float(np.percentile(x, quantile))
    if n < 2 or v <= 0:
        return RunEstimate(math.log(v) if v > 0 else -math.inf, math.inf, n)
    rng = np.random.default_rng(seed)
    boot = resample_percentiles(x, rng.integers(0, n, size=(BOOTSTRAP, n)), quantile)
    lo, mid = np.percentile(x, [10, 50])
    spread = math.log(mid / lo) if lo > 0 else 0.0
    return RunEstimate(math.log(v), float(np.var(np.log(np.maximum(boot, 1e-12)), ddof=1)), n, spread)


def run_estimate(p: Point, quantile: float = 50.0, seed: int = 0) -> RunEstimate:
    """log of the `quantile`-th percentile of one point's samples and its bootstrap variance.

    Without samples (older records) the percentile is read from p5/p50 (linear in between) and
    its standard error approximated as the median's normal-theory value, 1.2533 σ / √n with
    σ ≈ (p95 − p5) / 3.29.
    """
    assert p.measured
    if p.samples_us:
        return _samples_estimate(tuple(p.samples_us), quantile, seed)
    n = p.iters or 0
    p50, lo = p.p50_us, p.lo_us  # lo: p5 (min when a record lacks it)
    v = p50 if quantile >= 50 else lo + (p50 - lo) * max(0.0, quantile - 5) / 45
    if v <= 0:
        return RunEstimate(-math.inf, math.inf, n)
    sigma = (p.hi_us - p.lo_us) / 3.29
    se = 1.2533 * sigma / math.sqrt(max(n, 1)) / v
    spread = math.log(p50 / lo) * 5 / 6 if lo > 0 and p50 > lo else 0.0  # p5..p50 scaled to p10..p50
    return RunEstimate(math.log(v), se * se, n, spread)


def adjust(pvalues: Sequence[float], method: str = "bh") -> list[float]:
    """Benjamini–Hochberg (FDR) or Holm (FWER) adjusted p-values, in input order."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p)
    ranked = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    elif method == "bh":
        adj = np.minimum.accumulate((m / np.arange(m, 0, -1) * ranked[::-1]))[::-1]
        adj = np.minimum(1.0, adj)
    else:
        raise ValueError(f"unknown correction {method!r} (expected one of {CORRECTIONS})")
    out = np.empty(m)
    out[order] = adj
    return out.tolist()


def robust_var(values: Sequence[float]) -> float:
    """Variance from the median absolute deviation (1.4826 · MAD)², insensitive to the few that moved."""
    if len(values) < 2:
        return 0.0
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    return (1.4826 * mad) ** 2


def size_band(nbytes: int) -> int:
    """Sizes within a factor of 8 share one between-run variance (noise depends on size)."""
    return max(nbytes, 1).bit_length() // 3


# --------------------------------------------------------------------------- matching

def _by_run(results: pd.DataFrame) -> tuple[dict[tuple[Any, ...], dict[str, Point]], int]:
    """key (the point identity, :data:`MATCH_FIELDS`) → run → row, and the number of runs.

    Within a run the last loaded row of an identity wins; a row without run_id is its own run.
    """
    df = results.assign(key=list(zip(*(results[c] for c in MATCH_FIELDS))) if len(results) else [],
                        run=results["run_id"].fillna(results["source"]))
    df = df.drop_duplicates(["key", "run"], keep="last")
    rows = list(df.drop(columns=["key", "run"]).itertuples(index=False))  # once: per group it is slow
    runs = df["run"].tolist()
    table = {key: {runs[i]: rows[i] for i in idx} for key, idx in df.groupby("key", sort=False).indices.items()}
    return table, df["run"].nunique()


_ALGO = MATCH_FIELDS.index("algo")


def _control_key(key: tuple[Any, ...], control: str) -> tuple[Any, ...]:
    return key[:_ALGO] + (control,) + key[_ALGO + 1:]


class _Estimates:
    """run_estimate, each (point row, seed) bootstrapped once per comparison: a point is estimated
    raw and normalised, and a control once for every algorithm at its size (3x fewer bootstraps)."""

    def __init__(self, quantile: float) -> None:
        self.quantile, self._done = quantile, {}

    def __call__(self, p: Point, seed: int) -> RunEstimate:
        k = (id(p), seed)  # the rows live as long as the comparison's tables
        if k not in self._done:
            self._done[k] = run_estimate(p, self.quantile, seed=seed)
        return self._done[k]


def _side(runs: dict[str, Point], table: dict[tuple[Any, ...], dict[str, Point]], key: tuple[Any, ...],
          controls: Sequence[str], normalise: bool, estimate: _Estimates) -> tuple[list[RunEstimate], str]:
    """One side's per-run estimates; normalised by the same run's control when asked."""
    out = []
    for i, (run_id, p) in enumerate(sorted(runs.items())):
        if not p.measured:
            continue
        est = estimate(p, seed=i)
        if normalise:
            ctl = next((table[ck][run_id] for c in controls if (ck := _control_key(key, c)) in table
                        and run_id in table[ck] and table[ck][run_id].measured), None)
            if ctl is None:
                return [], "no control point in the same run"
            c = estimate(ctl, seed=i + 1000)
            est = RunEstimate(est.log_m - c.log_m, est.var + c.var, min(est.n, c.n), est.spread + c.spread)
        out.append(est)
    return out, ""


def _mean_log(ests: Sequence[RunEstimate]) -> tuple[float, float]:
    k = len(ests)
    return sum(e.log_m for e in ests) / k, sum(e.var for e in ests) / (k * k)


def compare(before: pd.DataFrame, after: pd.DataFrame, threshold: float = 0.10, *, mode: str = "auto",
            controls: Sequence[str] = ("library",), alpha: float = 0.05, correction: str = "bh",
            quantile: float = DEFAULT_QUANTILE) -> Comparison:
    """Match the results frames' points by :data:`MATCH_FIELDS` across the runs of each side and judge them."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (expected one of {MODES})")
    (b_tab, b_runs_n), (a_tab, a_runs_n) = _by_run(before), _by_run(after)
    n_runs = _runs_per_backend(before, after) or (b_runs_n, a_runs_n)
    replicated = min(n_runs) >= 2
    controls = tuple(controls)
    diffs: list[PointDiff] = []
    pending: list[tuple[PointDiff, list[RunEstimate], list[RunEstimate]]] = []
    estimate = _Estimates(quantile)
    for key in list(b_tab) + [k for k in a_tab if k not in b_tab]:
        b_runs, a_runs = b_tab.get(key, {}), a_tab.get(key, {})
        b, a = (list(b_runs.values())[-1] if b_runs else None), (list(a_runs.values())[-1] if a_runs else None)
        if b is None or a is None:
            diffs.append(PointDiff(key, b, a, Verdict.ADDED if b is None else Verdict.REMOVED))
            continue
        d = PointDiff(key, b, a, Verdict.UNCHANGED, runs=(len(b_runs), len(a_runs)))
        diffs.append(d)
        if any(p.wrong > 0 for p in a_runs.values()) and all(p.wrong == 0 for p in b_runs.values()):
            d.verdict, d.reason = Verdict.REGRESSED, f"wrong results after ({a.wrong} elements)"
            continue
        if not any(p.measured for p in b_runs.values()) or not any(p.measured for p in a_runs.values()):
            side = "before" if not b.measured else "after"
            d.verdict = Verdict.SKIPPED
            d.reason = f"skipped {side}" + (f": {r}" if (r := (a.skip_reason or b.skip_reason)) else "")
            continue
        rb, ra = (_side(b_runs, b_tab, key, controls, False, estimate),
                  _side(a_runs, a_tab, key, controls, False, estimate))
        (mb, _), (ma, _) = _mean_log(rb[0]), _mean_log(ra[0])
        d.raw_change = math.expm1(ma - mb) if math.isfinite(ma - mb) else None
        if math.isfinite(mb) and math.isfinite(ma):
            d.times = (math.exp(mb), math.exp(ma))
        is_control = b.algo in controls
        normalise = mode == "normalised" or (mode == "auto" and not (replicated and not _has_control(key, b_tab, a_tab, controls)))
        if is_control and mode != "raw":
            d.verdict, d.method, d.change = Verdict.CONTROL, "raw", d.raw_change
            d.reason = "control: measures the machine"
            continue
        if normalise:
            eb, why_b = _side(b_runs, b_tab, key, controls, True, estimate)
            ea, why_a = _side(a_runs, a_tab, key, controls, True, estimate)
            if why_b or why_a:
                d.verdict, d.reason = Verdict.INCONCLUSIVE, (why_b or why_a) + " (give ≥ 2 runs per side, or --mode raw)"
                continue
            d.method = "normalised"
        else:
            eb, ea, d.method = rb[0], ra[0], "raw"
        if min(e.n for e in eb + ea) < MIN_SAMPLES:
            d.verdict, d.reason = Verdict.INCONCLUSIVE, f"too few samples (< {MIN_SAMPLES} in a run)"
            continue
        (mb, vb), (ma, va) = _mean_log(eb), _mean_log(ea)
        if not (math.isfinite(mb) and math.isfinite(ma) and math.isfinite(vb + va)):
            d.verdict, d.reason = Verdict.INCONCLUSIVE, "zero or undefined times"
            continue
        d.log_change, d.var_within = ma - mb, vb + va
        d.spread = statistics.mean(e.spread for e in eb + ea)
        d.change = math.expm1(d.log_change)
        pending.append((d, eb, ea))

    _between_run_variance(pending, replicated)
    if not replicated:  # replicate runs measure this directly
        _moved_controls(pending, diffs, controls)
    for d, _, _ in pending:
        se = math.sqrt(d.var_within + d.var_between)
        d.p = float(2 * stats.t.sf(abs(d.log_change) / se, d.df)) if se > 0 else (0.0 if d.log_change else 1.0)
        half = float(stats.t.ppf(0.975, d.df)) * se  # the same t distribution as p: 1.96 se for df = inf
        d.ci = (math.expm1(d.log_change - half), math.expm1(d.log_change + half))
    for (d, _, _), q in zip(pending, adjust([d.p for d, _, _ in pending], correction)):
        d.p_adj = q
        big = d.change is not None and abs(d.change) > threshold
        if q < alpha and big:
            d.verdict = Verdict.REGRESSED if d.change > 0 else Verdict.IMPROVED
        elif big:
            d.reason = "within run-to-run noise"
        elif q < alpha:
            d.reason = "significant, below the threshold"
    return Comparison(sorted(diffs, key=_sort_key), machine_drift(diffs, controls), mode, threshold, alpha, correction, controls, n_runs,
                      quantile, (tuple(backend_order(before["backend"].dropna())),
                                 tuple(backend_order(after["backend"].dropna()))))


# --------------------------------------------------------------------------- several backends

SIDE_BY_SIDE = ("to set backends side by side, load both sides into one report: collplot BEFORE AFTER -o DIR "
                "(its tables 'Backends side by side', or for two MPIs its section 'Open MPI vs MPICH': which is "
                "faster at each size, by how much, ties within noise; docs/analysis.md \"Several backends in one "
                "results file\")")


def backends_sentence(backends: tuple[Sequence[str], Sequence[str]]) -> str:
    """"" when both sides hold the same backends; else what that means for the comparison.

    A point is compared only with the same point (:data:`MATCH_FIELDS`, the backend among them) of the
    other side: a Gloo allreduce is not a later run of an MPI one, so a backend on one side only has its
    points added or removed, and two sides without a backend in common compare nothing
    (:func:`no_shared_backend`).
    """
    before, after = backends
    if set(before) == set(after):
        return ""
    shared = [b for b in before if b in after]
    sides = f"backends: before {', '.join(before) or 'none'}; after {', '.join(after) or 'none'}"
    if not shared:
        return f"{sides}: no backend in common, no point compared; {SIDE_BY_SIDE}"
    gone = [b for b in before if b not in after]
    new = [b for b in after if b not in before]
    what = "; ".join([f"{', '.join(bs)}: {how}" for bs, how in ((gone, "removed"), (new, "added")) if bs])
    return (f"{sides}: points are compared within one backend ({', '.join(shared)}); the other backends' points "
            f"are added or removed ({what}), never compared across backends")


def no_shared_backend(before: pd.DataFrame, after: pd.DataFrame) -> str:
    """An error line when the two sides have no backend in common (before: mpi, after: gloo), else ""."""
    b, a = backend_order(before["backend"].dropna()), backend_order(after["backend"].dropna())
    if not b or not a or set(b) & set(a):
        return ""
    return (f"before holds {', '.join(b)} results and after {', '.join(a)}: no backend in common, so no point "
            f"to compare (collcompare compares a point with the same point, same backend, of the other side's "
            f"runs: a regression test of one backend's code); {SIDE_BY_SIDE}")


def _runs_per_backend(before: pd.DataFrame, after: pd.DataFrame) -> tuple[int, int] | None:
    """Each side's runs of one backend, the fewest over the backends both sides hold; None with one backend.

    A run has one backend, and a point is matched only within its backend: a job folder with an mpi and
    a gloo run per side is one run per side for every point, not two (replicate runs, which would let
    points without a control be judged raw and their own runs' spread stand for the between-run noise).
    """
    sides = [df.assign(run=df["run_id"].fillna(df["source"])).groupby("backend")["run"].nunique()
             for df in (before, after)]
    shared = [b for b in sides[0].index if b in sides[1].index]
    if not shared or (len(sides[0]) == 1 and len(sides[1]) == 1):
        return None
    return min(int(sides[0][b]) for b in shared), min(int(sides[1][b]) for b in shared)


def _has_control(key: tuple[Any, ...], b_tab: dict, a_tab: dict, controls: Sequence[str]) -> bool:
    return any(_control_key(key, c) in b_tab and _control_key(key, c) in a_tab for c in controls)


def _between_run_variance(pending: list[tuple[PointDiff, list[RunEstimate], list[RunEstimate]]],
                          replicated: bool) -> None:
    """Set each pending diff's var_between and df: with var_within, the variance of its log change.

    With ≥ 2 runs on both sides: the point's own spread of its runs (pooled over the two sides,
    k_before + k_after − 2 degrees of freedom), moderated towards its size band's pooled value as
    if that were PRIOR_DF more degrees of freedom (Smyth's moderated t: a point whose runs happened
    to agree is not trusted alone, one whose runs disagree keeps its own noise), times
    (1/k_before + 1/k_after); t test with PRIOR_DF + own degrees of freedom.

    One run per side: the empirical null of the band's *other* algorithms (most points of a
    comparison do not change; the point's own algorithm is left out so that its change cannot hide
    itself). Points that were unsettled within their runs also move more between runs, so each
    change is scaled by (its within-run spread + the band's median spread) before the robust
    variance (1.4826 · MAD)² is taken, and scaled back for the point judged. Between-run changes
    have heavier tails than a normal, so the test uses a t distribution with SINGLE_RUN_DF.
    """
    keys = pd.DataFrame({"method": [d.method for d, _, _ in pending],
                         "band": [size_band(d.point.bytes) for d, _, _ in pending]})
    bands = {k: [pending[i] for i in rows] for k, rows in keys.groupby(["method", "band"], sort=False).indices.items()}
    everything = {k: [pending[i] for i in rows] for k, rows in keys.groupby("method", sort=False).indices.items()}
    own = {id(d): _own_variance(eb, ea) for d, eb, ea in pending if len(eb) >= 2 and len(ea) >= 2}
    for (method, _), members in bands.items():
        if replicated and all(len(eb) >= 2 and len(ea) >= 2 for _, eb, ea in members):
            pool = members if len(members) >= 8 else everything[method]
            prior = _typical_variance([own[id(d)] for d, _, _ in pool if id(d) in own])
            for d, eb, ea in members:
                s2, df = own[id(d)]
                moderated = (PRIOR_DF * prior + df * s2) / (PRIOR_DF + df)
                # The runs' spread already holds their sampling noise (the bootstrap's estimate of
                # it from 50 samples overstates it), so it is the whole variance.
                d.var_within, d.var_between = 0.0, moderated * (1 / len(eb) + 1 / len(ea))
                d.df = PRIOR_DF + df
            continue
        for d, _, _ in members:
            pool = [t for t in members if t[0].point.algo != d.point.algo]
            if len(pool) < 8:
                pool = [t for t in everything[method] if t[0].point.algo != d.point.algo] or everything[method]
            floor = statistics.median(t[0].spread for t in pool)
            scale = robust_var([t[0].log_change / (t[0].spread + floor) for t in pool]) if floor > 0 else 0.0
            if scale > 0:
                d.var_between = max(0.0, scale * (d.spread + floor) ** 2 - d.var_within)
            else:  # no spreads (records without samples): the plain empirical null
                d.var_between = max(0.0, robust_var([t[0].log_change for t in pool])
                                    - statistics.median(t[0].var_within for t in pool))
            d.df = SINGLE_RUN_DF


def _typical_variance(estimates: Sequence[tuple[float, int]]) -> float:
    """The band's pooled between-run variance: the median of its points' own estimates, divided by
    the median of χ²_df/df (a median of variances understates their mean). The median, not the mean:
    a few points whose runs fell into different machine modes would otherwise set every point's prior."""
    df = statistics.median(d for _, d in estimates)
    return statistics.median(v for v, _ in estimates) / (stats.chi2.median(df) / df)


def _own_variance(eb: Sequence[RunEstimate], ea: Sequence[RunEstimate]) -> tuple[float, int]:
    """The variance of a point's runs around their side's mean (sides pooled), and its df."""
    ss = sum((e.log_m - m) ** 2 for side in (eb, ea) for m in [statistics.mean(x.log_m for x in side)] for e in side)
    df = len(eb) + len(ea) - 2
    return ss / df, df


def _moved_controls(pending: list[tuple[PointDiff, list[RunEstimate], list[RunEstimate]]],
                    diffs: Sequence[PointDiff], controls: Sequence[str]) -> None:
    """Add the uncertainty that normalising leaves when a point's control moved between the runs.

    Whether the whole machine drifted or one size was disturbed, algorithms may react to it
    unequally, so dividing by the control removes only part of it. How much is left is learned
    from the comparison itself: τ = robust spread (1.4826 · MAD) of the ratios (normalised change ÷
    control's change) of the *other* algorithms' points whose control moved by more than 5 %;
    τ² × the control's log change² is added as between-run variance. A uniform drift gives τ ≈ 0.
    """
    ctl_log = {d.key: math.log1p(d.raw_change) for d in diffs
               if d.point.algo in controls and d.raw_change is not None and d.raw_change > -1}
    moved = {}
    for d, _, _ in pending:
        if d.method == "normalised":
            moved[id(d)] = next((ctl_log[ck] for c in controls if (ck := _control_key(d.key, c)) in ctl_log), 0.0)
    for d, _, _ in pending:
        m = moved.get(id(d), 0.0)
        if not m:
            continue
        ratios = [t.log_change / moved[id(t)] for t, _, _ in pending
                  if id(t) in moved and t.point.algo != d.point.algo and abs(moved[id(t)]) > math.log1p(0.05)]
        if len(ratios) >= 8:
            d.var_between += robust_var(ratios) * m * m


def machine_drift(diffs: Sequence[PointDiff], controls: Sequence[str]) -> Drift:
    changes = [d.raw_change for d in diffs if d.raw_change is not None and d.point.algo in controls]
    if not changes:
        return Drift(None, 0)
    q1, med, q3 = np.quantile(changes, [0.25, 0.5, 0.75])
    return Drift(float(med), len(changes), float(q1), float(q3))


def _sort_key(d: PointDiff) -> tuple[Any, ...]:
    p = d.point
    return (p.op, p.world_size, p.nodes, p.algo, p.backend, p.device, p.dtype, str(p.redop), p.in_place,
            p.mode, -1 if p.src is None else p.src, -1 if p.dst is None else p.dst, p.bytes)


# --------------------------------------------------------------------------- report

def _where(p: Point) -> str:
    s = f"{p.op}/{p.algo} {p.backend}/{p.device} {p.dtype}"
    if p.redop:
        s += f" {p.redop}"
    if p.in_place:
        s += " inplace"
    if p.mode != "per_iter":
        s += f" {p.mode}"
    if p.src is not None:
        s += f" {p.src}->{p.dst}"
    return f"{s} {p.layout}"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:+.1f}%"


def _shown(p: Point | None, quantile: float) -> float | None:
    """The compared percentile of a point's samples (its p50 when the record has none)."""
    if p is None or not p.measured:
        return None
    return float(np.percentile(p.samples_us, quantile)) if p.samples_us else p.p50_us


def diff_table(cmp: Comparison, diffs: Sequence[PointDiff] | None = None) -> Table:
    """Points grouped by series (op/algo/variant/layout), with the change and its 95 % CI."""
    rows = cmp.changed if diffs is None else list(diffs)
    q = f"p{cmp.quantile:g}"
    shown = [d.times or (_shown(d.before, cmp.quantile), _shown(d.after, cmp.quantile)) for d in rows]
    where = pd.Series([_where(d.point) for d in rows], dtype=object)
    frame = pd.DataFrame({
        "point": where.where(where != where.shift()).fillna(""),  # a series' name once, on its first row
        "size": [format_bytes(d.point.bytes) for d in rows],
        f"before {q} (µs)": [fmt_num(b) for b, _ in shown], f"after {q} (µs)": [fmt_num(a) for _, a in shown],
        "change": [_pct(d.change) for d in rows],
        "95% CI": [f"[{_pct(d.ci[0])}, {_pct(d.ci[1])}]" if d.ci else "—" for d in rows],
        "p (adj.)": [fmt_num(d.p_adj, 2) for d in rows], "raw change": [_pct(d.raw_change) for d in rows],
        "verdict": [str(d.verdict) for d in rows], "note": [d.reason for d in rows]})
    return Table("Changed points" if diffs is None else "All points", frame, align="lrrrrrrrll",
                 note=cmp.method_sentence() + f". before/after: the {q} time, geometric mean over each side's runs; "
                      f"change = AFTER ÷ BEFORE − 1 of the (normalised) {q} time (> 0: slower).",
                 row_classes=["bad" if d.verdict is Verdict.REGRESSED else "" for d in rows])


def counts(diffs: Sequence[PointDiff]) -> dict[Verdict, int]:
    return {v: sum(1 for d in diffs if d.verdict is v) for v in Verdict}


def summary_line(diffs: Sequence[PointDiff]) -> str:
    c = counts(diffs)
    return ", ".join(f"{n} {v}" for v, n in c.items() if n) or "no points"


def header_lines(cmp: Comparison, before: str, after: str) -> list[str]:
    backends = backends_sentence(cmp.backends)
    return [f"before: {before}", f"after: {after}", cmp.method_sentence(), *([backends] if backends else []),
            cmp.drift.sentence("AFTER"), f"result: {summary_line(cmp.diffs)}"]


def write_markdown(path: Path, cmp: Comparison, before: str, after: str, figures: Sequence[str]) -> Path:
    lines = ["# collcompare", ""] + [f"- {line}" for line in header_lines(cmp, before, after)] + [""]
    lines += ["## Changed points", "", diff_table(cmp).markdown() if cmp.changed else "None.", ""]
    lines += ["## All points", "", diff_table(cmp, cmp.diffs).markdown()]
    if figures:
        lines += ["## Figures", ""] + [f"![{f}]({f})\n" for f in figures]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def write_html(path: Path, cmp: Comparison, before: str, after: str, figures: Sequence[str]) -> Path:
    """Self-contained page: the header, the changed points, the figures (embedded), every point."""
    import base64
    import html

    def table_html(t: Table) -> str:
        return t.html()

    parts = ["<!doctype html><meta charset='utf-8'><title>collcompare</title>",
             "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px}tr.bad{background:#fdd}"
             "table{border-collapse:collapse}img{max-width:100%}</style>", "<h1>collcompare</h1><ul>"]
    parts += [f"<li>{html.escape(line)}</li>" for line in header_lines(cmp, before, after)] + ["</ul>"]
    parts += ["<h2>Changed points</h2>", table_html(diff_table(cmp)) if cmp.changed else "<p>None.</p>"]
    for f in figures:
        data = base64.b64encode((path.parent / f).read_bytes()).decode()
        parts.append(f"<h3>{html.escape(f)}</h3><img alt='{html.escape(f)}' src='data:image/png;base64,{data}'>")
    parts += ["<h2>All points</h2>", table_html(diff_table(cmp, cmp.diffs))]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def changes_frame(cmp: Comparison) -> pd.DataFrame:
    """The judged points (not controls) with a change: one row each, for the figures."""
    judged = [d for d in cmp.diffs if d.change is not None and d.point.bytes > 0 and d.verdict is not Verdict.CONTROL]
    return pd.DataFrame({
        "op": [d.point.op for d in judged], "label": [_line_label(d.point) for d in judged],
        "bytes": [d.point.bytes for d in judged], "change": [100 * d.change for d in judged],
        "ci_lo": [100 * d.ci[0] if d.ci else np.nan for d in judged],
        "ci_hi": [100 * d.ci[1] if d.ci else np.nan for d in judged],
        "verdict": [d.verdict for d in judged], "method": [d.method for d in judged],
        # both sides' multi-node points carry their runs' declared inter-node link (the footnote)
        "nodes": [max(p.nodes for p in (d.before, d.after) if p is not None) for d in judged],
        "inter_node_link": [next((p.inter_node_link for p in (d.before, d.after) if p is not None
                                  and isinstance(p.inter_node_link, str)), None) for d in judged]})


def plot_changes(cmp: Comparison, outdir: Path) -> list[str]:
    """One figure per op: change (%) vs size per series, with its 95 % CI band.

    A figure with multi-node points carries the runs' declared inter-node link as a footnote,
    as collplot's figures do.
    """
    # heavy (matplotlib): only when collcompare is asked for figures (-o)
    from matplotlib import rc_context
    from matplotlib.ticker import FuncFormatter

    from .plots import STYLE, _legend, _new_figure, _save, add_footnote, apply_size_axis

    names: list[str] = []
    thr = cmp.threshold
    with rc_context(STYLE):
        for op, grp in changes_frame(cmp).groupby("op"):
            fig, (ax,) = _new_figure()
            lines = grp.sort_values("bytes", kind="stable").groupby("label")
            for label, ds in lines:
                line, = ax.plot(ds["bytes"], ds["change"], marker="o", markersize=3, label=label)
                with_ci = ds[ds["ci_lo"].notna()]
                if len(with_ci):
                    ax.fill_between(with_ci["bytes"], with_ci["ci_lo"], with_ci["ci_hi"], color=line.get_color(),
                                    alpha=0.15, linewidth=0)
                for verdict, marker, color in ((Verdict.REGRESSED, "X", "#d62728"), (Verdict.IMPROVED, "P", "#2ca02c")):
                    hit = ds[ds["verdict"] == verdict]
                    if len(hit):
                        ax.plot(hit["bytes"], hit["change"], marker=marker, markersize=10, color=color,
                                linestyle="none", zorder=5)
            ax.axhspan(-100 * thr, 100 * thr, color="#999999", alpha=0.15, linewidth=0, label=f"±{thr:.0%} threshold")
            ax.axhline(0.0, color="#222222", linewidth=1.0, linestyle="--")
            if cmp.drift.change is not None:
                ax.axhline(100 * cmp.drift.change, color="#8c564b", linewidth=1.0, linestyle=":",
                           label=f"machine drift (controls, raw) {cmp.drift.change:+.0%}")
            apply_size_axis(ax, grp["bytes"])
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:+.0f}%"))
            kind = "control-normalised " if (grp["method"] == "normalised").any() else ""
            ax.set_ylabel(f"{kind}change of the p{cmp.quantile:g} time (> 0: slower)")
            ax.set_title(f"{op}: after vs before, 95% CI bands (X regressed, + improved)")
            _legend(ax, lines.ngroups + 2, title="algorithm, layout")
            add_footnote(fig, frame_note(grp))
            names.append(_save(fig, outdir, f"compare_{op}.png"))
    return names


def _line_label(p: Point) -> str:
    s = f"{p.algo} ({p.backend}) {p.layout}"
    if p.src is not None:
        s += f" {p.src}→{p.dst}"
    if p.dtype not in ("float32", "int8"):
        s += f" {p.dtype}"
    if p.in_place:
        s += " in-place"
    return s


__all__ = ["MATCH_FIELDS", "Comparison", "Drift", "PointDiff", "Verdict", "adjust", "compare", "diff_table",
           "header_lines", "machine_drift", "plot_changes", "robust_var", "run_estimate", "summary_line",
           "write_html", "write_markdown", "counts"]
