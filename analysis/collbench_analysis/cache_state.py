"""Hot vs cold cache: the same points measured with ``--cache hot`` (every call reuses one
send/recv set, nccl-tests' convention) and ``--cache cold`` (each call takes the next set of a
pool larger than the last-level cache, as IMB's ``-off_cache``), side by side.

A point pairs with its twin by every identity field but ``cache`` (op, algo, backend, device,
dtype, redop, in_place, mode, buffers, layout, bytes); the last record of each wins, as
everywhere in the analysis. ``cold/hot`` = cold p50 / hot p50: how much of the hot number was
the cache's doing. Points measured only one way are left out of the table.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
from matplotlib import rc_context  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
import pandas as pd  # noqa: E402

from .load import Dataset, LoadError, format_bytes, load  # noqa: E402
from .palette import color_of  # noqa: E402
from .plots import DPI, STYLE, FigureInfo, apply_size_axis  # noqa: E402
from .tables import Table, fmt_num  # noqa: E402

SECTION = "Cache state: hot vs cold"
_TWIN = ["op", "algo", "backend", "device", "dtype", "redop", "in_place", "mode", "buffers", "layout", "bytes"]


def pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per point of ``frame`` (``Dataset.results``) measured both hot and cold: the twin
    fields, ``hot_us``, ``cold_us``, ``ratio`` (cold / hot) and ``pool_bytes`` (the cold pool per rank)."""
    m = frame[frame["measured"]]
    if m.empty or set(m["cache"]) != {"hot", "cold"}:
        return pd.DataFrame(columns=[*_TWIN, "hot_us", "cold_us", "ratio", "pool_bytes"])
    m = m.assign(pool_bytes=[(pool or {}).get("bytes") for pool in m["cache_pool"]])
    m = m.fillna({"redop": "-"}).drop_duplicates([*_TWIN, "cache"], keep="last")
    hot = m[m["cache"] == "hot"][[*_TWIN, "p50_us"]].rename(columns={"p50_us": "hot_us"})
    cold = m[m["cache"] == "cold"][[*_TWIN, "p50_us", "pool_bytes"]].rename(columns={"p50_us": "cold_us"})
    both = hot.merge(cold, on=_TWIN, how="inner")
    both["ratio"] = both["cold_us"] / both["hot_us"]
    return both.sort_values(["op", "layout", "algo", "bytes"]).reset_index(drop=True)


def table(frame: pd.DataFrame) -> Table:
    both = pairs(frame)
    varying = [f for f in ("backend", "device", "dtype", "redop", "in_place", "mode", "buffers")
               if both[f].nunique() > 1]
    headers = ["op", "algo", *varying, "layout", "size", "hot p50 (µs)", "cold p50 (µs)", "cold/hot", "cold pool"]
    rows = []
    for _, r in both.iterrows():
        pool = "—" if pd.isna(r["pool_bytes"]) else f"{int(r['pool_bytes']) / (1 << 20):.0f} MiB"
        rows.append([r["op"], r["algo"], *[str(r[f]) for f in varying], r["layout"], format_bytes(int(r["bytes"])),
                     fmt_num(r["hot_us"]), fmt_num(r["cold_us"]), f"{r['ratio']:.2f}×", pool])
    return Table.of("Hot vs cold cache (p50 per size)", headers, rows, align="l" * (3 + len(varying)) + "rrrrr",
                    note="hot: every call reuses one send/recv set (nccl-tests); cold: each call takes the next set "
                         "of a pool larger than the last-level cache (IMB -off_cache); cold/hot > 1: the hot number "
                         "was helped by the cache.")


def tables(frame: pd.DataFrame) -> list[Table]:
    t = table(frame)
    return [t] if t.rows else []


def make_figures(frame: pd.DataFrame, outdir: Path) -> list[FigureInfo]:
    """One PNG per layout: per op, p50 vs size, hot solid and cold dashed, one colour per algo."""
    both = pairs(frame)
    out: list[FigureInfo] = []
    for layout, by_layout in both.groupby("layout", sort=True):
        ops = sorted(by_layout["op"].unique())
        with rc_context(STYLE):
            fig = Figure(figsize=(4.6 * len(ops) + 1, 4.6), layout="constrained")
            axes = fig.subplots(1, len(ops), squeeze=False)[0]
            for ax, op in zip(axes, ops):
                sub = by_layout[by_layout["op"] == op]
                several = both["backend"].nunique() > 1  # a line per algo and backend, named by both
                for (algo, backend), s in sub.groupby(["algo", "backend"], sort=True):
                    colour = color_of(algo)  # the same as in every other figure
                    name = f"{algo} ({backend})" if several else algo
                    ax.plot(s["bytes"], s["hot_us"], "-o", color=colour, label=f"{name} hot")
                    ax.plot(s["bytes"], s["cold_us"], "--s", color=colour, label=f"{name} cold")
                apply_size_axis(ax, list(sub["bytes"]))
                ax.set_yscale("log")
                ax.set_title(f"{op}, {layout}")
                ax.set_xlabel("message size")
                ax.set_ylabel("p50 time (µs)")
                ax.legend(fontsize=8)
            name = f"cache_hot_cold_{layout}.png"
            fig.savefig(outdir / name, dpi=DPI)
        out.append(FigureInfo(SECTION, name, f"Hot vs cold cache, {layout}",
                              "p50 per size; solid: hot (one buffer set), dashed: cold (a pool larger than the LLC)."))
    return out


def summary_lines(frame: pd.DataFrame) -> Sequence[str]:
    """The table as text (the command line: ``python3 -m collbench_analysis.cache_state FILE...``)."""
    t = table(frame)
    return [t.text()] if t.rows else ["no point was measured both hot and cold"]


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python3 -m collbench_analysis.cache_state RESULTS.jsonl...", file=sys.stderr)
        return 2
    try:
        ds: Dataset = load(args)
    except LoadError as err:
        print(f"cache_state: error: {err}", file=sys.stderr)
        return 2
    print("\n".join(summary_lines(ds.results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
