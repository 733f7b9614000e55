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
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .ddp import SECTION as DDP_SECTION, Workload, answer_table as ddp_answer_table, tables as ddp_tables
from .load import (
    HAN_ALGO, LIBRARY_ALGO, Dataset, describe_links, format_bytes, frame_note, inter_node_links, is_library_internal,
    latest, layout_sort_key, sort_layouts, views,
)
from .model import fit_models, measured_crossovers, predicted_crossovers, series_of
from .plots import FigureInfo
from .tables import BLANK, NUM_CSS, Table, fmt_col, fmt_num

_DETAILS_ROWS = 40  # longer tables fold into <details> in the HTML report
GROUP = ["op", "layout", "variant"]


def collectives(ds: Dataset) -> pd.DataFrame:
    """Latest measured collective point per identity, with ``variant`` and ``series``, in report order."""
    c = views(ds.results[~ds.results["is_p2p"]])
    c["series"] = series_of(c)
    return sort_layouts(c, ["op", "layout", "variant"])


def _sizes(values: pd.Series) -> list[str]:
    return [format_bytes(v) for v in values]


def _times(values: pd.Series) -> list[str]:
    return [BLANK if pd.isna(v) else f"{v:.2f}×" for v in values]


def _order(df: pd.DataFrame, extra: Sequence[str] = ("bytes",)) -> pd.DataFrame:
    return sort_layouts(df, [*GROUP, *extra])


# --------------------------------------------------------------------------- detailed tables

def ranked(c: pd.DataFrame) -> pd.DataFrame:
    """Per (op, layout, variant, size): the best (lowest p50) point, its runner-up and the library's busbw."""
    keys = [*GROUP, "bytes"]
    r = c.sort_values("p50_us", kind="stable")
    r["rank"] = r.groupby(keys, sort=False).cumcount()
    best = r[r["rank"] == 0]
    second = r[r["rank"] == 1][[*keys, "series", "p50_us"]].rename(columns={"series": "second", "p50_us": "second_p50"})
    lib = c[c["algo"] == LIBRARY_ALGO][[*keys, "backend", "busbw_GBps", "p50_us"]].drop_duplicates(
        [*keys, "backend"], keep="last").rename(columns={"busbw_GBps": "lib_busbw", "p50_us": "lib_p50"})
    out = best.merge(second, on=keys, how="left").merge(lib, on=[*keys, "backend"], how="left")
    return _order(out)


def best_algorithm_table(c: pd.DataFrame) -> Table:
    r = ranked(c)
    margin = (r["second_p50"] / r["p50_us"].where(r["p50_us"] > 0) - 1) * 100
    frame = pd.DataFrame({
        "op": r["op"], "layout": r["layout"], "variant": r["variant"].replace("", BLANK), "size": _sizes(r["bytes"]),
        "best": r["series"], "p50 (µs)": fmt_col(r["p50_us"]), "busbw (GB/s)": fmt_col(r["busbw_GBps"]),
        "runner-up": r["second"].fillna(BLANK),
        "margin": [BLANK if pd.isna(m) else f"{m:.1f}%" for m in margin],
        "vs library": _times(r["busbw_GBps"] / r["lib_busbw"].where(r["lib_busbw"] > 0))})
    return Table("Best algorithm per (op, layout, size)", frame.reset_index(drop=True), align="lllrlrrlrr",
                 note="Lowest p50 time wins. margin = how much slower the runner-up is; "
                      "vs library = best busbw ÷ library busbw (same backend).")


# Node-aware vs flat. Names, not registry metadata, decide (results carry only the name):
HIER_PREFIX = "hier"  # the node-aware schedules: allreduce hier_ring / hier_leader, broadcast hier, allgather hier
# Not flat candidates: the libraries (their own choice and han compared in columns of their own, library:ALGO
# not custom at all); auto (runs what a tuning file names, possibly a hier one); shm (zero-copy within one node
# only, never a whole multi-node collective). Every other custom algorithm (ring, rabenseifner, tree, ...) is
# flat: node-blind.
NOT_FLAT = frozenset({LIBRARY_ALGO, "auto", "shm"})


def is_node_aware(algo: str) -> bool:
    return algo.startswith(HIER_PREFIX)


def is_flat(algo: str) -> bool:
    """A node-blind custom algorithm: what the node-aware ones have to beat."""
    return not is_node_aware(algo) and algo not in NOT_FLAT and not is_library_internal(algo)


NODE_AWARE_KEYS = ["op", "layout", "variant", "backend", "bytes"]


def node_aware_rows(ds: Dataset) -> pd.DataFrame:
    """Per multi-node (op, layout, variant, backend, size) where a node-aware algorithm was measured.

    Columns: the keys; ``hier`` ((algo, p50) of every node-aware algorithm, fastest first),
    ``best_hier``, ``flat`` / ``flat_p50`` (the fastest flat algorithm), ``library``, ``han``
    (p50s, NaN where not measured) and ``flat_ratio``, ``library_ratio``, ``han_ratio`` (each
    p50 ÷ the best node-aware p50: > 1 means node-aware is faster). Points are compared within
    one backend only (a library's NCCL time says nothing about MPI schedules).
    """
    c = collectives(ds)
    multi = c[c["nodes"] > 1]
    p50 = multi.pivot_table(index=NODE_AWARE_KEYS, columns="algo", values="p50_us", aggfunc="last")
    hier_cols = [a for a in p50.columns if is_node_aware(a)]
    flat_cols = [a for a in p50.columns if is_flat(a)]
    p50 = p50[p50[hier_cols].notna().any(axis=1)] if hier_cols else p50.iloc[0:0]
    out = pd.DataFrame(index=p50.index)
    out["hier"] = [tuple(sorted(((a, t) for a, t in row.items() if pd.notna(t)), key=lambda at: (at[1], at[0])))
                   for _, row in p50[hier_cols].iterrows()]
    out["best_hier"] = p50[hier_cols].min(axis=1) if hier_cols else np.nan
    has_flat = p50[flat_cols].notna().any(axis=1) if flat_cols else pd.Series(False, index=p50.index)
    out["flat"] = p50[flat_cols].idxmin(axis=1).where(has_flat) if flat_cols and len(p50) else None
    out["flat_p50"] = p50[flat_cols].min(axis=1) if flat_cols else np.nan
    for algo, col in ((LIBRARY_ALGO, "library"), (HAN_ALGO, "han")):
        out[col] = p50[algo] if algo in p50.columns else np.nan
    best = out["best_hier"].where(out["best_hier"] > 0)
    for col in ("flat", "library", "han"):
        out[f"{col}_ratio"] = out["flat_p50" if col == "flat" else col] / best
    return _order(out.reset_index())


def node_aware_table(ds: Dataset) -> Table:
    """Issue 19's question, one row per multi-node size: do the hier algorithms beat what a user has anyway?

    Empty (and left out of the report) without node-aware results on a multi-node layout. Columns
    nobody measured (han, a second backend, a variant) are dropped to keep the table narrow.
    """
    r = node_aware_rows(ds)
    c = collectives(ds)
    compared = c.merge(r[NODE_AWARE_KEYS], on=NODE_AWARE_KEYS)
    links = frame_note(compared)
    note = ("p50 times. node-aware: the hier* algorithms, fastest first; best flat: the fastest node-blind custom "
            "algorithm (not library, library:ALGO, han, auto or the single-node shm); library: the backend's own call (MPI: "
            "Open MPI's default choice); han: Open MPI's hierarchical coll/han. Ratios are p50 ÷ the best "
            "node-aware p50: > 1 means node-aware is faster.")
    frame = pd.DataFrame({
        "op": r["op"], "layout": r["layout"], "variant": r["variant"].replace("", BLANK),
        "backend": r["backend"] if r["backend"].nunique() > 1 else BLANK, "size": _sizes(r["bytes"]),
        "node-aware p50 (µs)": [", ".join(f"{a} {fmt_num(v)}" for a, v in h) for h in r["hier"]],
        "best flat": r["flat"].fillna(BLANK), "flat p50 (µs)": fmt_col(r["flat_p50"]),
        "library p50 (µs)": fmt_col(r["library"]), "han p50 (µs)": fmt_col(r["han"]),
        "flat ÷ hier": _times(r["flat_ratio"]), "library ÷ hier": _times(r["library_ratio"]),
        "han ÷ hier": _times(r["han_ratio"])})
    t = Table("Node-aware vs flat", frame, align="llllrllrrrrrr",
              note=note + (f" {links.rstrip('.')}." if links else ""))
    for header in ("variant", "backend", "han p50 (µs)", "han ÷ hier"):
        t.drop_blank_column(header)
    return t


def peak_busbw_table(c: pd.DataFrame) -> Table:
    peaks = c.loc[c.groupby([*GROUP, "series"], sort=False)["busbw_GBps"].idxmax()]
    lib = peaks[peaks["algo"] == LIBRARY_ALGO][[*GROUP, "backend", "busbw_GBps"]].rename(
        columns={"busbw_GBps": "lib_peak"})
    peaks = peaks.merge(lib, on=[*GROUP, "backend"], how="left")
    peaks["neg"] = -peaks["busbw_GBps"]
    peaks = _order(peaks, ["neg"])
    rel = (peaks["busbw_GBps"] / peaks["lib_peak"]).where(peaks["algo"] != LIBRARY_ALGO)
    frame = pd.DataFrame({"op": peaks["op"], "layout": peaks["layout"], "variant": peaks["variant"].replace("", BLANK),
                          "algorithm": peaks["series"], "peak busbw (GB/s)": fmt_col(peaks["busbw_GBps"]),
                          "at size": _sizes(peaks["bytes"]), "vs library peak": _times(rel)})
    return Table("Peak bus bandwidth per (op, algo, layout)", frame, align="llllrrr")


def small_latency_table(c: pd.DataFrame) -> Table:
    first = c.sort_values("bytes", kind="stable").drop_duplicates([*GROUP, "series"])
    first = _order(first, ["p50_us"])
    frame = pd.DataFrame({"op": first["op"], "layout": first["layout"], "variant": first["variant"].replace("", BLANK),
                          "algorithm": first["series"], "size": _sizes(first["bytes"]),
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
    return Table("Crossovers: where the fastest algorithm changes", frame, align="lllllll",
                 note="measured: between two consecutive measured sizes; predicted: intersection of the fitted "
                      "α–β lines.")


def problems_table(ds: Dataset) -> Table:
    """Skipped points and verification failures: the things a reader must not miss (wrong results first)."""
    r = ds.results.assign(series=series_of(ds.results))
    keys = ["op", "series", "layout"]
    bad = r[r["wrong"] > 0].groupby(keys, sort=False).agg(
        points=("wrong", "size"), wrong=("wrong", "sum"),
        sizes=("bytes", lambda b: ", ".join(_sizes(sorted(set(b))[:6])))).reset_index()
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
    return Table("Skipped points and verification failures", frame, align="llllrl",
                 row_classes=["bad"] * len(bad) + [""] * len(skipped))


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
        "argv": [" ".join(a) if a else BLANK for a in runs["argv"]]})
    return Table("Runs", frame.reset_index(drop=True), align="l" * 12).drop_blank_column("inter-node link")


# --------------------------------------------------------------------------- the answers

def best_per_size_table(c: pd.DataFrame) -> Table:
    """The fastest algorithm per size (rows) and layout (columns), one block per op."""
    r = ranked(c)
    r["algorithm"] = r["series"] if r["backend"].nunique() > 1 else r["algo"]
    grid = r.pivot_table(index=["op", "variant", "bytes"], columns="layout", values="algorithm", aggfunc="first")
    layouts = sorted(grid.columns, key=layout_sort_key)
    grid = grid[layouts].reset_index()
    frame = pd.DataFrame({"op": grid["op"], "variant": grid["variant"].replace("", BLANK),
                          "size": _sizes(grid["bytes"]), **{lay: grid[lay].fillna(BLANK) for lay in layouts}})
    return Table("Best algorithm per size and layout", frame, align="llr" + "l" * len(layouts),
                 note="The algorithm with the lowest p50 time at each size (columns: layouts, nodes × ranks per "
                      "node). Margins, runner-ups and bandwidths: 'Best algorithm per (op, layout, size)' below."
                 ).drop_blank_column("variant")


def custom_vs_library(c: pd.DataFrame) -> pd.DataFrame:
    """Per (op, layout, variant, backend): how the custom algorithms fare against the library, size by size.

    speed-up = library p50 ÷ the other's p50 at the sizes both were measured (> 1: the other is faster).
    "library" is the plain ``library`` entry (the library's own choice); the library's internals
    (``library:ALGO``, ``han``: :func:`.load.is_library_internal`) are the library's code, so they
    are summarised apart (``internal_*``) and never count as a custom algorithm beating it.
    """
    keys = [*GROUP, "backend"]
    lib = c[c["algo"] == LIBRARY_ALGO][[*keys, "bytes", "p50_us"]].drop_duplicates([*keys, "bytes"], keep="last")
    vs = c[c["algo"] != LIBRARY_ALGO].merge(lib, on=[*keys, "bytes"], suffixes=("", "_lib"))
    vs["speedup"] = vs["p50_us_lib"] / vs["p50_us"].where(vs["p50_us"] > 0)
    vs["internal"] = vs["algo"].map(is_library_internal).astype(bool)
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
            row.update({f"{prefix}sizes": len(per_size), f"{prefix}wins": int((per_size > 1).sum()),
                        f"{prefix}best": top, f"{prefix}best_median": per_algo.at[top, "median"]})
            if not prefix:
                peak = part.loc[part["speedup"].idxmax()]
                row.update(best_min=per_algo.at[top, "min"], best_max=per_algo.at[top, "max"],
                           peak_algo=peak["algo"], peak=peak["speedup"], peak_bytes=peak["bytes"])
        rows.append(row)
    cols = [*keys, "sizes", "wins", "best", "best_median", "best_min", "best_max", "peak_algo", "peak", "peak_bytes",
            "internal_sizes", "internal_wins", "internal_best", "internal_best_median"]
    return _order(pd.DataFrame(rows, columns=cols), ["backend"])


def custom_vs_library_table(c: pd.DataFrame) -> Table:
    s = custom_vs_library(c)
    has = s["best"].notna()
    internal = s["internal_best"].notna()
    frame = pd.DataFrame({
        "op": s["op"], "layout": s["layout"], "variant": s["variant"].replace("", BLANK),
        "backend": s["backend"] if s["backend"].nunique() > 1 else BLANK,
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
              note="library: the plain library entry (the library's own choice of algorithm). speed-up = library "
                   "p50 ÷ custom p50 at the same size (> 1: the custom algorithm is faster). best custom overall: "
                   "the highest median speed-up over the sizes both measured. Library internals (library:ALGO, one "
                   "of the library's algorithms forced; han, Open MPI's coll/han) are the library's own code: "
                   "shown apart, the best of them by the same median, never counted as a custom win.")
    for header in ("variant", "backend", "library internals (best, median; faster at)"):
        t.drop_blank_column(header)
    return t


def within_vs_across_table(ds: Dataset) -> Table:
    """One row per layout with both intra- and inter-node pairs: what crossing a node boundary costs."""
    s = pingpong_summary(ds).set_index(["layout", "link"])
    rows = []
    for layout in sorted({lay for lay, _ in s.index}, key=layout_sort_key):
        if (layout, "intra") not in s.index or (layout, "inter") not in s.index:
            continue
        a, e = s.loc[(layout, "intra")], s.loc[(layout, "inter")]
        rows.append([layout, BLANK if pd.isna(a["lat_bytes"]) else format_bytes(a["lat_bytes"]), fmt_num(a["lat"]),
                     fmt_num(e["lat"]), _times(pd.Series([e["lat"] / a["lat"]]))[0],
                     BLANK if pd.isna(a["bw_bytes"]) else format_bytes(a["bw_bytes"]), fmt_num(a["bw"]),
                     fmt_num(e["bw"]), _times(pd.Series([a["bw"] / e["bw"] if e["bw"] else np.nan]))[0]])
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
    ddp: list[Table] = field(default_factory=list)  # one per model; empty without workload records
    # Figure section -> tables shown under it: hot vs cold (cache_state), stragglers (per rank).
    extra: dict[str, list[Table]] = field(default_factory=dict)

    def all(self) -> list[Table]:
        return [self.problems, *self.answers, *self.summary, self.model, self.crossovers, *self.ddp,
                *(t for ts in self.extra.values() for t in ts), self.runs]


def extra_tables(ds: Dataset) -> dict[str, list[Table]]:
    """The tables of the pandas modules: hot vs cold cache, stragglers."""
    from . import cache_state, stragglers

    out = {cache_state.SECTION: cache_state.tables(ds.results), stragglers.SECTION: stragglers.tables(
        stragglers.frame(ds))}
    return {s: ts for s, ts in out.items() if ts}


def build_tables(ds: Dataset, workloads: Sequence[Workload] = ()) -> Tables:
    c = collectives(ds)
    models = fit_models(ds.results)
    node_aware = node_aware_table(ds)  # only when some multi-node layout has node-aware results
    answers = [best_per_size_table(c), custom_vs_library_table(c), within_vs_across_table(ds),
               ddp_answer_table(workloads)]
    from . import provenance  # issue 21: hardware, link rates and the --expect verdict per run
    hardware = provenance.table(ds)
    return Tables(
        answers=[t for t in answers if t.rows],
        summary=[t.drop_blank_column("variant") for t in
                 (best_algorithm_table(c), *([node_aware] if node_aware.rows else []), peak_busbw_table(c),
                  small_latency_table(c), pingpong_table(ds), *([hardware] if hardware else []))],
        model=model_table(models).drop_blank_column("variant"),
        crossovers=crossover_table(measured_crossovers(ds.results), predicted_crossovers(models)).drop_blank_column(
            "variant"),
        problems=problems_table(ds),
        runs=runs_table(ds),
        models=models,
        ddp=ddp_tables(workloads),
        extra=extra_tables(ds),
    )


def _sections(tables: Tables, figures: Sequence[FigureInfo]) -> list[str]:
    """Figure sections in order, plus the DDP section when it has tables but no figure."""
    sections = list(dict.fromkeys(f.section for f in figures))
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


ANSWERS = "Answers"
ANSWERS_LEAD = "What the measurements say, before the detail; the tables and figures below back each answer up."


def write_html(path: Path, title: str, ds: Dataset, tables: Tables, figures: Sequence[FigureInfo]) -> Path:
    sections = _sections(tables, figures)
    anchors = {s: "fig-" + "".join(c if c.isalnum() else "-" for c in s.lower()) for s in sections}
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p class='meta'>{html.escape(line)}</p>" for line in _overview(ds)]
    nav = ["<a href='#answers'>Answers</a>", "<a href='#tables'>Summary tables</a>", "<a href='#model'>α–β model</a>"]
    nav += [f"<a href='#{anchors[s]}'>{html.escape(s)}</a>" for s in sections] + ["<a href='#runs'>Runs</a>"]
    parts.append("<nav>" + "".join(nav) + "</nav>")
    if ds.warnings:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in ds.warnings)
        parts.append(f"<div class='warn'><b>Input warnings</b><ul>{items}</ul></div>")
    if tables.problems.rows:
        parts.append(_html_table(tables.problems))
    parts.append(f"<section class='answers'><h2 id='answers'>{ANSWERS}</h2><p class='note'>{html.escape(ANSWERS_LEAD)}</p>")
    parts += [t.html() for t in tables.answers] or ["<p>No collective, point-to-point or DDP results to answer from.</p>"]
    parts.append("</section><h2 id='tables'>Summary tables</h2>")
    parts += [_html_table(t) for t in tables.summary]
    parts.append("<h2 id='model'>α–β model and crossovers</h2>")
    parts += [_html_table(tables.model), _html_table(tables.crossovers)]
    for s in sections:
        parts.append(f"<h2 id='{anchors[s]}'>{html.escape(s)}</h2>")
        parts += [_html_table(t) for t in tables.ddp] if s == DDP_SECTION else []
        parts += [_html_table(t) for t in tables.extra.get(s, [])]
        for f in (f for f in figures if f.section == s):
            src = _png_data_uri(path.parent / f.filename)
            parts.append(f"<figure><a href='{html.escape(f.filename)}'><img src='{src}' alt='{html.escape(f.filename)}'>"
                         f"</a><figcaption>{html.escape(f.text)} "
                         f"<a href='{html.escape(f.filename)}'>{html.escape(f.filename)}</a></figcaption></figure>")
    parts.append("<h2 id='runs'>Runs</h2>" + _html_table(tables.runs) + "</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def write_markdown(path: Path, title: str, ds: Dataset, tables: Tables, figures: Sequence[FigureInfo]) -> Path:
    lines = [f"# {title}", ""] + [f"- {line}" for line in _overview(ds)] + [""]
    if ds.warnings:
        lines += ["**Input warnings**", ""] + [f"- {w}" for w in ds.warnings] + [""]
    if tables.problems.rows:
        lines.append(tables.problems.markdown())
    lines += [f"## {ANSWERS}", "", ANSWERS_LEAD, ""]
    lines += [t.markdown() for t in tables.answers] or ["No collective, point-to-point or DDP results to answer from.", ""]
    lines += ["## Summary tables", ""]
    lines += [t.markdown() for t in tables.summary]
    lines += ["## α–β model and crossovers", "", tables.model.markdown(), tables.crossovers.markdown()]
    for s in _sections(tables, figures):
        lines += [f"## {s}", ""]
        lines += [t.markdown() for t in tables.ddp] if s == DDP_SECTION else []
        lines += [t.markdown() for t in tables.extra.get(s, [])]
        for f in (f for f in figures if f.section == s):
            lines += [f"![{f.caption}]({f.filename})", "", f"*{f.text}*", ""]
    lines += ["## Runs", "", tables.runs.markdown()]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
