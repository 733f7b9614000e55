"""Latency–bandwidth (α–β, Hockney) model fits and algorithm crossovers.

t(n) = α + n·β with n = bytes and t = p50 µs. α is the start-up cost (µs), β the
per-byte cost (µs/B); 1e-3/β is the asymptotic rate in GB/s. Fits minimise the
*relative* residual (weights 1/t): sweeps span 8 B … 1 GB, and an unweighted fit
lets the few largest points decide everything, leaving α as noise (often < 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .load import Point, dedupe, group_by, varying_fields, variant_of, variant_label

_MIN_T = 1e-3  # µs; floor for weights so a zero time cannot blow up the fit


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


# --------------------------------------------------------------------------- groups

@dataclass(frozen=True)
class ModelKey:
    """What one model describes. ``variant`` splits along dims that vary (dtype, link…)."""

    op: str
    algo: str
    backend: str
    layout: str
    variant: tuple[tuple[str, Any], ...] = ()

    @property
    def series(self) -> str:
        return f"{self.algo} ({self.backend})"

    @property
    def variant_text(self) -> str:
        return variant_label(self.variant)


@dataclass(frozen=True)
class ModelRow:
    key: ModelKey
    fit: Fit


def _model_key(p: Point, dims: Sequence[str]) -> ModelKey:
    dims = list(dims) + (["link"] if p.is_p2p else [])
    return ModelKey(p.op, p.algo, p.backend, p.layout, variant_of(p, dims))


def fit_models(points: Iterable[Point]) -> list[ModelRow]:
    """One fit per (op, algo, backend, layout[, varying dims][, link for p2p])."""
    pts, _ = dedupe(p for p in points if p.measured)
    rows: list[ModelRow] = []
    for op, op_pts in group_by(pts, lambda p: p.op).items():
        dims = varying_fields(op_pts)
        for key, grp in group_by(op_pts, lambda p: _model_key(p, dims)).items():
            fit = fit_alpha_beta([p.bytes for p in grp], [p.time.p50 for p in grp])  # type: ignore[union-attr]
            if fit is not None:
                rows.append(ModelRow(key, fit))
    return sorted(rows, key=lambda r: (r.key.op, r.key.layout, r.key.variant_text, r.key.algo, r.key.backend))


# --------------------------------------------------------------------------- crossovers

@dataclass(frozen=True)
class Crossover:
    """The best (lowest p50) algorithm changes from ``before`` to ``after``.

    measured: between sizes ``lo_bytes`` and ``hi_bytes`` (consecutive measured sizes).
    predicted: at ``at_bytes`` where the two fitted lines intersect.
    """

    op: str
    layout: str
    variant: str
    kind: str  # "measured" | "predicted"
    before: str
    after: str
    lo_bytes: float
    hi_bytes: float

    @property
    def at_bytes(self) -> float:
        return math.sqrt(self.lo_bytes * self.hi_bytes) if self.kind == "measured" else self.lo_bytes


def _series_name(p: Point) -> str:
    return f"{p.algo} ({p.backend})"


def measured_crossovers(points: Iterable[Point]) -> list[Crossover]:
    """Where the measured winner changes between consecutive sizes (collectives only).

    Hysteresis against noise: the reigning winner is only dethroned by a series
    faster by more than the larger of the two points' half p5–p95 spreads, so two
    statistically tied algorithms do not produce a crossover at every size.
    """
    pts, _ = dedupe(p for p in points if p.measured and not p.is_p2p)
    out: list[Crossover] = []
    for op, op_pts in group_by(pts, lambda p: p.op).items():
        dims = varying_fields(op_pts)
        for (layout, var), grp in group_by(op_pts, lambda p: (p.layout, variant_of(p, dims))).items():
            if len({_series_name(p) for p in grp}) < 2:
                continue
            by_size = group_by(grp, lambda p: p.bytes)
            prev: tuple[int, str] | None = None
            for size in sorted(by_size):
                cands = by_size[size]
                if len(cands) < 2:
                    continue  # a lone series at this size says nothing about who wins
                fastest = min(cands, key=lambda p: p.time.p50)  # type: ignore[union-attr]
                best = _series_name(fastest)
                reigning = next((p for p in cands if prev is not None and _series_name(p) == prev[1]), None)
                if reigning is not None and best != prev[1]:  # type: ignore[index]
                    noise = max(fastest.time.half_spread, reigning.time.half_spread)  # type: ignore[union-attr]
                    if reigning.time.p50 - fastest.time.p50 <= noise:  # type: ignore[union-attr]
                        best = prev[1]  # type: ignore[index]
                if prev is not None and best != prev[1]:
                    out.append(Crossover(op, layout, variant_label(var), "measured", prev[1], best, prev[0], size))
                prev = (size, best)
    return out


def _envelope_crossovers(fits: dict[str, Fit], lo: float, hi: float) -> list[tuple[float, str, str]]:
    """Sizes in (lo, hi) where the lowest predicted time switches between models."""
    names = list(fits)
    cuts: set[float] = set()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            fa, fb = fits[a], fits[b]
            if fa.beta_us_per_byte != fb.beta_us_per_byte:
                x = (fb.alpha_us - fa.alpha_us) / (fa.beta_us_per_byte - fb.beta_us_per_byte)
                if lo < x < hi:
                    cuts.add(x)
    edges = [lo, *sorted(cuts), hi]

    def best_at(x: float) -> str:
        return min(names, key=lambda k: fits[k].predict(x))

    probes = [math.sqrt(max(e0, 1.0) * max(e1, 1.0)) if e0 > 0 else (e0 + e1) / 2 for e0, e1 in zip(edges, edges[1:])]
    winners = [best_at(x) for x in probes]
    out: list[tuple[float, str, str]] = []
    for k in range(1, len(winners)):
        a, b = winners[k - 1], winners[k]
        if a != b:
            fa, fb = fits[a], fits[b]
            x = (fb.alpha_us - fa.alpha_us) / (fa.beta_us_per_byte - fb.beta_us_per_byte)
            out.append((x, a, b))
    return out


def predicted_crossovers(rows: Iterable[ModelRow]) -> list[Crossover]:
    """Where the fitted models' lower envelope changes winner, within the measured range."""
    out: list[Crossover] = []
    coll = [r for r in rows if r.key.op not in ("pingpong",)]
    for (op, layout, var), grp in group_by(coll, lambda r: (r.key.op, r.key.layout, r.key.variant)).items():
        if len(grp) < 2:
            continue
        fits = {r.key.series: r.fit for r in grp}
        lo = min(f.min_bytes for f in fits.values())
        hi = max(f.max_bytes for f in fits.values())
        for x, a, b in _envelope_crossovers(fits, lo, hi):
            out.append(Crossover(op, layout, variant_label(var), "predicted", a, b, x, x))
    return out
