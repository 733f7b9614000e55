"""Efficiency figures: each point's ``efficiency`` (the time its necessary data movement takes
on the links it crosses, over its measured time; docs/measurement.md "Efficiency") as a percentage
of this machine, per op and layout, one line per algorithm. Works on ``Dataset.results``
(:mod:`.load`); collplot adds these figures to its report (section "Efficiency").
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .load import Dataset, backend_order, format_bytes  # noqa: E402
from .palette import color_of  # noqa: E402
from .plots import FigureInfo, apply_size_axis  # noqa: E402

SECTION = "Efficiency"


def efficiency_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Measured points with an efficiency, as a percentage; the median over runs per point."""
    have = df[df["efficiency"].notna() & ~df["skipped"] & (df["bytes"] > 0)].copy()
    have["percent"] = have["efficiency"].astype(float) * 100
    key = ["op", "layout", "algo", "backend", "dtype", "in_place", "bytes"]
    return have.groupby(key, as_index=False)["percent"].median()


def make_figures(ds: Dataset, outdir: Path) -> list[FigureInfo]:
    """One PNG per (op, layout, dtype, placement) that has efficiencies; none when no record has one."""
    eff = efficiency_frame(ds.results)
    # Several backends (an mpi and a gloo sweep in one file): a line per algorithm and backend, named
    # "ring (gloo)", the reference backend's lines solid and the others' dashed (as in the bandwidth figures).
    several = eff["backend"].nunique() > 1
    eff["label"] = eff["algo"] + " (" + eff["backend"] + ")" if several else eff["algo"]
    dashes = {b: "-" if i == 0 else "--" for i, b in enumerate(backend_order(eff["backend"]))}
    figs: list[FigureInfo] = []
    for (op, layout, dtype, in_place), grp in eff.groupby(["op", "layout", "dtype", "in_place"]):
        fig, ax = plt.subplots(figsize=(7.5, 4.2))
        for (algo, backend), line in grp.groupby(["algo", "backend"]):
            line = line.sort_values("bytes")
            style = {"linestyle": dashes[backend]} if several else {}
            ax.plot(line["bytes"], line["percent"], marker="o", markersize=3, label=line["label"].iloc[0],
                    color=color_of(algo), **style)
        apply_size_axis(ax, grp["bytes"].tolist())
        ax.axhline(100, color="#555555", linewidth=0.8, linestyle="--")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("efficiency (% of the links' time)")
        place = "in-place" if in_place else "out-of-place"
        ax.set_title(f"{op} efficiency, {layout}, {dtype} {place}")
        ax.legend(title="algorithm", fontsize=8)
        fig.tight_layout()
        name = f"efficiency_{op}_{layout.replace('+', 'p')}_{dtype}{'_inplace' if in_place else ''}.png"
        outdir.mkdir(parents=True, exist_ok=True)
        fig.savefig(outdir / name, dpi=110)
        plt.close(fig)
        best = grp.loc[grp["percent"].idxmax()]
        figs.append(FigureInfo(SECTION, name,
                               f"{op}, {layout}, {dtype} {place}: time of the necessary data movement on the "
                               f"measured links / p50 (100 % dashed); best {best['percent']:.0f} % "
                               f"({best['label']} at {format_bytes(best['bytes'])})."))
    return figs
