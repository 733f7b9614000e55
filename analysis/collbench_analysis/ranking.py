"""The one rule that ranks algorithms at one (op, layout, size): the best, its margin, the tie.

colltune's tuning files (tune.py), collplot's answers, its "best algorithm" table, the measured
crossovers (model.py) and the figures' bold lines (plots.py) all decide with :func:`choose`, on
candidates made by :func:`pool`, so the report and the tuning file never disagree on a tie
(docs/tuning.md "How the algorithm is chosen"). The rule, in terms of a result's
``time_us`` fields (collbench's terminal "best" column implements the same):

- the **best** is the candidate with the lowest p50 (equal p50s: the simpler first);
- the **margin** is how much slower the runner-up (second-lowest p50) is: runner-up p50 ÷ best p50 − 1;
- a candidate is **tied** with the best when its p50 ≤ the best's p95 (p95 absent: max), i.e. the
  difference lies inside the best's own p5–p95 spread; the margin is *inside the spread* (``≈``)
  exactly when the runner-up is tied;
- the **choice** (the answer) is the simplest tied candidate: the lowest simplicity rank of the
  algorithms' traits (the library 0), equal ranks by name.

colltune's ``--margin X`` and ``--tie median`` widen or replace the tie test (:func:`tied_with`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd

from .load import UNRANKED


@dataclass(frozen=True)
class Candidate:
    """One algorithm at one size: medians over its results there (runs, repetitions)."""

    algo: str
    p50: float
    p5: float
    p95: float
    results: int = 1
    samples: int = 0  # timed iterations behind each result (median over results); 0: unknown
    rank: int = UNRANKED  # its simplicity rank (traits); unknown traits: unranked

    @property
    def p50_se(self) -> float:
        """Standard error of the p50 from the p5-p95 spread: a normal's sigma is (p95 - p5) / 3.29,
        a median's standard error 1.2533 sigma / sqrt(n) (unknown n counts as 1)."""
        return 1.2533 * (self.p95 - self.p5) / 3.29 / math.sqrt(max(self.samples, 1))


@dataclass(frozen=True)
class SizeChoice:
    """The decision at one measured size, with what it was weighed against."""

    bytes: int
    choice: Candidate
    best: Candidate  # lowest p50
    runner_up: Candidate | None  # second-lowest p50
    tied: tuple[str, ...]  # every algorithm tied with the best (itself included), simplest first

    @property
    def ratio(self) -> float:
        """choice p50 / best p50: what the simpler choice costs (1.0 when it is the best)."""
        if self.best.p50 <= 0:
            return 1.0 if self.choice.p50 <= 0 else math.inf
        return self.choice.p50 / self.best.p50

    @property
    def margin(self) -> float:
        """How much slower the runner-up is than the best: runner-up p50 / best p50 - 1 (NaN: no runner-up)."""
        if self.runner_up is None:
            return math.nan
        if self.best.p50 <= 0:
            return 0.0 if self.runner_up.p50 <= 0 else math.inf
        return self.runner_up.p50 / self.best.p50 - 1.0

    @property
    def within_noise(self) -> bool:
        """Whether the margin is inside the spread: some other algorithm is tied with the best (``≈``)."""
        return len(self.tied) > 1


# Tie rules. "spread": a p50 within the best's own p5-p95 spread (its p95) is a tie: the widest
# reading of "within the noise", which on a machine whose spreads are wide (an emulated link:
# p95 up to 2x the p50) ties algorithms whose medians differ 1.6x. "median": a p50 within the
# uncertainty of the two medians (1.96 standard errors of their difference, each estimated from
# its p5-p95 spread and sample count) is a tie: it respects the noise of the estimate, not of
# single samples.
TIE_RULES = ("spread", "median")
Z_95 = 1.96


def tied_with(best: Candidate, c: Candidate, margin: float = 0.0, tie: str = "spread") -> bool:
    """Whether ``c`` is tied with the fastest candidate ``best`` under rule ``tie`` (or ``margin``)."""
    if c.p50 <= best.p50 * (1.0 + margin):
        return True
    if tie == "median":
        return c.p50 - best.p50 <= Z_95 * math.hypot(best.p50_se, c.p50_se)
    return c.p50 <= best.p95


def simplicity_key(c: Candidate) -> tuple[int, str]:
    """Sort key, simplest first: the simplicity rank of the algorithm's traits, equal ranks by name."""
    return (c.rank, c.algo)


def choose(nbytes: int, candidates: Sequence[Candidate], margin: float = 0.0, tie: str = "spread",
           simplicity: Callable[[Candidate], Any] = simplicity_key) -> SizeChoice:
    """Pick the simplest candidate tied with the fastest (the module's rule).

    This is the one tie rule: colltune's tuning files and collplot's answers (report/answers.py) both
    decide with it. ``simplicity`` orders candidates (default: :func:`simplicity_key`).
    """
    if not candidates:
        raise ValueError("no candidates")
    if tie not in TIE_RULES:
        raise ValueError(f"unknown tie rule {tie!r}")
    ranked = sorted(candidates, key=lambda c: (c.p50, simplicity(c)))
    best = ranked[0]
    tied = sorted((c for c in candidates if tied_with(best, c, margin, tie)), key=simplicity)
    return SizeChoice(nbytes, tied[0], best, ranked[1] if len(ranked) > 1 else None, tuple(c.algo for c in tied))


# --------------------------------------------------------------------------- candidates from results

def pooled(results: pd.DataFrame, by: Sequence[str] = (), name: str = "algo") -> pd.DataFrame:
    """Per ``by`` + ``name`` (the algorithm, or the report's ``algo (backend)`` series), the medians of the
    measured results' p50, p5 (lo) and p95 (hi), their count, and the median sample count ``n`` (NaN: unknown).

    Several results of one algorithm and size (runs, repetitions) are combined by medians of
    each statistic, so one disturbed run moves the choice no more than the others do.
    """
    m = results[results["measured"]].assign(n=lambda d: pd.to_numeric(d["iters"]).where(lambda x: x > 0))
    out = m.groupby([*by, name], sort=False).agg(p50=("p50_us", "median"), p5=("lo_us", "median"),
                                                 p95=("hi_us", "median"), results=("p50_us", "size"),
                                                 n=("n", "median"), rank=("simplicity_rank", "min")).reset_index()
    return out.rename(columns={name: "algo"}) if name != "algo" else out


def candidates(agg: pd.DataFrame) -> list[Candidate]:
    """The :class:`Candidate` of each row of a :func:`pooled` frame."""
    return [Candidate(r.algo, r.p50, r.p5, r.p95, int(r.results), 0 if pd.isna(r.n) else int(r.n), int(r.rank))
            for r in agg.itertuples(index=False)]


def pool(results: pd.DataFrame, name: str = "algo") -> list[Candidate]:
    """One candidate per algorithm (or per ``name``) from the results of one size (see :func:`pooled`)."""
    return candidates(pooled(results, name=name))


def decide_sizes(results: pd.DataFrame, by: Sequence[str], name: str = "algo", margin: float = 0.0,
                 tie: str = "spread") -> dict[tuple[Any, ...], SizeChoice]:
    """:func:`choose` at every ``by`` group (``by`` ending in ``bytes``) of measured results: key -> decision."""
    agg = pooled(results, by, name)
    out: dict[tuple[Any, ...], SizeChoice] = {}
    for key, g in agg.groupby(list(by) if len(by) > 1 else by[0], sort=False):
        key = key if len(by) > 1 else (key,)
        out[key] = choose(int(g["bytes"].iloc[0]), candidates(g), margin, tie)
    return out
