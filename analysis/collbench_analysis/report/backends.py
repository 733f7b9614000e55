"""Several backends side by side: the report's "Backends side by side" tables.

A results file may hold several backends' runs on the same layouts (an mpi sweep and a gloo sweep of one
job): every answer of the report is then taken across all of them (series ``algo (backend)``), and these
tables say by how much one backend's fastest and library are slower or faster than the reference backend's
(load.REFERENCE_BACKEND, mpi, else the first by name) at each size, ties by the shared rule
(:mod:`.side_by_side`). Several MPI implementations (load.REFERENCE_MPI) are set side by side the same way,
in their own section (mpis.py).
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..load import LIBRARY_ALGO, backend_order
from ..points import GROUP, algo_of, report_order, size_cells
from ..ranking import pooled
from ..side_by_side import BACKEND_KEYS, counts_text, mpi_sides, pair_summary, ratio_and_tie, versus_text
from ..tables import BLANK, Table, fmt_num
from .answers import TIE_NOTE, answer_text, ranked


BACKEND_POINT_COLUMNS = [*BACKEND_KEYS, "backend", "fastest", "fastest_p50", "fastest_p5", "fastest_p95",
                         "lib_p50", "lib_p5", "lib_p95"]


def backend_sides(c: pd.DataFrame) -> list[str]:
    """The backends the 'Backends side by side' tables compare, the reference first: one name per backend,
    the reference MPI standing for mpi (the others are compared with it in the MPIs' own section)."""
    other_mpis = mpi_sides(c)[1:]
    return [b for b in backend_order(c["backend"]) if b not in other_mpis]


def backend_points(c: pd.DataFrame, sides: Sequence[str] | None = None) -> pd.DataFrame:
    """Per (op, layout, variant, size) measured on more than one of ``sides`` (default :func:`backend_sides`),
    one row per backend: its fastest series (the lowest p50, equal p50s the simplest: the shared rule's
    "best") and its plain library entry (NaN where not measured), each with the medians of p50, p5 and p95
    over its results (:func:`.ranking.pooled`)."""
    c = c[c["backend"].isin(backend_sides(c) if sides is None else sides)]
    m = c[c.groupby(BACKEND_KEYS)["backend"].transform("nunique") > 1] if len(c) else c
    if m.empty:
        return pd.DataFrame(columns=BACKEND_POINT_COLUMNS)
    keys = [*BACKEND_KEYS, "backend"]
    agg = pooled(m, keys, name="series").sort_values(["p50", "rank", "algo"], kind="stable")
    fastest = agg.drop_duplicates(keys).rename(columns={"algo": "fastest", "p50": "fastest_p50",
                                                       "p5": "fastest_p5", "p95": "fastest_p95"})
    lib = agg[agg["algo"].map(algo_of) == LIBRARY_ALGO].drop_duplicates(keys).rename(
        columns={"p50": "lib_p50", "p5": "lib_p5", "p95": "lib_p95"})
    out = fastest[[*keys, "fastest", "fastest_p50", "fastest_p5", "fastest_p95"]].merge(
        lib[[*keys, "lib_p50", "lib_p5", "lib_p95"]], on=keys, how="left")
    order = {b: i for i, b in enumerate(backend_order(c["backend"]))}
    out["border"] = out["backend"].map(order)
    return report_order(out, ["bytes", "border"]).drop(columns="border").reset_index(drop=True)


def backend_versus(c: pd.DataFrame) -> pd.DataFrame:
    """Per (op, layout, variant, size) and backend other than the reference (the first of
    :func:`.load.backend_order` over the whole results) measured there beside it: both fastest series,
    ``fastest_ratio`` (the other's fastest p50 ÷ the reference's) and ``fastest_tie``, and the same for the
    two libraries (``lib_ratio``, ``lib_tie``: NaN, False where either library was not measured)."""
    pts = backend_points(c)
    cols = [*BACKEND_KEYS, "backend", "reference", "fastest", "ref_fastest", "fastest_ratio", "fastest_tie",
            "lib_ratio", "lib_tie"]
    if pts.empty:
        return pd.DataFrame(columns=cols)
    ref = backend_sides(c)[0]
    both = pts[pts["backend"] != ref].merge(pts[pts["backend"] == ref].drop(columns="backend"), on=BACKEND_KEYS,
                                            suffixes=("", "_ref"))
    rows = []
    for r in both.itertuples(index=False):
        fr, ft = ratio_and_tie(r.fastest_p50, r.fastest_p5, r.fastest_p95, r.fastest_p50_ref, r.fastest_p5_ref,
                         r.fastest_p95_ref)
        lr, lt = ratio_and_tie(r.lib_p50, r.lib_p5, r.lib_p95, r.lib_p50_ref, r.lib_p5_ref, r.lib_p95_ref)
        rows.append([*(getattr(r, k) for k in BACKEND_KEYS), r.backend, ref, r.fastest, r.fastest_ref, fr, ft, lr, lt])
    return pd.DataFrame(rows, columns=cols)


def _answer_backend(choice: str, tied: Sequence[str]) -> str:
    """The backend of an answer across backends, or ``tie`` when the tie spans several backends."""
    backends = {t.rsplit(" (", 1)[1].rstrip(")") for t in tied}
    return choice.rsplit(" (", 1)[1].rstrip(")") if len(backends) == 1 else "tie"


BACKENDS_GLANCE = "Backends side by side"


def backends_glance_table(c: pd.DataFrame) -> Table:
    """Per (op, layout, variant) and backend other than the reference: on which backend the answer is, and
    how that backend's fastest and library compare with the reference's, size by size. Empty with one backend."""
    v = backend_versus(c)
    cols = ["op", "layout", "variant", "compared", "the answer (all backends) is on", "fastest vs fastest",
            "library vs library"]
    if v.empty:
        return Table.of(BACKENDS_GLANCE, cols)
    r = ranked(c)
    r = r.merge(v[BACKEND_KEYS].drop_duplicates(), on=BACKEND_KEYS)
    r["on"] = [_answer_backend(ch, t) for ch, t in zip(r["choice"], r["tied"])]
    order = backend_order(c["backend"])
    rows = []
    for (op, layout, variant, backend), g in v.groupby([*GROUP, "backend"], sort=False):
        ref = g["reference"].iloc[0]
        on = r[(r["op"] == op) & (r["layout"] == layout) & (r["variant"] == variant)
               & r["bytes"].isin(g["bytes"])]["on"]
        counts = {b: int((on == b).sum()) for b in [*order, "tie"]}
        rows.append([op, layout, variant or BLANK, f"{backend} vs {ref}", counts_text(counts, len(on)),
                     pair_summary(g, "fastest_ratio", "fastest_tie"), pair_summary(g, "lib_ratio", "lib_tie")])
    frame = report_order(pd.DataFrame(rows, columns=cols), ["compared"])
    t = Table(BACKENDS_GLANCE, frame.reset_index(drop=True), align="lllllll",
              note="Several backends measured the same (op, layout, size): the answer is taken across all of them "
                   "(the fastest series, or the simplest tied with it: 'library (mpi) ≈ ring (gloo)'), and each "
                   f"backend is set against {order[0]}: its fastest algorithm against {order[0]}'s fastest, its "
                   f"library (the backend's own call; for gloo what PyTorch's ProcessGroupGloo calls) against "
                   f"{order[0]}'s library, at the sizes both measured: how often it is faster, slower or tied, the "
                   "ratio at the largest of them, the median and the range of the ratios. 3.1× slower: its p50 "
                   "time is 3.1 times the other's; ≈: the slower one's p50 within the faster one's spread (at most "
                   "its p95), a tie by the rule of every answer. Per size: 'Backends side by side per (op, layout, "
                   "size)' below.")
    return t.drop_blank_column("variant").drop_blank_column("library vs library")


def backends_per_size_table(c: pd.DataFrame) -> Table:
    """Per (op, layout, variant, size) measured on several backends: the answer across them, each backend's
    fastest and its p50, and each other backend against the reference (fastest and library). Empty with one backend."""
    pts = backend_points(c)
    cols = ["op", "layout", "variant", "size", "answer (all backends)"]
    if pts.empty:
        return Table.of("Backends side by side per (op, layout, size)", cols)
    order = backend_sides(c)
    ref, others = order[0], order[1:]
    v = backend_versus(c).set_index([*BACKEND_KEYS, "backend"])
    r = ranked(c).merge(pts[BACKEND_KEYS].drop_duplicates(), on=BACKEND_KEYS).set_index(BACKEND_KEYS)
    by = pts.set_index([*BACKEND_KEYS, "backend"])
    keys = list(r.index)
    frame = pd.DataFrame({"op": [k[0] for k in keys], "layout": [k[1] for k in keys],
                          "variant": [k[2] or BLANK for k in keys], "size": size_cells(pd.Series([k[3] for k in keys])),
                          "answer (all backends)": [answer_text(ch, t) for ch, t in zip(r["choice"], r["tied"])]})

    def cell(b: str, col: str, fmt) -> list[str]:
        return [fmt(by.at[(*k, b), col]) if (*k, b) in by.index else BLANK for k in keys]

    for b in order:
        frame[f"{b}: fastest"] = cell(b, "fastest", algo_of)
        frame[f"{b} p50 (µs)"] = cell(b, "fastest_p50", fmt_num)
    for b in others:
        def vs(col: str, tie: str) -> list[str]:
            return [versus_text(v.at[(*k, b), col], bool(v.at[(*k, b), tie])) if (*k, b) in v.index else BLANK
                    for k in keys]
        frame[f"fastest: {b} vs {ref}"] = vs("fastest_ratio", "fastest_tie")
        frame[f"library: {b} vs {ref}"] = vs("lib_ratio", "lib_tie")
    frame = frame.reset_index(drop=True)
    t = Table("Backends side by side per (op, layout, size)", frame,
              align="lllrl" + "lr" * len(order) + "ll" * len(others),
              note=f"answer: the fastest of every backend's algorithms, or the tie ('library (mpi) ≈ ring (gloo)'). "
                   f"fastest: each backend's lowest p50 time. 'fastest: {others[0]} vs {ref}': {others[0]}'s "
                   f"fastest p50 ÷ {ref}'s fastest p50, as '3.1× slower' or '2.0× faster'; 'library: …' the same for the two "
                   "libraries; '≈': the slower one's p50 within the faster one's spread (at most its p95), a tie. "
                   + TIE_NOTE)
    for b in others:
        t.drop_blank_column(f"library: {b} vs {ref}")
    return t.drop_blank_column("variant")
