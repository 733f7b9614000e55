"""The report's answers: the best algorithm per (op, layout, size), custom vs library, the winner charts.

One rule decides every answer (:mod:`.ranking`, colltune's): the fastest is the lowest p50, whatever
is within its spread is tied with it, and a tie goes to the simplest tied algorithm, the library first.
:func:`ranked` applies it per point; the tables and charts here write its answers.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context

from ..load import LIBRARY_ALGO, Dataset, backend_order, format_bytes, frame_note, layout_sort_key, library_internal
from ..palette import color_on_backend
from ..plots import STYLE, FigureInfo, plot_answer_chart
from ..points import GROUP, algo_of, collectives, report_order, size_cells, times_cells
from ..ranking import choose, decide_sizes, pool
from ..tables import BLANK, Table, fmt_col, fmt_num

BEST_GRID = "Best algorithm per size and layout"


def several_backends(c: pd.DataFrame) -> bool:
    """Whether the collective results hold more than one backend (an mpi and a gloo sweep in one file).

    Then every answer names its backend (``library (gloo)``, ``ring (mpi)``), in every table and
    figure alike: the whole results decide, not the rows of one table (in which the fastest may all
    be of one backend while the others were measured beside them).
    """
    return c["backend"].nunique() > 1


def _namer(c: pd.DataFrame):
    """The answer's names: the series (``ring (mpi)``) with several backends, else the algorithm (``ring``)."""
    return (lambda s: s) if several_backends(c) else algo_of


def decide(g: pd.DataFrame) -> tuple[str, tuple[str, ...]]:
    """The answer at one (op, layout, variant, size): (the chosen series, every series tied with the fastest).

    colltune's rule (:mod:`.ranking`, the default ``spread`` tie): the fastest is the lowest
    p50; an algorithm whose p50 is within the fastest's spread (at most its p95) is tied with it,
    and a tie goes to the simplest tied algorithm, the library first.
    """
    ch = choose(int(g["bytes"].iloc[0]), pool(g, name="series"))  # ranks from the traits; equal ranks by name
    return ch.choice.algo, ch.tied


def ranked(c: pd.DataFrame) -> pd.DataFrame:
    """Per (op, layout, variant, size), decided by the shared rule (:mod:`.ranking`, colltune's): the best
    (lowest p50) point, its runner-up, ``margin`` (runner-up p50 ÷ best p50 − 1) and ``within_noise`` (the
    runner-up tied with the best), the library's busbw and p50, and the answer: ``choice`` (the fastest, or
    the simplest algorithm tied with it) and ``tied`` (every series within the fastest's spread, simplest
    first; one name when nothing ties)."""
    keys = [*GROUP, "bytes"]
    decided = decide_sizes(c, keys, name="series")
    if not decided:
        return c.iloc[0:0].assign(second=None, second_p50=np.nan, margin=np.nan, within_noise=False, choice=None,
                                  tied=None, choice_p50=np.nan, lib_busbw=np.nan, lib_p50=np.nan)
    dec = pd.DataFrame([(*k, ch.best.algo, ch.runner_up.algo if ch.runner_up else None,
                         ch.runner_up.p50 if ch.runner_up else np.nan, ch.margin, ch.within_noise, ch.choice.algo,
                         ch.tied, ch.choice.p50) for k, ch in decided.items()],
                       columns=[*keys, "series", "second", "second_p50", "margin", "within_noise", "choice", "tied",
                                "choice_p50"])
    best = c.drop_duplicates([*keys, "series"], keep="last")
    lib = c[c["algo"] == LIBRARY_ALGO][[*keys, "backend", "busbw_GBps", "p50_us"]].drop_duplicates(
        [*keys, "backend"], keep="last").rename(columns={"busbw_GBps": "lib_busbw", "p50_us": "lib_p50"})
    out = dec.merge(best, on=[*keys, "series"], how="left").merge(lib, on=[*keys, "backend"], how="left")
    return report_order(out)


def answer_text(choice: str, tied: Sequence[str], short: bool = False) -> str:
    """``ring`` for a clear winner; ``library ≈ ring (within noise)`` for a tie (the one chosen first).

    ``short``: at most two others named, the rest counted (a grid cell).
    """
    others = [t for t in tied if t != choice]
    if not others:
        return choice
    shown = others[:2] if short else others
    more = f" +{len(others) - len(shown)}" if len(others) > len(shown) else ""
    return f"{choice} ≈ {' ≈ '.join(shown)}{more} (within noise)"


def margin_text(margin: float, within_noise: bool) -> str:
    """``+4.0%`` for a clear winner, ``≈ (+4.0%)`` when the margin is inside the best's spread, ``—`` alone."""
    if pd.isna(margin):
        return BLANK
    text = "+∞" if math.isinf(margin) else f"+{margin * 100:.1f}%"
    return f"≈ ({text})" if within_noise else text


TIE_NOTE = ("A tie: algorithms whose p50 is within the fastest one's spread (at most its p95) are tied with it; the "
            "tie goes to the simplest of them, the library first (colltune's rule, docs/tuning.md \"How the algorithm is chosen\").")


def best_algorithm_table(c: pd.DataFrame) -> Table:
    r = ranked(c)
    name = _namer(c)
    frame = pd.DataFrame({
        "op": r["op"], "layout": r["layout"], "variant": r["variant"].replace("", BLANK),
        "size": size_cells(r["bytes"]),
        "answer": [answer_text(name(ch), [name(t) for t in tied]) for ch, tied in zip(r["choice"], r["tied"])],
        "fastest": r["series"], "p50 (µs)": fmt_col(r["p50_us"]), "p95 (µs)": fmt_col(r["hi_us"]),
        "busbw (GB/s)": fmt_col(r["busbw_GBps"]),
        "runner-up": r["second"].fillna(BLANK),
        "margin": [margin_text(m, tie) for m, tie in zip(r["margin"], r["within_noise"])],
        "vs library": times_cells(r["busbw_GBps"] / r["lib_busbw"].where(r["lib_busbw"] > 0))})
    return Table("Best algorithm per (op, layout, size)", frame.reset_index(drop=True), align="lllrllrrrlrr",
                 note="fastest: the lowest p50 time; margin = how much slower the runner-up is (its p50 ÷ the "
                      "fastest's − 1), '≈' when that is inside the fastest's spread (the runner-up's p50 at most "
                      "the fastest's p95); vs library = the fastest's busbw ÷ the library's (same backend). answer: "
                      "the fastest, or the tie when the margin is inside the spread. " + TIE_NOTE)


def answer_cells(c: pd.DataFrame) -> pd.DataFrame:
    """The answer charts' cells: per (op, row = layout and variant, size) the winner (``algo``: named as the
    report's answers name it, with its backend when there are several) and its ``color``, whether it is a
    tie, and the text written in the cell (how many times faster than the library of its backend the winner
    is; ``lib`` when a library itself is the answer; empty where that library was not measured)."""
    r = ranked(c)
    # The library of the winner's own backend: r's lib_* are the fastest's backend's, so take the choice's.
    lib = c[c["algo"] == LIBRARY_ALGO].drop_duplicates([*GROUP, "bytes", "backend"], keep="last").set_index(
        [*GROUP, "bytes", "backend"])["p50_us"]
    choice_backend = r["choice"].str.rsplit(" (", n=1).str[1].str.rstrip(")")
    lib_p50 = lib.reindex(pd.MultiIndex.from_arrays([r[k] for k in [*GROUP, "bytes"]] + [choice_backend])).to_numpy()
    lib_wins = r["choice"].map(algo_of) == LIBRARY_ALGO
    speedup = lib_p50 / r["choice_p50"].where(r["choice_p50"] > 0)
    text = ["lib" if w else "" if pd.isna(x) else f"{x:.2g}×" if x < 10 else f"{x:.0f}×"
            for w, x in zip(lib_wins, speedup)]
    row = [lay + (f" {v}" if v else "") for lay, v in zip(r["layout"], r["variant"])]
    name = _namer(c)
    # Colour: the algorithm's (palette.py); with several backends the reference backend's algorithms keep
    # it and another backend's are paler (ring (gloo) is ring's blue, lighter).
    rank = {b: i for i, b in enumerate(backend_order(c["backend"]))}
    color = [color_on_backend(algo_of(ch), rank.get(b, 0)) for ch, b in zip(r["choice"], choice_backend)]
    out = pd.DataFrame({"op": r["op"], "row": row, "bytes": r["bytes"], "algo": r["choice"].map(name),
                        "color": color, "tie": [len(t) > 1 for t in r["tied"]], "text": text,
                        "layout": r["layout"]})
    # Rows per op: by layout, then the variant measured at the most sizes first (hot before a cold subset).
    out["sizes"] = out.groupby(["op", "row"])["bytes"].transform("size")
    out["lkey"] = out["layout"].map(layout_sort_key)
    out = out.sort_values(["op", "lkey", "sizes", "row", "bytes"], ascending=[True, True, False, True, True],
                          kind="stable")
    return out.drop(columns=["layout", "sizes", "lkey"]).reset_index(drop=True)


def answer_figures(ds: Dataset, outdir: Path) -> list[FigureInfo]:
    """One answer chart per op (:func:`.plots.plot_answer_chart`), in op order, for the report's lead."""
    c = collectives(ds)
    c = c[c["bytes"] > 0]
    if c.empty:
        return []
    cells = answer_cells(c)
    outdir.mkdir(parents=True, exist_ok=True)
    figs = []
    with rc_context(STYLE):
        for op, g in cells.groupby("op", sort=True):
            f = plot_answer_chart(op, g, outdir, frame_note(c[c["op"] == op]), several_backends(c))
            if f is not None:
                figs.append(f)
    return figs


def best_per_size_table(c: pd.DataFrame) -> Table:
    """The answer per size (rows) and layout (columns), one block per op: the fastest, or the tie."""
    r = ranked(c)
    name = _namer(c)
    r["algorithm"] = [answer_text(name(ch), [name(t) for t in tied], short=True)
                      for ch, tied in zip(r["choice"], r["tied"])]
    grid = r.pivot_table(index=["op", "variant", "bytes"], columns="layout", values="algorithm", aggfunc="first")
    layouts = sorted(grid.columns, key=layout_sort_key)
    grid = grid[layouts].reset_index()
    frame = pd.DataFrame({"op": grid["op"], "variant": grid["variant"].replace("", BLANK),
                          "size": size_cells(grid["bytes"]), **{lay: grid[lay].fillna(BLANK) for lay in layouts}})
    return Table(BEST_GRID, frame, align="llr" + "l" * len(layouts),
                 note="The algorithm with the lowest p50 time at each size (columns: layouts, nodes × ranks per "
                      "node), or a tie: 'library ≈ ring (within noise)'. " + TIE_NOTE + " Margins, runner-ups "
                      "and bandwidths: 'Best algorithm per (op, layout, size)' below."
                 ).drop_blank_column("variant")


def custom_vs_library(c: pd.DataFrame) -> pd.DataFrame:
    """Per (op, layout, variant, backend): how the custom algorithms fare against the library, size by size.

    speed-up = library p50 ÷ the other's p50 at the sizes both were measured (> 1: the other is faster);
    ``wins`` counts the sizes where one is faster beyond the noise (the library's p50 above its p95).
    "library" is the plain ``library`` entry (the library's own choice); the library's internals
    (``library:ALGO``, ``han``: the ``library`` trait, :func:`.load.library_internal`) are the
    library's code, so they are summarised apart (``internal_*``) and never count as a custom
    algorithm beating it.
    """
    keys = [*GROUP, "backend"]
    lib = c[c["algo"] == LIBRARY_ALGO][[*keys, "bytes", "p50_us"]].drop_duplicates([*keys, "bytes"], keep="last")
    vs = c[c["algo"] != LIBRARY_ALGO].merge(lib, on=[*keys, "bytes"], suffixes=("", "_lib"))
    vs["speedup"] = vs["p50_us_lib"] / vs["p50_us"].where(vs["p50_us"] > 0)
    vs["internal"] = library_internal(vs)
    # Faster beyond the noise: the library's p50 above the other's p95 (within it, the two tie: ranking.tied_with).
    vs["clear"] = vs["p50_us_lib"] > vs["hi_us"]
    rows = []
    for key, g in vs.groupby(keys, sort=False):
        row: dict = dict(zip(keys, key))
        for prefix, part in (("", g[~g["internal"]]), ("internal_", g[g["internal"]])):
            if part.empty:
                continue
            per_size = part.groupby("bytes")["speedup"].max()  # the best of the part at each size
            per_algo = part.groupby("algo")["speedup"].agg(["median", "min", "max", "size"]).sort_values(
                ["median", "size"], ascending=False)
            top = per_algo.index[0]
            wins = int(part.groupby("bytes")["clear"].any().sum())
            row.update({f"{prefix}sizes": len(per_size), f"{prefix}wins": wins,
                        f"{prefix}best": top, f"{prefix}best_median": per_algo.at[top, "median"]})
            if not prefix:
                peak = part.loc[part["speedup"].idxmax()]
                row.update(best_min=per_algo.at[top, "min"], best_max=per_algo.at[top, "max"],
                           peak_algo=peak["algo"], peak=peak["speedup"], peak_bytes=peak["bytes"])
        rows.append(row)
    cols = [*keys, "sizes", "wins", "best", "best_median", "best_min", "best_max", "peak_algo", "peak", "peak_bytes",
            "internal_sizes", "internal_wins", "internal_best", "internal_best_median"]
    return report_order(pd.DataFrame(rows, columns=cols), ["backend"])


def custom_vs_library_table(c: pd.DataFrame) -> Table:
    s = custom_vs_library(c)
    has = s["best"].notna()
    internal = s["internal_best"].notna()
    frame = pd.DataFrame({
        "op": s["op"], "layout": s["layout"], "variant": s["variant"].replace("", BLANK),
        "backend": s["backend"] if several_backends(c) else BLANK,
        "a custom algorithm is faster at": [f"{int(w)} of {int(n)} sizes" if ok else BLANK
                                            for w, n, ok in zip(s["wins"], s["sizes"], has)],
        "best custom overall": s["best"].fillna(BLANK),
        "its speed-up (median, range)": [f"{fmt_num(m)}× ({fmt_num(lo)}–{fmt_num(hi)}×)" if ok else BLANK
                                         for m, lo, hi, ok in zip(s["best_median"], s["best_min"], s["best_max"], has)],
        "largest speed-up": [f"{fmt_num(p)}× ({a} at {format_bytes(b)})" if ok else BLANK
                             for p, a, b, ok in zip(s["peak"], s["peak_algo"], s["peak_bytes"], has)],
        "library internals (best, median; faster at)": [
            f"{a} {fmt_num(m)}× ({int(w)} of {int(n)} sizes)" if ok else BLANK
            for a, m, w, n, ok in zip(s["internal_best"], s["internal_best_median"], s["internal_wins"],
                                      s["internal_sizes"], internal)]})
    t = Table("Custom vs library at a glance", frame, align="llllrlrll",
              note="library: the plain library entry (the library's own choice of algorithm). faster at: sizes where "
                   "a custom algorithm beats the library beyond the noise (the library's p50 above its p95; within it "
                   "the two tie). speed-up = library "
                   "p50 ÷ custom p50 at the same size (> 1: the custom algorithm is faster). best custom overall: "
                   "the highest median speed-up over the sizes both measured. Library internals (library:ALGO, one "
                   "of the library's algorithms forced; han, Open MPI's coll/han) are the library's own code: "
                   "shown apart, the best of them by the same median, never counted as a custom win.")
    for header in ("variant", "backend", "library internals (best, median; faster at)"):
        t.drop_blank_column(header)
    return t
