"""``collcompare RESULTS --write-expect FILE``: an acceptance gate's expectation file from a good run.

Reads results (one or more runs), keeps the verified collective points, and writes one entry
per (op, algo, layout, dtype, placement, size): the reference is the point's median over runs
of ``busbw_GBps`` (``min_busbw_GBps``), or for small messages, which latency rather than
bandwidth bounds, of ``time_us.p50`` (``max_time_us``). Points the file cannot tell apart
(another redop, root, buffers or timing mode at the same key) share one entry holding the
weakest of their references. ``collbench --expect FILE`` then fails a later run whose point is
more than ``tolerance`` below (busbw) or above (time) it. Format: results/README.md
"Expectation files"; one entry per line, so collbench's messages name an entry's line.
"""
from __future__ import annotations

import datetime as _dt
import json
import sys
from pathlib import Path
import pandas as pd

from .load import Dataset, LoadError, load

SCHEMA = "collbench-expect/1"
SMALL_BYTES = 64 * 1024  # below: the reference is the time (auto metric)
METRICS = ("auto", "busbw", "time")
KEY = ["op", "algo", "layout", "dtype", "in_place", "bytes"]


def references(df: pd.DataFrame, metric: str = "auto") -> pd.DataFrame:
    """One row per KEY: ``metric`` (busbw or time) and ``reference``, from measured, verified points."""
    if metric not in METRICS:
        raise ValueError(f"metric {metric!r} is not one of {', '.join(METRICS)}")
    good = df[(df["op"] != "pingpong") & df["measured"] & (df["wrong"] == 0)].copy()
    if good.empty:
        return pd.DataFrame(columns=[*KEY, "per_node", "metric", "reference", "runs"])
    use_time = (good["bytes"] < SMALL_BYTES) if metric == "auto" else pd.Series(metric == "time", index=good.index)
    # 0 bytes has no bandwidth: always a time.
    good["metric"] = (use_time | (good["bytes"] == 0) | good["busbw_GBps"].isna()).map({True: "time", False: "busbw"})
    good["value"] = good["p50_us"].where(good["metric"] == "time", good["busbw_GBps"])
    variant = [*KEY, "metric", "redop", "root", "buffers", "mode"]
    good[["redop", "root"]] = good[["redop", "root"]].astype(object).fillna("-")
    per_variant = good.groupby(variant, dropna=False).agg(value=("value", "median"), runs=("run_id", "nunique"),
                                                          per_node=("per_node", "first")).reset_index()
    # The weakest variant: the lowest busbw, the longest time.
    per_variant["weak"] = per_variant["value"].where(per_variant["metric"] == "time", -per_variant["value"])
    weakest = per_variant.sort_values("weak", ascending=False).groupby([*KEY, "metric"], as_index=False).first()
    weakest = weakest.rename(columns={"value": "reference"})
    order = {op: i for i, op in enumerate(("broadcast", "reduce", "allreduce", "gather", "allgather", "scatter",
                                           "reduce_scatter", "alltoall"))}
    weakest["op_order"] = weakest["op"].map(order).fillna(99)
    weakest = weakest.sort_values(["op_order", "layout", "algo", "dtype", "in_place", "bytes"])
    return weakest[[*KEY, "per_node", "metric", "reference", "runs"]].reset_index(drop=True)


def _number(v: float) -> str:
    return f"{v:.6g}"


def _entry_line(row: pd.Series) -> str:
    layout = f"[{', '.join(map(str, row['per_node']))}]" if isinstance(row["per_node"], tuple) else row["layout"]
    ref = (f"max_time_us: {_number(row['reference'])}" if row["metric"] == "time"
           else f"min_busbw_GBps: {_number(row['reference'])}")
    return (f"  - {{op: {row['op']}, algo: {row['algo']}, layout: {layout}, dtype: {row['dtype']}, "
            f"in_place: {'true' if row['in_place'] else 'false'}, bytes: {int(row['bytes'])}, {ref}}}")


def write_expect(out: Path, ds: Dataset, tolerance: float, metric: str = "auto") -> int:
    """Write the expectation file from ``ds`` (every result, not only the latest per point: the
    reference is the median over runs); return its entry count. Raises LoadError when no point qualifies."""
    df = ds.results
    refs = references(df, metric)
    if refs.empty:
        raise LoadError("no measured, verified collective point to take references from")
    runs = sorted(df["run_id"].dropna().unique())
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        "# collbench expectation file: per point, the minimum busbw or maximum p50 time a run must reach",
        "# format: results/README.md \"Expectation files\"; use: collbench --expect FILE (exit 5 when below)",
        f"# references: the median over {len(runs)} run(s); below {SMALL_BYTES // 1024} KiB the p50 time "
        f"(metric {metric}), else busbw",
        f"schema: {SCHEMA}",
        f"generated: \"{when}\"",
        "tool: collcompare --write-expect",
        f"sources: [{', '.join(json.dumps(s) for s in sorted({w.rsplit(':', 1)[0] for w in df['source']}))}]",
        f"runs: [{', '.join(runs)}]",
        f"tolerance: {_number(tolerance * 100)}%",
        "entries:",
    ]
    lines += [_entry_line(row) for _, row in refs.iterrows()]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(out)  # never a half-written gate
    return len(refs)


def cli(args) -> int:
    """collcompare's --write-expect: args.before is RESULTS, args.write_expect the file (exit 0 or 2)."""
    if args.after is not None:
        print("collcompare: error: --write-expect takes one RESULTS input (the good run), not two", file=sys.stderr)
        return 2
    try:
        n = write_expect(args.write_expect, load([args.before]), args.expect_tolerance, args.expect_metric)
    except LoadError as err:
        print(f"collcompare: error: {err}", file=sys.stderr)
        return 2
    print(f"collcompare: wrote {args.write_expect}: {n} expectation(s), tolerance {args.expect_tolerance:.0%} "
          f"(collbench --expect {args.write_expect})")
    return 0
