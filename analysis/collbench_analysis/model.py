"""Latency–bandwidth (α–β, Hockney) model fits and algorithm crossovers.

t(n) = α + n·β with n = bytes and t = p50 µs. α is the start-up cost (µs), β the
per-byte cost (µs/B); 1e-3/β is the asymptotic rate in GB/s. Fits minimise the
*relative* residual (weights 1/t): sweeps span 8 B … 1 GB, and an unweighted fit
lets the few largest points decide everything, leaving α as noise (often < 0).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .load import views
from .ranking import decide_sizes

_MIN_T = 1e-3  # µs; floor for weights so a zero time cannot blow up the fit

# What a fit needs to mean something (docs/analysis.md "Model"). α is set by the latency-bound
# sizes and β by the bandwidth-bound ones, so the sizes must reach both regimes: they span at
# least two decades (largest / smallest >= 100). Two parameters through two or three points fit
# anything, so R² and the largest residual say nothing: at least 5 distinct sizes leave three
# degrees of freedom for them (a 2x sweep over two decades has 8).
MIN_FIT_SIZES = 5
MIN_FIT_SPAN = 100.0
# A predicted crossover is where two fitted lines meet; a line that misses some measured point by
# more than half its time (max rel err > 50 %) is off by more than the gap between most algorithms'
# times, so where it meets another line says nothing: such a fit predicts no crossover.
MAX_PREDICT_REL_ERR = 0.5


def fits_enough(sizes: Sequence[float]) -> bool:
    """Whether these message sizes support an α–β fit: ≥ MIN_FIT_SIZES distinct sizes spanning ≥ MIN_FIT_SPAN×."""
    distinct = sorted({float(n) for n in sizes})
    return len(distinct) >= MIN_FIT_SIZES and distinct[0] > 0 and distinct[-1] / distinct[0] >= MIN_FIT_SPAN


@dataclass(frozen=True)
class Fit:
    """One fitted α–β model."""

    alpha_us: float
    beta_us_per_byte: float
    r2: float
    max_rel_err: float
    n_points: int
    min_bytes: int
    max_bytes: int
    through_origin: bool = False

    def predict(self, nbytes: float) -> float:
        return self.alpha_us + nbytes * self.beta_us_per_byte

    @property
    def gbps(self) -> float:
        """Asymptotic bandwidth 1e-3/β in GB/s (bytes/µs = MB/s)."""
        return 1e-3 / self.beta_us_per_byte if self.beta_us_per_byte > 0 else math.inf


def _stats(n: np.ndarray, t: np.ndarray, alpha: float, beta: float) -> tuple[float, float]:
    pred = alpha + n * beta
    ss_res = float(np.sum((t - pred) ** 2))
    ss_tot = float(np.sum((t - t.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    rel = np.abs(pred - t) / np.maximum(t, _MIN_T)
    return r2, float(rel.max())


def fit_alpha_beta(sizes: Sequence[float], times: Sequence[float]) -> Fit | None:
    """Fit t = α + nβ with α ≥ 0, β ≥ 0; ``None`` with fewer than two distinct sizes.

    Constraint handling: if the free fit gives α < 0 the model is refitted through
    the origin (pure bandwidth); if β < 0 (time falls with size: pure latency
    regime or noise) it is refitted as a constant.
    """
    n = np.asarray(sizes, dtype=float)
    t = np.asarray(times, dtype=float)
    if n.size < 2 or np.unique(n).size < 2:
        return None
    w = 1.0 / np.maximum(t, _MIN_T)
    a_mat = np.column_stack([w, n * w])
    (alpha, beta), *_ = np.linalg.lstsq(a_mat, t * w, rcond=None)
    origin = False
    if alpha < 0:
        origin = True
        alpha = 0.0
        beta = float(np.sum(n * w * t * w) / np.sum((n * w) ** 2))
    if beta < 0:
        origin = False
        beta = 0.0
        alpha = float(np.sum(t * w * w) / np.sum(w * w))
    r2, max_rel = _stats(n, t, float(alpha), float(beta))
    return Fit(float(alpha), float(beta), r2, max_rel, int(n.size), int(n.min()), int(n.max()), origin)


# --------------------------------------------------------------------------- models per series

MODEL_KEYS = ["op", "layout", "variant", "algo", "backend"]
FIT_COLUMNS = ["alpha_us", "beta_us_per_byte", "r2", "max_rel_err", "n_points", "min_bytes", "max_bytes",
               "through_origin"]


def series_of(df: pd.DataFrame) -> pd.Series:
    """``algo (backend)``: the name of a line, model or table row."""
    return df["algo"] + " (" + df["backend"] + ")"


def fit_models(results: pd.DataFrame) -> pd.DataFrame:
    """One fit per (op, layout, varying dims, algo, backend), plus the link for pingpong, where its
    sizes support one (:func:`fits_enough`; a smaller series gets no row).

    A row per model: the key columns, ``series``, the :class:`Fit` fields and ``gbps``.
    """
    v = views(results)
    p2p = v["is_p2p"] & v["link"].notna()
    v.loc[p2p, "variant"] = (v.loc[p2p, "variant"] + ", ").where(v.loc[p2p, "variant"] != "", "") + v.loc[p2p, "link"]
    rows = []
    for key, g in v.groupby(MODEL_KEYS, sort=False):
        if not fits_enough(g["bytes"]):
            continue
        fit = fit_alpha_beta(g["bytes"].to_numpy(), g["p50_us"].to_numpy())
        if fit is not None:
            rows.append({**dict(zip(MODEL_KEYS, key)), **asdict(fit)})
    out = pd.DataFrame(rows, columns=MODEL_KEYS + FIT_COLUMNS)
    out["series"] = series_of(out) if len(out) else pd.Series(dtype=object)
    out["gbps"] = [1e-3 / b if b > 0 else math.inf for b in out["beta_us_per_byte"]]
    return out.sort_values(["op", "layout", "variant", "algo", "backend"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- crossovers

CROSSOVER_COLUMNS = ["op", "layout", "variant", "kind", "before", "after", "lo_bytes", "hi_bytes", "at_bytes"]


def _crossovers(rows: list[dict]) -> pd.DataFrame:
    """The best (lowest p50) algorithm changes from ``before`` to ``after``.

    measured: between sizes ``lo_bytes`` and ``hi_bytes`` (consecutive measured sizes), at their
    geometric mean; predicted: at ``at_bytes`` (= lo = hi) where the two fitted lines intersect.
    """
    out = pd.DataFrame(rows, columns=CROSSOVER_COLUMNS[:-1])
    out["at_bytes"] = np.where(out["kind"] == "measured", np.sqrt(out["lo_bytes"].astype(float) *
                                                                   out["hi_bytes"].astype(float)), out["lo_bytes"])
    return out


def measured_crossovers(results: pd.DataFrame) -> pd.DataFrame:
    """Where the measured answer changes between consecutive sizes (collectives only).

    The answer at a size is the shared rule's choice (:func:`.ranking.choose`, colltune's): the
    fastest, or the simplest algorithm tied with it within its p5–p95 spread. So two statistically
    tied algorithms do not produce a crossover at every size, and the crossovers are where
    colltune's ranges change algorithm. Sizes where fewer than two series were measured say
    nothing about who wins and are passed over.
    """
    v = views(results[~results["is_p2p"]])
    v["series"] = series_of(v)
    rows: list[dict] = []
    for (op, layout, var), g in v.groupby(["op", "layout", "variant"], sort=False):
        if g["series"].nunique() < 2:
            continue
        decided = decide_sizes(g, ["bytes"], name="series")
        prev: tuple[int, str] | None = None
        for (size,), ch in sorted(decided.items()):
            if ch.runner_up is None:
                continue  # a lone series at this size says nothing about who wins
            if prev is not None and ch.choice.algo != prev[1]:
                rows.append(dict(op=op, layout=layout, variant=var, kind="measured", before=prev[1],
                                 after=ch.choice.algo, lo_bytes=prev[0], hi_bytes=int(size)))
            prev = (int(size), ch.choice.algo)
    return _crossovers(rows)


def _envelope_crossovers(fits: pd.DataFrame, lo: float, hi: float) -> list[tuple[float, str, str]]:
    """Sizes in (lo, hi) where the lowest predicted time switches between models (``fits`` by series)."""
    a = fits["alpha_us"].to_numpy()
    b = fits["beta_us_per_byte"].to_numpy()
    names = list(fits.index)

    def cross(i: int, j: int) -> float:
        return (a[j] - a[i]) / (b[i] - b[j])

    cuts = {x for i in range(len(names)) for j in range(i + 1, len(names))
            if b[i] != b[j] and lo < (x := cross(i, j)) < hi}
    edges = [lo, *sorted(cuts), hi]
    probes = [math.sqrt(max(e0, 1.0) * max(e1, 1.0)) if e0 > 0 else (e0 + e1) / 2 for e0, e1 in zip(edges, edges[1:])]
    winners = [int(np.argmin(a + x * b)) for x in probes]
    return [(cross(w0, w1), names[w0], names[w1]) for w0, w1 in zip(winners, winners[1:]) if w0 != w1]


def predicted_crossovers(models: pd.DataFrame) -> pd.DataFrame:
    """Where the fitted models' lower envelope changes winner, within the measured range; only between
    two fits that describe their points (max rel err ≤ :data:`MAX_PREDICT_REL_ERR`)."""
    rows: list[dict] = []
    coll = models[models["op"] != "pingpong"]
    for (op, layout, var), g in coll.groupby(["op", "layout", "variant"], sort=False):
        if len(g) < 2:
            continue
        fits = g.set_index("series")
        for x, a, b in _envelope_crossovers(fits, g["min_bytes"].min(), g["max_bytes"].max()):
            if max(fits.at[a, "max_rel_err"], fits.at[b, "max_rel_err"]) > MAX_PREDICT_REL_ERR:
                continue  # a line that misses its points cannot place where it meets another
            rows.append(dict(op=op, layout=layout, variant=var, kind="predicted", before=a, after=b,
                             lo_bytes=x, hi_bytes=x))
    return _crossovers(rows)
