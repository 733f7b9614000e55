"""Two sides measured at the same points, set against each other: the rule and its words.

Several backends in one results file (the report's "Backends side by side", :mod:`.report.backends`)
and several MPI implementations (the "Open MPI vs MPICH" section, :mod:`.mpis`) are compared the same
way: per point, the ratio of the p50 times and whether the two are tied by the rule of every answer
(:func:`ratio_and_tie`), written as ``3.1× slower`` or ``≈ as fast`` (:func:`versus_text`) and
summarised over the sizes both measured (:func:`pair_summary`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .load import backend_order, format_bytes
from .points import GROUP
from .ranking import Candidate, tied_with
from .tables import BLANK

BACKEND_KEYS = [*GROUP, "bytes"]


def mpi_sides(c: pd.DataFrame) -> list[str]:
    """The MPI implementations of the results as their rows' backend names, the reference first (one, or
    none: nothing to set side by side; several: ``Open MPI``, ``MPICH``, see :data:`.load.REFERENCE_MPI`)."""
    return backend_order(c.loc[c["mpi"].notna(), "backend"])


def ratio_and_tie(p50: float, p5: float, p95: float, ref_p50: float, ref_p5: float,
                  ref_p95: float) -> tuple[float, bool]:
    """(p50 ÷ the reference's p50, tied): tied when the slower one's p50 is within the faster one's spread
    (at most its p95): :func:`.ranking.tied_with`, the rule of every answer. (NaN, False) where one is missing."""
    if pd.isna(p50) or pd.isna(ref_p50) or ref_p50 <= 0:
        return math.nan, False
    a, b = Candidate("a", p50, p5, p95), Candidate("ref", ref_p50, ref_p5, ref_p95)
    fast, slow = (a, b) if p50 <= ref_p50 else (b, a)
    return p50 / ref_p50, tied_with(fast, slow)


def ratio_num(x: float) -> str:
    """A ratio as the side-by-side tables write it: ``3.1``, ``52``, ``20,590``, ``0.48``."""
    return f"{x:,.0f}" if x >= 10 else f"{x:.1f}" if x >= 1 else f"{x:.2g}"


def times_text(ratio: float) -> str:
    """``3.1× slower`` (ratio > 1), ``2.0× faster`` (ratio < 1: its inverse), ``as fast`` (1); ``—`` for NaN."""
    if pd.isna(ratio):
        return BLANK
    if ratio == 1:
        return "as fast"
    return f"{ratio_num(ratio if ratio > 1 else 1 / ratio)}× {'slower' if ratio > 1 else 'faster'}"


def versus_text(ratio: float, tie: bool) -> str:
    """:func:`times_text`, ``≈ `` before it when the two are tied (within noise)."""
    text = times_text(ratio)
    return f"≈ {text}" if tie and text != BLANK else text


def counts_text(counts: dict[str, int], total: int) -> str:
    """``mpi at 6, tie at 1 of 7 sizes``: the non-zero counts in the given order."""
    parts = [f"{k} at {n}" for k, n in counts.items() if n]
    return f"{', '.join(parts)} of {total} size{'s' if total != 1 else ''}"


def pair_summary(g: pd.DataFrame, ratio: str, tie: str) -> str:
    """One side against the reference over the sizes both measured: how often faster, slower or tied,
    the ratio at the largest of them, the median and the range of the ratios."""
    g = g[g[ratio].notna()].sort_values("bytes")
    if g.empty:
        return BLANK
    x, t = g[ratio].to_numpy(dtype=float), g[tie].to_numpy(dtype=bool)
    counts = {"faster": int(((x < 1) & ~t).sum()), "slower": int(((x > 1) & ~t).sum()), "tie": int(t.sum())}
    last = g.iloc[-1]
    med = float(np.median(x))
    spread = f" (p50 ratio {ratio_num(x.min())}–{ratio_num(x.max())})" if len(x) > 1 else ""
    median = f"; median {times_text(med)}{spread}" if len(x) > 1 else ""
    return (f"{counts_text(counts, len(x))}; at {format_bytes(last['bytes'])} "
            f"{versus_text(last[ratio], bool(last[tie]))}{median}")
