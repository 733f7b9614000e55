"""Several MPI implementations side by side: the report's "Open MPI vs MPICH" section.

A results folder may hold runs of an Open MPI build and of an MPICH build of collbench (issue 36). Both
write backend ``mpi``; the loader names those rows' backend by implementation (:func:`.load.mpi_name`),
so every answer, figure and model of the report already keeps them apart. This section sets each
entry against itself over the two MPIs: the library (each MPI's own allreduce call, …) and every
collbench algorithm measured under both (the same schedule over each MPI's point-to-point), per op,
layout and size: both p50 times, the ratio other ÷ reference (:data:`.load.REFERENCE_MPI`, Open MPI)
and whether it is beyond the noise, by the rule of every answer (:func:`.side_by_side.ratio_and_tie`).
Nothing is shown with one MPI.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib import rc_context

from .load import LIBRARY_ALGO, Dataset, format_bytes, frame_note
from .palette import color_of, marker_of
from .plots import STYLE, FigureInfo, _new_figure, _plain_log_y, _save, add_footnote, apply_size_axis, subtitle
from .points import GROUP, collectives, report_order, size_cells
from .ranking import pooled
from .side_by_side import BACKEND_KEYS, mpi_sides, pair_summary, ratio_and_tie, versus_text
from .tables import BLANK, Table, fmt_col

COLUMNS = [*BACKEND_KEYS, "algo", "backend", "reference", "p50", "p5", "p95", "ref_p50", "ref_p5", "ref_p95",
           "ratio", "tie"]


def section(sides: list[str]) -> str:
    """The section's title: ``Open MPI vs MPICH``."""
    return " vs ".join(sides)


def versus(c: pd.DataFrame) -> pd.DataFrame:
    """Per (op, layout, variant, size), entry (``algo``) and MPI other than the reference measured there
    beside it: each one's p50, p5 and p95 (medians over its results, :func:`.ranking.pooled`), ``ratio``
    (the other's p50 ÷ the reference's) and ``tie`` (the slower one's p50 within the faster one's p95).
    Empty with fewer than two MPIs."""
    sides = mpi_sides(c)
    if len(sides) < 2:
        return pd.DataFrame(columns=COLUMNS)
    agg = pooled(c[c["backend"].isin(sides)], [*BACKEND_KEYS, "backend"])
    keys = [*BACKEND_KEYS, "algo"]
    ref = agg[agg["backend"] == sides[0]][[*keys, "p50", "p5", "p95"]]
    both = agg[agg["backend"] != sides[0]].merge(ref, on=keys, suffixes=("", "_ref"))
    if both.empty:
        return pd.DataFrame(columns=COLUMNS)
    vs = [ratio_and_tie(r.p50, r.p5, r.p95, r.p50_ref, r.p5_ref, r.p95_ref) for r in both.itertuples(index=False)]
    out = both.rename(columns={"p50_ref": "ref_p50", "p5_ref": "ref_p5", "p95_ref": "ref_p95"}).assign(
        reference=sides[0], ratio=[r for r, _ in vs], tie=[t for _, t in vs])
    out["lib_last"] = out["algo"] != LIBRARY_ALGO  # the library first, then collbench's algorithms by name
    return report_order(out, ["lib_last", "algo", "backend", "bytes"])[COLUMNS].reset_index(drop=True)


def _header(v: pd.DataFrame, which: str) -> str:
    """A column's MPI: the reference's name, or the other's when there is one other (else 'other')."""
    names = v["reference"] if which == "reference" else v["backend"]
    return names.iloc[0] if names.nunique() == 1 else "other MPI"


def glance_table(v: pd.DataFrame) -> Table:
    """Per (op, layout, variant, entry): the other MPI against the reference over the sizes both measured."""
    rows = [[op, layout, variant or BLANK, algo, f"{backend} vs {g['reference'].iloc[0]}",
             pair_summary(g, "ratio", "tie")]
            for (op, layout, variant, algo, backend), g in v.groupby([*GROUP, "algo", "backend"], sort=False)]
    frame = pd.DataFrame(rows, columns=["op", "layout", "variant", "entry", "compared", "over the sizes both measured"])
    t = Table(f"{section([*dict.fromkeys([*v['reference'], *v['backend']])])} at a glance", frame,
              align="llllll",
              note="Each entry against itself under the two MPIs: library = each MPI's own collective (its own "
                   "choice of algorithm); every other entry is one of collbench's algorithms, the same schedule over "
                   "each MPI's point-to-point. How often the other MPI is faster, slower or tied, the ratio at the "
                   "largest size, the median and the range of the ratios. 1.3× slower: its p50 time is 1.3 times "
                   "the reference's; ≈: the slower one's p50 within the faster one's spread (at most its p95), a "
                   "tie, never a win. Per size: the table below.")
    return t.drop_blank_column("variant")


def per_size_table(v: pd.DataFrame) -> Table:
    """Per (op, layout, variant, size, entry): both MPIs' p50 and spread, the ratio and the verdict."""
    ref, other = _header(v, "reference"), _header(v, "other")
    spread = lambda lo, hi: [f"{a}–{b}" for a, b in zip(fmt_col(lo), fmt_col(hi))]  # noqa: E731
    frame = pd.DataFrame({
        "op": v["op"], "layout": v["layout"], "variant": v["variant"].replace("", BLANK),
        "size": size_cells(v["bytes"]), "entry": v["algo"], f"{ref} p50 (µs)": fmt_col(v["ref_p50"]),
        f"{ref} p5–p95 (µs)": spread(v["ref_p5"], v["ref_p95"]),
        f"{other} p50 (µs)": fmt_col(v["p50"]), f"{other} p5–p95 (µs)": spread(v["p5"], v["p95"]),
        f"{other} ÷ {ref}": fmt_col(v["ratio"]),
        f"{other} vs {ref}": [versus_text(x, bool(t)) for x, t in zip(v["ratio"], v["tie"])]})
    return Table(f"{section([ref, other])} per (op, layout, size)", frame, align="lllrlrrrrrl",
                 note=f"p50 and p5–p95: medians over each MPI's results of that point. {other} ÷ {ref}: the ratio "
                      f"of the p50 times (> 1: {other} slower); '≈': a tie, the slower p50 within the faster one's "
                      "p95.").drop_blank_column("variant")


def tables(c: pd.DataFrame) -> list[Table]:
    """The section's tables; none with one MPI."""
    v = versus(c)
    return [glance_table(v), per_size_table(v)] if len(v) else []


def make_figures(ds: Dataset, outdir: Path) -> list[FigureInfo]:
    """Per (op, layout, variant) measured under two MPIs: the ratio of each entry's p50 times against size."""
    c = collectives(ds)
    v = versus(c[c["bytes"] > 0])
    if v.empty:
        return []
    outdir.mkdir(parents=True, exist_ok=True)
    sides = mpi_sides(c)
    title = section(sides)
    figs = []
    with rc_context(STYLE):
        for (op, layout, variant), g in v.groupby(GROUP, sort=False):
            fig, (ax,) = _new_figure()
            for (algo, backend), s in g.groupby(["algo", "backend"], sort=False):
                lib = algo == LIBRARY_ALGO
                color = color_of(algo)
                ax.plot(s["bytes"], s["ratio"], color=color, linewidth=2.6 if lib else 1.6, zorder=3 if lib else 2,
                        label=f"{algo} ({backend} ÷ {s['reference'].iloc[0]})")
                # filled: beyond the noise; hollow: a tie (within the faster one's spread)
                tie = s["tie"].to_numpy(dtype=bool)
                for mask, face in ((~tie, color), (tie, "white")):
                    ax.scatter(s["bytes"][mask], s["ratio"][mask], marker=marker_of(algo), s=36, facecolors=face,
                               edgecolors=color, linewidths=1.4, zorder=4)
            ax.axhline(1.0, color="#222222", linewidth=1.2, linestyle="--", zorder=1)
            _plain_log_y(ax, [*g["ratio"], 1.0])
            apply_size_axis(ax, g["bytes"])
            other = " / ".join(sides[1:])
            ax.set_ylabel(f"{other} p50 ÷ {sides[0]} p50 (log; > 1: {other} slower)")
            at = c[(c["op"] == op) & (c["layout"] == layout) & (c["variant"] == variant)]
            world, slug = int(at["world_size"].iloc[0]), at["variant_slug"].iloc[0]
            ax.set_title(f"{op}: {title}, each entry against itself\n{subtitle(layout, world, variant)}")
            ax.legend(title="entry (hollow: within noise)", loc="best")
            note = frame_note(at)
            add_footnote(fig, note)
            name = _save(fig, outdir, "_".join(p for p in ("mpis", op, layout, slug) if p) + ".png")
            figs.append(FigureInfo(title, name, f"{op}, {subtitle(layout, world, variant)}: each entry's p50 time "
                                   f"under {', '.join(sides[1:])} ÷ under {sides[0]}, from "
                                   f"{format_bytes(g['bytes'].min())} to {format_bytes(g['bytes'].max())}. Read: "
                                   "above the dashed line at 1 the other MPI is slower at that size, below faster; "
                                   "hollow markers are ties (the slower p50 within the faster one's p95), not wins.",
                                   note))
    return figs

