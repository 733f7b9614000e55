"""Stragglers: which rank, and which node, makes a collective slow (``--per-rank`` records).

A ``--per-rank`` result carries, rank x sample, when each rank finished (minus the agreed start,
or minus the earliest rank's start when barrier-started) and when it started
(results/README.md, ``per_rank``). Per point this module names:

- the **slowest rank**: the largest median finish time over the samples (the rank that ends the
  collective); the **slowest node**: the node (host) of that rank;
- whether that rank is **consistently slower** than the others. The rule, with n ranks and m
  samples (m >= ``MIN_SAMPLES``, else no verdict):

  1. it finished last in at least half of the samples, and that count is improbable if every
     rank were equally likely to finish last: the one-sided binomial tail
     P(X >= count | m, 1/n) < ``ALPHA`` (0.001); and
  2. its lead — per sample, its finish minus the latest other rank's, median over the samples —
     is larger than the noise: the largest of the other ranks' own spread (per sample the range
     of their finish times, median over the samples), the ranks' start spread (per sample the
     range of the start skews, median over the samples) and ``MATERIAL`` (10 %) of the largest
     median of the other ranks — a lead smaller than that costs the collective little.

  Rule 1 alone flags a rank that is last by a hair in every sample (a structural order: the
  last rank a barrier releases, a tree's leaves); rule 2 alone one noisy outlier. Both together
  say "last, in most samples, by more than the ranks differ anyway" — the straggler a user wants
  named. Per-sample leads cancel what slows every rank of a sample alike (a hiccup of the
  machine). A barrier-started rank released last leads by about its start skew, which the start
  spread covers; an algorithm's own asymmetry can still meet both rules at one point, so
  :func:`run_verdicts` counts, per run, the points and algorithms a rank was flagged in — a
  rank slowed by its node is flagged across algorithms.

Records whose matrices were left out (``ranks x samples`` above the cap) carry only the per-rank
summary: there rule 2 compares medians (the rank's p50 minus the largest other p50) with the
other ranks' median interquartile range, an approximation of the per-sample rule.

``python3 -m collbench_analysis.stragglers RESULTS.jsonl... [--heatmaps DIR]`` prints the table
and the run verdicts.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
from matplotlib import rc_context  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .load import Dataset, LoadError, format_bytes, load as load_dataset  # noqa: E402
from .plots import DPI, STYLE, FigureInfo  # noqa: E402
from .tables import Table, fmt_num  # noqa: E402

SECTION = "Stragglers (per rank)"
ALPHA = 0.001          # rule 1: binomial tail of the slowest-sample count
SLOWEST_SHARE = 0.5    # rule 1: slowest in at least this share of the samples
MIN_SAMPLES = 10       # fewer samples: no verdict
MATERIAL = 0.10        # rule 2: the noise floor is at least this share of the others' median
MAX_HEATMAPS = 6       # heat maps per report: flagged points first, then the largest gaps


@dataclass(frozen=True)
class Verdict:
    """One point's per-rank analysis."""

    slowest_rank: int
    slowest_host: str
    slowest_node: int
    slowest_share: float  # share of samples in which slowest_rank finished last
    p_value: float        # binomial tail of that count
    median_us: float      # slowest_rank's median finish time
    others_median_us: float  # the largest median among the other ranks
    gap_us: float         # rule 2's lead of slowest_rank over the others
    noise_us: float       # rule 2's noise floor
    samples: int
    flagged: bool
    reason: str           # why flagged or not, in words


def binomial_tail(k: int, m: int, p: Fraction) -> float:
    """P(X >= k) for X ~ Binomial(m, p), exactly (fractions), as a float."""
    if k <= 0:
        return 1.0
    q = 1 - p
    return float(sum(comb(m, j) * p ** j * q ** (m - j) for j in range(k, m + 1)))


def verdict(p50: Sequence[float], slowest: Sequence[int], samples: int, gap: float, noise: float,
            node_of_rank: Sequence[int], host_of_rank: Sequence[str], top: int | None = None) -> Verdict:
    """Rules 1 and 2 of the module docstring, given the slowest rank's lead and the noise floor."""
    n = len(p50)
    top = int(np.argmax(p50)) if top is None else top
    others_median = max((p50[r] for r in range(n) if r != top), default=0.0)
    count = int(slowest[top])
    share = count / samples if samples else 0.0
    p_value = binomial_tail(count, samples, Fraction(1, n)) if n > 1 else 1.0
    host = host_of_rank[top] if top < len(host_of_rank) else "?"
    node = node_of_rank[top] if top < len(node_of_rank) else -1
    if n < 2:
        flagged, reason = False, "one rank"
    elif samples < MIN_SAMPLES:
        flagged, reason = False, f"{samples} samples < {MIN_SAMPLES}: no verdict"
    elif share < SLOWEST_SHARE or p_value >= ALPHA:
        flagged, reason = False, f"last in {count}/{samples} samples (p = {p_value:.2g})"
    elif gap <= noise:
        flagged, reason = False, f"lead {gap:.3g} µs <= noise {noise:.3g} µs"
    else:
        flagged = True
        reason = f"last in {count}/{samples} samples (p = {p_value:.2g}), lead {gap:.3g} µs > noise {noise:.3g} µs"
    return Verdict(top, host, node, share, p_value, float(p50[top]), float(others_median), float(gap), float(noise),
                   samples, flagged, reason)


def analyse(p50: Sequence[float], p25: Sequence[float], p75: Sequence[float], slowest: Sequence[int], samples: int,
            node_of_rank: Sequence[int], host_of_rank: Sequence[str]) -> Verdict:
    """The rule on the per-rank summary only: medians' gap against the others' median IQR."""
    n = len(p50)
    top = int(np.argmax(p50))
    others = [r for r in range(n) if r != top]
    gap = p50[top] - max((p50[r] for r in others), default=0.0)
    noise = float(np.median([p75[r] - p25[r] for r in others])) if others else 0.0
    noise = max(noise, MATERIAL * max((p50[r] for r in others), default=0.0))
    return verdict(p50, slowest, samples, gap, noise, node_of_rank, host_of_rank, top)


def analyse_matrix(time_us: Sequence[Sequence[float]], node_of_rank: Sequence[int], host_of_rank: Sequence[str],
                   skew_us: Sequence[Sequence[float]] | None = None) -> Verdict:
    """The rule on rank x sample matrices of finish times (and start skews, when known)."""
    t = np.asarray(time_us, dtype=float)
    n, m = t.shape
    slowest = np.bincount(np.argmax(t, axis=0), minlength=n)  # ties: the lowest rank, as the C++ summary
    p50 = np.median(t, axis=1)
    top = int(np.argmax(p50))
    gap = noise = 0.0
    if n > 1 and m > 0:
        others = np.delete(t, top, axis=0)
        gap = float(np.median(t[top] - others.max(axis=0)))
        noise = float(np.median(others.max(axis=0) - others.min(axis=0)))
        if skew_us is not None:
            k = np.asarray(skew_us, dtype=float)
            noise = max(noise, float(np.median(k.max(axis=0) - k.min(axis=0))))
        noise = max(noise, MATERIAL * float(np.median(others, axis=1).max()))
    return verdict(list(p50), list(slowest), m, gap, noise, node_of_rank, host_of_rank, top)


def _run_hosts(run: Mapping[str, Any] | None, n: int) -> tuple[list[int], list[str]]:
    """Each rank's node and host from the run's row of ``Dataset.runs`` (None: no run record)."""
    if run is None:
        return [0] * n, ["?"] * n
    nodes = list(run.get("node_of_rank") or [0] * n)
    hosts = list(run.get("host_of_rank") or [])
    if len(hosts) != n:
        names = list(run.get("hosts") or [])
        hosts = [names[k] if k < len(names) else "?" for k in nodes]
    return nodes, hosts


def frame(ds: Dataset) -> pd.DataFrame:
    """One row per measured point with ``per_rank``: identity, the :class:`Verdict` fields and
    ``matrix`` (rank x sample finish times, or None when the record kept the summary only)."""
    rows: list[dict[str, Any]] = []
    m = ds.results[ds.results["measured"] & ds.results["per_rank"].notna()]
    for _, r in m.iterrows():
        pr = r["per_rank"]
        run = ds.runs.loc[r["run_id"]] if r["run_id"] in ds.runs.index else None
        nodes, hosts = _run_hosts(run, int(pr["ranks"]))
        if pr.get("time_us"):
            v = analyse_matrix(pr["time_us"], nodes, hosts, pr.get("start_skew_us"))
        else:
            s = pr["summary"]
            v = analyse(s["time_p50_us"], s["time_p25_us"], s["time_p75_us"], s["slowest_samples"],
                        int(pr["samples"]), nodes, hosts)
        rows.append({"where": r["source"], "run_id": r["run_id"], "op": r["op"], "algo": r["algo"], "bytes": r["bytes"],
                     "cache": r["cache"], "layout": r["layout"], "matrix": pr.get("time_us"),
                     "hosts": hosts, **v.__dict__})
    cols = ["where", "run_id", "op", "algo", "bytes", "cache", "layout", "matrix", "hosts", *Verdict.__dataclass_fields__]
    return pd.DataFrame(rows, columns=cols)


def run_verdicts(points: pd.DataFrame) -> pd.DataFrame:
    """Per run and rank flagged anywhere: how many of the run's per-rank points flag it, over how
    many (op, algo) pairs — a node-caused straggler is flagged across algorithms."""
    if points.empty:
        return pd.DataFrame(columns=["run_id", "rank", "host", "flagged", "points", "algos"])
    total = points.groupby("run_id").size().rename("points")
    f = points[points["flagged"]]
    if f.empty:
        return pd.DataFrame(columns=["run_id", "rank", "host", "flagged", "points", "algos"])
    g = f.groupby(["run_id", "slowest_rank", "slowest_host"]).agg(
        flagged=("flagged", "size"), algos=("algo", lambda a: len(set(zip(f.loc[a.index, "op"], a)))))
    g = g.reset_index().rename(columns={"slowest_rank": "rank", "slowest_host": "host"}).join(total, on="run_id")
    return g[["run_id", "rank", "host", "flagged", "points", "algos"]].sort_values(["run_id", "rank"])


def tables(points: pd.DataFrame) -> list[Table]:
    if points.empty:
        return []
    ordered = points.sort_values(["op", "algo", "bytes"])
    rows = [[r["op"], r["algo"], r["cache"], r["layout"], format_bytes(int(r["bytes"])),
             str(r["slowest_rank"]), f"{r['slowest_node']} ({r['slowest_host']})",
             f"{r['slowest_share']:.0%}", fmt_num(r["median_us"]), fmt_num(r["others_median_us"]),
             fmt_num(r["gap_us"]), fmt_num(r["noise_us"]),
             "yes: " + r["reason"] if r["flagged"] else "no: " + r["reason"]] for _, r in ordered.iterrows()]
    t = Table.of("Slowest rank per point (--per-rank)",
              ["op", "algo", "cache", "layout", "size", "slowest rank", "node (host)", "last in", "p50 (µs)",
               "others' max p50", "lead (µs)", "noise (µs)", "consistently slower"], rows,
              align="llllrrlrrrrrl", row_classes=["bad" if f else "" for f in ordered["flagged"]],
              note=f"finish times from the agreed (or earliest) start; consistently slower: last in >= "
                   f"{SLOWEST_SHARE:.0%} of the samples with binomial p < {ALPHA} against 1/n, and a median lead over "
                   "the latest other rank above the noise (the others' finish range, the start spread; "
                   "docs/analysis.md).")
    out = [t]
    v = run_verdicts(points)
    if not v.empty:
        out.append(Table.of("Ranks flagged as consistently slower, per run",
                            ["run", "rank", "host", "flagged in", "algorithms"],
                            [[str(r["run_id"]), str(r["rank"]), str(r["host"]), f"{r['flagged']}/{r['points']} points",
                              str(r["algos"])] for _, r in v.iterrows()], align="lrlrr",
                            note="a rank slowed by its node or core is flagged across algorithms; one flagged "
                                 "in a single algorithm only is more likely that algorithm's own asymmetry "
                                 "(e.g. the root of naive, which finishes after its last send)"))
    return out


def heatmap(row: Mapping[str, Any], outdir: Path) -> FigureInfo:
    """Rank x iteration heat map of one point's finish times (µs from the reference start)."""
    t = np.asarray(row["matrix"], dtype=float)
    name = f"stragglers_{row['op']}_{row['algo']}_{row['bytes']}_{row['cache']}_{str(row['run_id'])[:8]}.png"
    with rc_context(STYLE):
        fig = Figure(figsize=(9, 1.6 + 0.35 * t.shape[0]), layout="constrained")
        ax = fig.subplots()
        im = ax.imshow(t, aspect="auto", interpolation="nearest", cmap="viridis")
        ax.set_yticks(range(t.shape[0]), [f"rank {r} ({row['hosts'][r]})" for r in range(t.shape[0])])
        ax.set_xlabel("iteration (kept sample)")
        ax.grid(False)
        ax.set_title(f"{row['op']}/{row['algo']} {format_bytes(int(row['bytes']))}, {row['layout']}: finish time per rank")
        fig.colorbar(im, ax=ax, label="µs")
        fig.savefig(outdir / name, dpi=DPI)
    verdict = (f"rank {row['slowest_rank']} on {row['slowest_host']} is consistently slower ({row['reason']})"
               if row["flagged"] else f"slowest rank {row['slowest_rank']} ({row['slowest_host']}), not flagged")
    return FigureInfo(SECTION, name, f"{row['op']}/{row['algo']} {format_bytes(int(row['bytes']))} per rank",
                      verdict + ".")


def make_figures(points: pd.DataFrame, outdir: Path, limit: int = MAX_HEATMAPS) -> list[FigureInfo]:
    if points.empty:
        return []
    with_matrix = points[points["matrix"].notna()]
    chosen = with_matrix.sort_values(["flagged", "gap_us"], ascending=[False, False]).head(limit)
    return [heatmap(r, outdir) for _, r in chosen.iterrows()]


def load(paths: Sequence[str | Path]) -> pd.DataFrame:
    """:func:`frame` of the inputs (read and validated by :func:`.load.load`; raises ``LoadError``)."""
    return frame(load_dataset(paths))


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python3 -m collbench_analysis.stragglers",
                                 description="Name the slowest rank and node per --per-rank point.")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--heatmaps", type=Path, help="write rank x iteration heat maps (PNG) here")
    a = ap.parse_args(argv)
    try:
        points = load(a.results)
    except LoadError as err:
        print(f"stragglers: error: {err}", file=sys.stderr)
        return 2
    if points.empty:
        print("no --per-rank results")
        return 0
    for t in tables(points):
        print(t.title)
        print(t.text())
        print()
    if a.heatmaps:
        a.heatmaps.mkdir(parents=True, exist_ok=True)
        for f in make_figures(points, a.heatmaps):
            print(f"wrote {a.heatmaps / f.filename}: {f.note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
