"""The report's summary tables of measures: peak bus bandwidth, small-message latency, point-to-point
within and across nodes, and the α–β model with its crossovers."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..load import LIBRARY_ALGO, Dataset, format_bytes, latest, layout_sort_key, sort_layouts
from ..points import GROUP, report_order, size_cells, times_cells
from ..tables import BLANK, Table, fmt_col, fmt_num


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
