"""Summary tables and the ``report.html`` / ``summary.md`` writers for collplot.

Tables are computed once (:func:`build_tables`) from the results frame (pandas groupby,
pivot_table, drop_duplicates) and rendered into both files, so the HTML report and the
GitHub-readable Markdown never disagree. Both lead with the answers (best algorithm per size
and layout, custom vs library, within vs across node, DDP step time) before the detailed
tables and the figure gallery.
"""
from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from matplotlib import rc_context

from . import cache_state, mpis, provenance, stragglers
from .ddp import step_tables
from .ddp.naming import SECTION as DDP_SECTION
from .ddp.records import Workload, measured_of
from .load import (
    LIBRARY_ALGO, Dataset, algorithm_traits, backend_order, describe_links, format_bytes, frame_note,
    inter_node_links, latest, layout_sort_key, library_internal, sort_layouts,
)
from .model import MIN_FIT_SIZES, MIN_FIT_SPAN, fit_models, measured_crossovers, predicted_crossovers, series_of
from .palette import color_on_backend
from .plots import ANSWERS_SECTION, STYLE, FigureInfo, plot_answer_chart
from .points import GROUP, algo_of, collectives, report_order, size_cells, times_cells
from .side_by_side import BACKEND_KEYS, counts_text, mpi_sides, pair_summary, ratio_and_tie, versus_text
from .side_by_side import times_text  # noqa: F401  (report.times_text: the tests)
from .tables import BLANK, NUM_CSS, Table, fmt_col, fmt_num
from .ranking import choose, decide_sizes, pool, pooled

_algo_of = algo_of  # report._algo_of (tests/analysis/test_tiny_report.py)
_DETAILS_ROWS = 40  # longer tables fold into <details> in the HTML report


# --------------------------------------------------------------------------- detailed tables

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


# Node-aware vs flat, by the algorithms' traits (load.py "algorithm traits"), not their names. Node-aware:
# collbench's node-aware algorithms (allreduce hier_ring / hier_leader, broadcast hier, allgather hier
# today). Flat: every other custom algorithm with known traits that works by messages: node-blind. Not
# flat: the library's code (its own choice and its node-aware entries, han, compared in columns of their
# own; library:ALGO not custom at all); peer-memory algorithms (shm: within one node only, never a whole
# multi-node collective); algorithms without traits (auto, which runs what a tuning file names, possibly
# a node-aware one).


def node_aware(t: dict) -> bool:
    """A custom node-aware algorithm (of :func:`.load.algorithm_traits`): what the table is about."""
    return bool(t["node_aware"]) and not t["library"]


def flat(t: dict) -> bool:
    """A node-blind custom algorithm (of :func:`.load.algorithm_traits`): what the node-aware ones have to beat."""
    return bool(t["traits_known"]) and not (t["node_aware"] or t["peer_memory"] or t["library"])


def library_node_aware(t: dict) -> bool:
    """One of the library's node-aware entries (Open MPI's han)."""
    return bool(t["node_aware"]) and bool(t["library"])


NODE_AWARE_KEYS = ["op", "layout", "variant", "backend", "bytes"]


def node_aware_rows(ds: Dataset) -> pd.DataFrame:
    """Per multi-node (op, layout, variant, backend, size) where a node-aware algorithm was measured.

    Columns: the keys; ``hier`` ((algo, p50) of every node-aware algorithm, fastest first),
    ``best_hier``, ``flat`` / ``flat_p50`` (the fastest flat algorithm), ``library`` (p50),
    ``lib_aware`` / ``lib_aware_p50`` (the fastest of the library's node-aware entries, han), NaN
    where not measured, and ``flat_ratio``, ``library_ratio``, ``lib_aware_ratio`` (each p50 ÷ the
    best node-aware p50: > 1 means node-aware is faster). Points are compared within one backend
    only (a library's NCCL time says nothing about MPI schedules).
    """
    c = collectives(ds)
    multi = c[c["nodes"] > 1]
    p50 = multi.pivot_table(index=NODE_AWARE_KEYS, columns="algo", values="p50_us", aggfunc="last")
    traits = algorithm_traits(multi)
    hier_cols = [a for a in p50.columns if node_aware(traits[a])]
    flat_cols = [a for a in p50.columns if flat(traits[a])]
    lib_cols = [a for a in p50.columns if library_node_aware(traits[a])]
    p50 = p50[p50[hier_cols].notna().any(axis=1)] if hier_cols else p50.iloc[0:0]
    out = pd.DataFrame(index=p50.index)
    out["hier"] = [tuple(sorted(((a, t) for a, t in row.items() if pd.notna(t)), key=lambda at: (at[1], at[0])))
                   for _, row in p50[hier_cols].iterrows()]
    out["best_hier"] = p50[hier_cols].min(axis=1) if hier_cols else np.nan
    has_flat = p50[flat_cols].notna().any(axis=1) if flat_cols else pd.Series(False, index=p50.index)
    out["flat"] = p50[flat_cols].idxmin(axis=1).where(has_flat) if flat_cols and len(p50) else None
    out["flat_p50"] = p50[flat_cols].min(axis=1) if flat_cols else np.nan
    out["library"] = p50[LIBRARY_ALGO] if LIBRARY_ALGO in p50.columns else np.nan
    has_lib = p50[lib_cols].notna().any(axis=1) if lib_cols else pd.Series(False, index=p50.index)
    out["lib_aware"] = p50[lib_cols].idxmin(axis=1).where(has_lib) if lib_cols and len(p50) else None
    out["lib_aware_p50"] = p50[lib_cols].min(axis=1) if lib_cols else np.nan
    best = out["best_hier"].where(out["best_hier"] > 0)
    for col, num in (("flat", "flat_p50"), ("library", "library"), ("lib_aware", "lib_aware_p50")):
        out[f"{col}_ratio"] = out[num] / best
    return report_order(out.reset_index())


def node_aware_table(ds: Dataset) -> Table:
    """Issue 19's question, one row per multi-node size: do the hier algorithms beat what a user has anyway?

    Empty (and left out of the report) without node-aware results on a multi-node layout. Columns
    nobody measured (the library's node-aware entry, a second backend, a variant) are dropped to keep
    the table narrow. The library's node-aware columns are named after the entries measured (han).
    """
    r = node_aware_rows(ds)
    c = collectives(ds)
    compared = c.merge(r[NODE_AWARE_KEYS], on=NODE_AWARE_KEYS)
    links = frame_note(compared)
    names = sorted(set(r["lib_aware"].dropna()))
    lib = "/".join(names) or "library node-aware"
    lib_cells = ([f"{a} {fmt_num(v)}" if isinstance(a, str) else BLANK for a, v in zip(r["lib_aware"], r["lib_aware_p50"])]
                 if len(names) > 1 else fmt_col(r["lib_aware_p50"]))
    note = ("p50 times. node-aware: collbench's node-aware algorithms (their registry traits say so), fastest first; "
            "best flat: the fastest node-blind custom algorithm (not the library's code, library:ALGO or han; not a "
            "peer-memory one such as shm, which runs within one node; not auto, which has no traits of its own); "
            "library: the backend's own call (MPI: Open MPI's default choice); "
            f"{lib}: the library's own node-aware entry (Open MPI's hierarchical coll/han). Ratios are p50 ÷ the "
            "best node-aware p50: > 1 means node-aware is faster.")
    frame = pd.DataFrame({
        "op": r["op"], "layout": r["layout"], "variant": r["variant"].replace("", BLANK),
        "backend": r["backend"] if r["backend"].nunique() > 1 else BLANK, "size": size_cells(r["bytes"]),
        "node-aware p50 (µs)": [", ".join(f"{a} {fmt_num(v)}" for a, v in h) for h in r["hier"]],
        "best flat": r["flat"].fillna(BLANK), "flat p50 (µs)": fmt_col(r["flat_p50"]),
        "library p50 (µs)": fmt_col(r["library"]), f"{lib} p50 (µs)": lib_cells,
        "flat ÷ hier": times_cells(r["flat_ratio"]), "library ÷ hier": times_cells(r["library_ratio"]),
        f"{lib} ÷ hier": times_cells(r["lib_aware_ratio"])})
    t = Table("Node-aware vs flat", frame, align="llllrllrrrrrr",
              note=note + (f" {links.rstrip('.')}." if links else ""))
    for header in ("variant", "backend", f"{lib} p50 (µs)", f"{lib} ÷ hier"):
        t.drop_blank_column(header)
    return t


def peak_busbw_table(c: pd.DataFrame) -> Table:
    peaks = c.loc[c.groupby([*GROUP, "series"], sort=False)["busbw_GBps"].idxmax()]
    lib = peaks[peaks["algo"] == LIBRARY_ALGO][[*GROUP, "backend", "busbw_GBps"]].rename(
        columns={"busbw_GBps": "lib_peak"})
    peaks = peaks.merge(lib, on=[*GROUP, "backend"], how="left")
    peaks["neg"] = -peaks["busbw_GBps"]
    peaks = report_order(peaks, ["neg"])
    rel = (peaks["busbw_GBps"] / peaks["lib_peak"]).where(peaks["algo"] != LIBRARY_ALGO)
    frame = pd.DataFrame({"op": peaks["op"], "layout": peaks["layout"], "variant": peaks["variant"].replace("", BLANK),
                          "algorithm": peaks["series"], "peak busbw (GB/s)": fmt_col(peaks["busbw_GBps"]),
                          "at size": size_cells(peaks["bytes"]), "vs library peak": times_cells(rel)})
    return Table("Peak bus bandwidth per (op, algo, layout)", frame, align="llllrrr")


def small_latency_table(c: pd.DataFrame) -> Table:
    first = c.sort_values("bytes", kind="stable").drop_duplicates([*GROUP, "series"])
    first = report_order(first, ["p50_us"])
    frame = pd.DataFrame({"op": first["op"], "layout": first["layout"], "variant": first["variant"].replace("", BLANK),
                          "algorithm": first["series"], "size": size_cells(first["bytes"]),
                          "p50 (µs)": fmt_col(first["p50_us"]),
                          "p5–p95 (µs)": [f"{a}–{b}" for a, b in zip(fmt_col(first["lo_us"]), fmt_col(first["hi_us"]))]})
    return Table("Small-message latency (smallest measured size)", frame, align="llllrrr")


def pingpong_summary(ds: Dataset) -> pd.DataFrame:
    """Per (layout, link): pairs, latency at the smallest size (median, min, max over pairs), bw/bibw at the largest."""
    pp = latest(ds.results[ds.results["measured"] & ds.results["is_p2p"]]).copy()
    pp["link"] = pp["link"].fillna("unknown")
    rows = []
    for (layout, link), g in pp.groupby(["layout", "link"], sort=False):
        lat = g[g["algo"] == "latency"]
        lat = lat[lat["bytes"] == lat["bytes"].min()]["p50_us"]
        bws = g[g["algo"].isin(["bw", "bibw"])]
        big = bws["bytes"].max() if len(bws) else np.nan
        at_big = bws[bws["bytes"] == big].groupby("algo")["busbw_GBps"].median()
        rows.append(dict(layout=layout, link=link, pairs=len(g[["src", "dst"]].drop_duplicates()),
                         lat_bytes=g.loc[g["algo"] == "latency", "bytes"].min(), lat=lat.median(),
                         lat_min=lat.min(), lat_max=lat.max(), bw_bytes=big, bw=at_big.get("bw", np.nan),
                         bibw=at_big.get("bibw", np.nan)))
    out = pd.DataFrame(rows, columns=["layout", "link", "pairs", "lat_bytes", "lat", "lat_min", "lat_max", "bw_bytes",
                                      "bw", "bibw"])
    out["intra_first"] = out["link"] != "intra"
    return sort_layouts(out, ["layout", "intra_first"])


def pingpong_table(ds: Dataset) -> Table:
    s = pingpong_summary(ds)
    frame = pd.DataFrame({
        "layout": s["layout"], "link": s["link"], "pairs": s["pairs"].astype(str),
        "latency size": [BLANK if pd.isna(b) else format_bytes(b) for b in s["lat_bytes"]],
        "p50 latency (µs, median)": fmt_col(s["lat"]),
        "latency range": [BLANK if pd.isna(m) else f"{fmt_num(m)}–{fmt_num(x)}" for m, x in zip(s["lat_min"], s["lat_max"])],
        "bw size": [BLANK if pd.isna(b) else format_bytes(b) for b in s["bw_bytes"]],
        "bw (GB/s, median)": fmt_col(s["bw"]), "bibw (GB/s, median)": fmt_col(s["bibw"])})
    return Table("Point-to-point: within vs across nodes", frame, align="llrrrrrrr",
                 note="Medians over pairs; range = fastest–slowest pair. Latency is one-way (half round trip).")


def model_table(models: pd.DataFrame) -> Table:
    m = models
    note = ["α clamped: fit through origin" if o else ("β=0: constant" if b == 0 else "")
            for o, b in zip(m["through_origin"], m["beta_us_per_byte"])]
    frame = pd.DataFrame({
        "op": m["op"], "layout": m["layout"], "variant": m["variant"].replace("", BLANK), "algorithm": m["series"],
        "α (µs)": fmt_col(m["alpha_us"]), "β (µs/B)": fmt_col(m["beta_us_per_byte"]), "1/β (GB/s)": fmt_col(m["gbps"]),
        "R²": [f"{v:.4f}" for v in m["r2"]], "max rel err": [f"{v * 100:.1f}%" for v in m["max_rel_err"]],
        "sizes": [f"{format_bytes(a)}–{format_bytes(b)} ({n})" for a, b, n in zip(m["min_bytes"], m["max_bytes"],
                                                                                  m["n_points"])],
        "note": note})
    return Table("α–β model: t = α + n·β (fit on p50)", frame, align="llllrrrrrrl",
                 note="Weighted least squares on relative error (sizes span decades). "
                      "If the free fit gives α < 0 the model is refitted through the origin.")


def crossover_table(measured: pd.DataFrame, predicted: pd.DataFrame) -> Table:
    both = pd.concat([measured, predicted], ignore_index=True)
    both = sort_layouts(both, ["op", "layout", "variant", "at_bytes", "kind"])
    at = [f"{format_bytes(lo)} → {format_bytes(hi)}" if kind == "measured" else f"≈ {format_bytes(lo)}"
          for kind, lo, hi in zip(both["kind"], both["lo_bytes"], both["hi_bytes"])]
    frame = pd.DataFrame({"op": both["op"], "layout": both["layout"], "variant": both["variant"].replace("", BLANK),
                          "kind": both["kind"], "from": both["before"], "to": both["after"], "at": at})
    return Table("Crossovers: where the best algorithm changes", frame, align="lllllll",
                 note="measured: between two consecutive measured sizes where the answer changes (the fastest, or "
                      "the simplest tied with it: colltune's choice); predicted: intersection of the fitted α–β "
                      "lines, only where both fits are within 50% of every measured point.")


PROBLEMS_TITLE = "Skipped points and verification failures"


def problems_table(ds: Dataset) -> Table:
    """Skipped points and verification failures: the things a reader must not miss (wrong results first)."""
    r = ds.results.assign(series=series_of(ds.results))
    keys = ["op", "series", "layout"]
    bad = r[r["wrong"] > 0].groupby(keys, sort=False).agg(
        points=("wrong", "size"), wrong=("wrong", "sum"),
        sizes=("bytes", lambda b: ", ".join(size_cells(sorted(set(b))[:6])))).reset_index()
    skipped = r[r["skipped"]].groupby(keys, sort=False).agg(
        points=("skipped", "size"),
        reasons=("skip_reason", lambda s: "; ".join(sorted(set(s.fillna("no reason given")))))).reset_index()
    frame = pd.concat([
        pd.DataFrame({"op": bad["op"], "algorithm": bad["series"], "layout": bad["layout"], "what": "WRONG RESULTS",
                      "points": bad["points"].astype(str),
                      "detail": [f"{w} wrong elements at {s}" for w, s in zip(bad["wrong"], bad["sizes"])]}),
        pd.DataFrame({"op": skipped["op"], "algorithm": skipped["series"], "layout": skipped["layout"],
                      "what": "skipped", "points": skipped["points"].astype(str), "detail": skipped["reasons"]}),
    ], ignore_index=True)
    return Table(PROBLEMS_TITLE, frame, align="llllrl",
                 row_classes=["bad"] * len(bad) + [""] * len(skipped))


PROBLEMS_ID = "problems"


def problems_line(ds: Dataset) -> str:
    """One line: how many points were skipped (the commonest reasons) and how many reported wrong results."""
    r = ds.results
    skipped, wrong = int(r["skipped"].sum()), int((r["wrong"] > 0).sum())
    if not skipped and not wrong:
        return ""
    parts = []
    if wrong:
        parts.append(f"{wrong} point(s) with WRONG RESULTS")
    if skipped:
        sk = r[r["skipped"]]
        why = sk["skip_reason"].fillna("no reason given").str.replace(r"^[\w:]+/[\w:]+: ", "", regex=True)
        per_algo = []
        for algo, g in sk.assign(why=why).groupby("algo", sort=False):
            layouts = ", ".join(sorted(g["layout"].unique(), key=layout_sort_key))
            reason = g["why"].mode().iloc[0]
            reason = reason if len(reason) <= 70 else reason.split(" (")[0][:69]  # the gist; the table has it all
            per_algo.append((len(g), f"{algo} ×{len(g)} on {layouts} ({reason})"))
        per_algo.sort(key=lambda t: -t[0])
        more = f"; {len(per_algo) - 3} more algorithms" if len(per_algo) > 3 else ""
        parts.append(f"{skipped} point(s) skipped: " + "; ".join(t for _, t in per_algo[:3]) + more)
    return "; ".join(parts)


def _loads(v: object) -> list[float] | None:
    return [float(x) for x in v] if isinstance(v, (list, tuple)) and len(v) == 3 else None


def _cpus(run: pd.Series) -> int | None:
    """The run's online CPUs (rank 0's node), else hwloc's PUs of its first node (records before online_cpus)."""
    if isinstance(run.get("online_cpus"), (int, float)) and not pd.isna(run.get("online_cpus")):
        return int(run["online_cpus"])
    hw = run.get("hardware")
    if isinstance(hw, list) and hw and hw[0].get("pus"):
        return int(hw[0]["pus"])
    return None


LOAD_SLACK = 1.0  # runnable tasks above the bound before a run counts as loaded (load_warnings)


def load_warnings(ds: Dataset) -> list[str]:
    """Per run whose 1-minute load at its start or end exceeded the CPUs: a line saying so.

    The bound is the online CPUs, or the run's own world size when that is larger — a run's own
    ranks (and the previous step's, run just before) count in the load for up to a minute, and
    a layout with more ranks than CPUs loads the machine that much by itself — plus one runnable
    task of slack (the launcher's and the job daemons' moments awake: an idle 2-core machine
    ended a 2-rank step at 2.1 and a 4-rank one at 4.2); anything above is other work competing
    for the CPUs while the run was timed. Runs whose records predate the field are not judged.
    """
    out = []
    for run in ds.runs.sort_values("start_time", na_position="last").to_dict("records"):
        start, end, cpus = _loads(run.get("loadavg")), _loads(run.get("end_loadavg")), _cpus(pd.Series(run))
        if cpus is None or (start is None and end is None):
            continue
        bound = max(cpus, int(run.get("world_size") or 0))
        over = [f"{what} {lv[0]:.1f}" for what, lv in (("at its start", start), ("at its end", end))
                if lv is not None and lv[0] > bound + LOAD_SLACK]
        if over:
            out.append(f"run {run['run_id']} ({run.get('layout', '?')}): load {' and '.join(over)} (1-minute "
                       f"average) on {cpus} online CPUs, above {'the CPUs' if bound == cpus else 'its ' + str(bound) + ' ranks'}: "
                       "other work competed for the CPUs while it was timed, so its spreads are wide and close "
                       "results are ties; re-run it on an idle machine to rank them")
    return out


def _load_cell(start: object, end: object) -> str:
    a, b = _loads(start), _loads(end)
    if a is None and b is None:
        return BLANK
    f = lambda lv: BLANK if lv is None else f"{lv[0]:.2f}"  # noqa: E731
    return f"{f(a)} / {f(b)}"


def runs_table(ds: Dataset) -> Table:
    """Every run's metadata; the inter-node link only for multi-node runs (a single node crosses none)."""
    runs = ds.runs.assign(start=ds.runs["start_time"].fillna("")).sort_values(["start", "run_id"])

    def slurm(s: dict | None) -> str:
        if not s:
            return BLANK
        extra = {k: v for k, v in s.items() if k != "job_id" and v not in (None, "")}
        return str(s.get("job_id", "?")) + (" (" + ", ".join(f"{k}={v}" for k, v in extra.items()) + ")" if extra else "")

    frame = pd.DataFrame({
        "run_id": runs["run_id"], "source": runs["source"].str.rsplit(":", n=1).str[0],
        "start": runs["start_time"].fillna(BLANK),
        "end / exit": [f"{e} / {x}" if isinstance(e, str) else "no end record (killed?)"
                       for e, x in zip(runs["end_time"], runs["exit_status"])],
        "layout": [f"{lay} ({w} ranks)" for lay, w in zip(runs["layout"], runs["world_size"])],
        "backend": [f"{b}/{d}" for b, d in zip(runs["backend"], runs["device"])],
        "hosts": [", ".join(h) if h else BLANK for h in runs["hosts"]],
        "versions": [", ".join(f"{k} {v}" for k, v in (vs or {}).items() if v) or BLANK for vs in runs["versions"]],
        "git": runs["git_commit"].fillna(BLANK), "slurm job": [slurm(s) for s in runs["slurm"]],
        "inter-node link": [link if isinstance(link, str) and link and (n or 0) > 1 else BLANK
                            for link, n in zip(runs["inter_node_link"], runs["nodes"])],
        "load start / end (CPUs)": [_load_cell(a, b) + (f" ({int(n)})" if isinstance(n, (int, float)) and not pd.isna(n)
                                                        else "")
                                    for a, b, n in zip(runs["loadavg"], runs["end_loadavg"], runs["online_cpus"])],
        "argv": [" ".join(a) if a else BLANK for a in runs["argv"]]})
    t = Table("Runs", frame.reset_index(drop=True), align="l" * 13).drop_blank_column("inter-node link")
    if "load start / end (CPUs)" in t.drop_blank_column("load start / end (CPUs)").headers:
        t.note = "load: the 1-minute load average on rank 0's node at the run's start and end, and its online CPUs"
    return t


# --------------------------------------------------------------------------- the answers

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
    return Table("Best algorithm per size and layout", frame, align="llr" + "l" * len(layouts),
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


# --------------------------------------------------------------------------- several backends side by side

# A results file may hold several backends' runs on the same layouts (an mpi sweep and a gloo sweep of one
# job): every answer above is then taken across all of them (series ``algo (backend)``), and these tables
# say by how much one backend's fastest and library are slower or faster than the reference backend's
# (load.REFERENCE_BACKEND, mpi, else the first by name) at each size, ties by the shared rule. Several MPI
# implementations (load.REFERENCE_MPI) are set side by side the same way, in their own section (mpis.py).
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


def within_vs_across_table(ds: Dataset) -> Table:
    """One row per layout with both intra- and inter-node pairs: what crossing a node boundary costs."""
    s = pingpong_summary(ds).set_index(["layout", "link"])
    rows = []
    for layout in sorted({lay for lay, _ in s.index}, key=layout_sort_key):
        if (layout, "intra") not in s.index or (layout, "inter") not in s.index:
            continue
        a, e = s.loc[(layout, "intra")], s.loc[(layout, "inter")]
        rows.append([layout, BLANK if pd.isna(a["lat_bytes"]) else format_bytes(a["lat_bytes"]), fmt_num(a["lat"]),
                     fmt_num(e["lat"]), times_cells(pd.Series([e["lat"] / a["lat"]]))[0],
                     BLANK if pd.isna(a["bw_bytes"]) else format_bytes(a["bw_bytes"]), fmt_num(a["bw"]),
                     fmt_num(e["bw"]), times_cells(pd.Series([a["bw"] / e["bw"] if e["bw"] else np.nan]))[0]])
    return Table.of("Within vs across nodes (point-to-point)",
                    ["layout", "latency size", "intra latency (µs)", "inter latency (µs)", "inter ÷ intra",
                     "bw size", "intra bw (GB/s)", "inter bw (GB/s)", "intra ÷ inter"], rows, align="lrrrrrrrr",
                    note="pingpong medians over pairs: one-way latency at the smallest size, unidirectional "
                         "bandwidth at the largest. inter ÷ intra > 1: crossing nodes is that many times slower.")


# --------------------------------------------------------------------------- assembly

@dataclass
class Tables:
    """Everything the report prints, in report order."""

    answers: list[Table]
    summary: list[Table]
    model: Table
    crossovers: Table
    problems: Table
    runs: Table
    models: pd.DataFrame
    model_note: str = ""  # why there is no α–β table (too few sizes), shown in its place
    ddp: list[Table] = field(default_factory=list)  # one per model; empty without workload records
    # Figure section -> tables shown under it: hot vs cold (cache_state), stragglers (per rank).
    extra: dict[str, list[Table]] = field(default_factory=dict)

    @property
    def model_tables(self) -> list[Table]:
        """The α–β section's tables that say something (none: the section is left out, or says why)."""
        return [t for t in (self.model, self.crossovers) if not t.empty]

    def all(self) -> list[Table]:
        return [self.problems, *self.answers, *self.summary, self.model, self.crossovers, *self.ddp,
                *(t for ts in self.extra.values() for t in ts), self.runs]


def extra_tables(ds: Dataset) -> dict[str, list[Table]]:
    """The tables of the pandas modules: several MPIs side by side, hot vs cold cache, stragglers."""
    c = collectives(ds)
    out = {mpis.section(mpi_sides(c)): mpis.tables(c), cache_state.SECTION: cache_state.tables(ds.results),
           stragglers.SECTION: stragglers.tables(stragglers.frame(ds))}
    return {s: ts for s, ts in out.items() if ts}


def model_note(ds: Dataset, models: pd.DataFrame) -> str:
    """One line where no series had the sizes for an α–β fit (""), naming the rule and what the run has."""
    if len(models):
        return ""
    sizes = ds.results.loc[ds.results["measured"], "bytes"]
    have = f"{sizes.nunique()} size(s), {format_bytes(sizes.min())}–{format_bytes(sizes.max())}" if len(sizes) \
        else "no measured sizes"
    return (f"No α–β fit: a fit needs at least {MIN_FIT_SIZES} distinct sizes spanning at least "
            f"{MIN_FIT_SPAN:g}× per algorithm (to reach both the latency- and the bandwidth-bound regime, with "
            f"points left over to judge the fit); this run has {have}.")


def build_tables(ds: Dataset, workloads: Sequence[Workload] = ()) -> Tables:
    c = collectives(ds)
    models = fit_models(ds.results)
    node_aware = node_aware_table(ds)  # only when some multi-node layout has node-aware results
    answers = [best_per_size_table(c), backends_glance_table(c), custom_vs_library_table(c),
               within_vs_across_table(ds), step_tables.answer_table(workloads)]
    hardware = provenance.table(ds)  # issue 21: hardware, link rates and the --expect verdict per run
    return Tables(
        answers=[t for t in answers if t.rows],
        summary=[t.drop_blank_column("variant") for t in
                 (best_algorithm_table(c), backends_per_size_table(c), *([node_aware] if node_aware.rows else []),
                  peak_busbw_table(c),
                  small_latency_table(c), pingpong_table(ds), *([hardware] if hardware else []))
                 if not t.empty],  # a table of nothing but '—' is left out
        model=model_table(models).drop_blank_column("variant"),
        crossovers=crossover_table(measured_crossovers(ds.results), predicted_crossovers(models)).drop_blank_column(
            "variant"),
        problems=problems_table(ds),
        runs=runs_table(ds),
        models=models,
        model_note=model_note(ds, models),
        ddp=[*step_tables.measured_tables(measured_of(ds), workloads),
             *[t for t in (step_tables.algorithm_table(workloads),) if t.rows], *step_tables.tables(workloads)],
        extra=extra_tables(ds),
    )


def _sections(tables: Tables, figures: Sequence[FigureInfo]) -> list[str]:
    """Figure sections in order, plus the DDP section when it has tables but no figure."""
    sections = list(dict.fromkeys(f.section for f in figures if f.section != ANSWERS_SECTION))
    if tables.ddp and DDP_SECTION not in sections:
        sections.append(DDP_SECTION)
    sections += [s for s in tables.extra if s not in sections]
    return sections


# --------------------------------------------------------------------------- writers

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1280px;
     padding:0 1rem;color:#222;line-height:1.4}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2.2rem}
h3{margin:1.4rem 0 .4rem} .meta{color:#555} .note{color:#555;font-size:.9rem;margin:.2rem 0 .5rem}
table{border-collapse:collapse;font-size:.85rem;margin:.3rem 0 1rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;vertical-align:top}
th{background:#f3f4f6;text-align:left;position:sticky;top:0} tr:nth-child(even) td{background:#fafafa}
tr.bad td{background:#fde2e2;font-weight:600}
.warn{background:#fff7d6;border:1px solid #e6cf6e;padding:.5rem .8rem;border-radius:4px}
.answers{background:#f4f8fc;border:1px solid #c9dcf0;border-radius:6px;padding:.2rem 1rem .6rem}
figure{margin:1rem 0 2rem} figure img{max-width:100%;border:1px solid #e5e5e5}
figcaption{font-size:.9rem;color:#444} nav a{margin-right:1rem} details summary{cursor:pointer;color:#1f5fa8}
""" + NUM_CSS


def _html_table(t: Table) -> str:
    body = t.html()
    if len(t.rows) > _DETAILS_ROWS:
        return f"<details><summary>{html.escape(t.title)} ({len(t.rows)} rows)</summary>{body}</details>"
    return body


def _png_data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def link_lines(ds: Dataset) -> list[str]:
    """One line per multi-node layout with its runs' declared inter-node link(s).

    None when no multi-node run declared a link, as the figures then carry no note either.
    """
    multi = ds.results[ds.results["nodes"] > 1]
    per_layout = {layout: inter_node_links(g) for layout, g in multi.groupby("layout", sort=False)}
    if not any(any(links) for links in per_layout.values()):
        return []
    return [f"inter-node link, {layout}: {describe_links(links)}"
            for layout, links in sorted(per_layout.items(), key=lambda kv: layout_sort_key(kv[0]))]


def _overview(ds: Dataset) -> list[str]:
    r = ds.results
    layouts = sorted(r["layout"].unique(), key=layout_sort_key)
    return [
        f"{len(ds.files)} input file(s), {len(ds.runs)} run(s), {len(r)} points "
        f"({int(r['measured'].sum())} measured, {int(r['skipped'].sum())} skipped)",
        f"ops: {', '.join(sorted(r['op'].unique()))}; layouts: {', '.join(layouts)}",
        *link_lines(ds),
        "generated " + datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") + " by collplot",
    ]


ANSWERS = ANSWERS_SECTION
ANSWERS_LEAD = ("What the measurements say, before the detail: per op, the fastest algorithm at each size and "
                "layout, ties within noise marked; the tables and figures below back each answer up.")
BEST_GRID = "Best algorithm per size and layout"
MD_SLUG = "skipped-points-and-verification-failures"  # GitHub's anchor for the table's ### heading


def _figure_html(path: Path, f: FigureInfo) -> str:
    src = _png_data_uri(path.parent / f.filename)
    return (f"<figure><a href='{html.escape(f.filename)}'><img src='{src}' alt='{html.escape(f.filename)}'>"
            f"</a><figcaption>{html.escape(f.text)} "
            f"<a href='{html.escape(f.filename)}'>{html.escape(f.filename)}</a></figcaption></figure>")


def _wrong(ds: Dataset) -> bool:
    return bool((ds.results["wrong"] > 0).any())


def write_html(path: Path, title: str, ds: Dataset, tables: Tables, figures: Sequence[FigureInfo]) -> Path:
    sections = _sections(tables, figures)
    anchors = {s: "fig-" + "".join(c if c.isalnum() else "-" for c in s.lower()) for s in sections}
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p class='meta'>{html.escape(line)}</p>" for line in _overview(ds)]
    model = tables.model_tables
    nav = ["<a href='#answers'>Answers</a>", "<a href='#tables'>Summary tables</a>"]
    nav += ["<a href='#model'>α–β model</a>"] if model else []
    nav += [f"<a href='#{anchors[s]}'>{html.escape(s)}</a>" for s in sections]
    nav += ["<a href='#problems'>Skipped points</a>"] if tables.problems.rows else []
    parts.append("<nav>" + "".join(nav + ["<a href='#runs'>Runs</a>"]) + "</nav>")
    if ds.warnings:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in ds.warnings)
        parts.append(f"<div class='warn'><b>Input warnings</b><ul>{items}</ul></div>")
    loads = load_warnings(ds)
    if loads:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in loads)
        parts.append(f"<div class='warn'><b>Loaded machine</b><ul>{items}</ul></div>")
    problems_first = _wrong(ds)  # wrong results lead the page; skips are one line
    if problems_first:
        parts.append(f"<div id='{PROBLEMS_ID}'>{_html_table(tables.problems)}</div>")
    elif tables.problems.rows:
        parts.append(f"<p class='meta'>{html.escape(problems_line(ds))}: <a href='#{PROBLEMS_ID}'>which and why</a></p>")
    parts.append(f"<section class='answers'><h2 id='answers'>{ANSWERS}</h2><p class='note'>{html.escape(ANSWERS_LEAD)}</p>")
    charts = [f for f in figures if f.section == ANSWERS_SECTION]
    parts += [_figure_html(path, f) for f in charts]
    for t in tables.answers:
        if t.title == BEST_GRID and charts:  # the charts above say it; the rows one click below
            parts.append(f"<details><summary>{html.escape(t.title)}: the table ({len(t.rows)} rows)</summary>"
                         f"{t.html()}</details>")
        else:
            parts.append(t.html())
    if not tables.answers:
        parts.append("<p>No collective, point-to-point or DDP results to answer from.</p>")
    parts.append("</section><h2 id='tables'>Summary tables</h2>")
    parts += [_html_table(t) for t in tables.summary]
    if model:
        parts.append("<h2 id='model'>α–β model and crossovers</h2>")
        parts += [f"<p class='note'>{html.escape(tables.model_note)}</p>"] if tables.model_note else []
        parts += [_html_table(t) for t in model]
    for s in sections:
        parts.append(f"<h2 id='{anchors[s]}'>{html.escape(s)}</h2>")
        parts += [_html_table(t) for t in tables.ddp] if s == DDP_SECTION else []
        parts += [_html_table(t) for t in tables.extra.get(s, [])]
        parts += [_figure_html(path, f) for f in figures if f.section == s]
    if tables.problems.rows and not problems_first:
        parts.append(f"<h2 id='{PROBLEMS_ID}'>Skipped points</h2>" + _html_table(tables.problems))
    parts.append("<h2 id='runs'>Runs</h2>" + _html_table(tables.runs) + "</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _md_table(t: Table) -> str:
    """The table, or for one longer than the HTML report shows unfolded, a line saying where it is."""
    if len(t.rows) <= _DETAILS_ROWS:
        return t.markdown()
    return (f"### {t.title}\n\n{len(t.rows)} rows: in [report.html](report.html) (this summary keeps tables of up "
            f"to {_DETAILS_ROWS} rows).\n")


def write_markdown(path: Path, title: str, ds: Dataset, tables: Tables, figures: Sequence[FigureInfo]) -> Path:
    """The compact, GitHub-readable summary: the answers, the short tables, every figure with its caption.

    Tables longer than the HTML report shows unfolded (the per-size rows, the per-rank tables, the
    models) are one line pointing at report.html, which holds everything: the example run's summary
    was 312 KB of Markdown tables that repeated the report (docs/analysis.md "collplot").
    """
    lines = [f"# {title}", ""] + [f"- {line}" for line in _overview(ds)] + [""]
    if ds.warnings:
        lines += ["**Input warnings**", ""] + [f"- {w}" for w in ds.warnings] + [""]
    loads = load_warnings(ds)
    if loads:
        lines += ["**Loaded machine**", ""] + [f"- {w}" for w in loads] + [""]
    problems_first = _wrong(ds)
    if problems_first:
        lines.append(tables.problems.markdown())
    elif tables.problems.rows:
        lines += [f"{problems_line(ds)}: [which and why](#{MD_SLUG})", ""]
    lines += [f"## {ANSWERS}", "", ANSWERS_LEAD, ""]
    for f in (f for f in figures if f.section == ANSWERS_SECTION):
        lines += [f"![{f.filename}]({f.filename})", "", f"*{f.text}*", ""]
    lines += [_md_table(t) for t in tables.answers] or ["No collective, point-to-point or DDP results to answer from.", ""]
    lines += ["## Summary tables", ""]
    lines += [_md_table(t) for t in tables.summary]
    if tables.model_tables:
        lines += ["## α–β model and crossovers", ""] + ([tables.model_note, ""] if tables.model_note else [])
        lines += [_md_table(t) for t in tables.model_tables]
    for s in _sections(tables, figures):
        lines += [f"## {s}", ""]
        lines += [_md_table(t) for t in tables.ddp] if s == DDP_SECTION else []
        lines += [_md_table(t) for t in tables.extra.get(s, [])]
        for f in (f for f in figures if f.section == s):
            lines += [f"![{f.filename}]({f.filename})", "", f"*{f.text}*", ""]  # the caption once, below
    if tables.problems.rows and not problems_first:
        lines += [_md_table(tables.problems)]
    lines += ["## Runs", "", _md_table(tables.runs)]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
