"""Figures for collplot: bandwidth, latency, custom-vs-library, p2p, scaling.

Uses matplotlib's object API (``Figure`` + Agg canvas), never pyplot, so no
global figure registry grows and nothing has to be closed. Every figure helper
takes one group of the results frame (pandas) and writes exactly one PNG; every
figure's caption says what to read in it.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import matplotlib
import matplotlib.patches
import numpy as np
import pandas as pd

matplotlib.use("Agg")
from matplotlib import rc_context  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: E402

from .load import (  # noqa: E402
    Dataset, backend_order, format_bytes, frame_note, layout_sort_key, library_internal, sort_layouts, views,
)
from .palette import color_of, marker_of, text_color_on  # noqa: E402
from .ranking import decide_sizes  # noqa: E402

SMALL_MSG_LIMIT = 64 * 1024
# Figures sized to the data (docs/analysis.md "collplot"). The bandwidth figure is drawn for every
# (op, layout, variant); the ones that look at the same points again from another side only where
# they add something. Latency: at least MIN_CURVE_SIZES sizes up to SMALL_MSG_LIMIT (through two
# points a line shows no shape). The ratio to the library with a single custom line, and the
# answers chart of a single layout: from MIN_FIGURE_SIZES sizes on; below that the report's tables
# (the best algorithm with its ratio to the library, the answers per size) hold every number such a
# figure would draw.
MIN_CURVE_SIZES = 3
MIN_FIGURE_SIZES = 5
DPI = 110
STYLE: dict[str, Any] = {
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10.5,
    "legend.fontsize": 9,
    "legend.framealpha": 0.9,
    "axes.grid": True,
    "axes.grid.which": "both",
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "savefig.dpi": DPI,
    "savefig.facecolor": "white",
}
_MARKERS = "osD^v<>ph*XP"
_LINESTYLES = ("-", "--", "-.", ":")
_LINK_COLORS = {"intra": "#1f77b4", "inter": "#d62728"}


@dataclass(frozen=True)
class FigureInfo:
    """One written PNG and where it belongs in the report."""

    section: str
    filename: str
    caption: str  # one line: what the figure shows and what to read in it
    note: str = ""  # the figure's footnote (the inter-node link), also shown under it in the report

    @property
    def text(self) -> str:
        """Caption plus note: what the report prints under the figure."""
        return f"{self.caption} {self.note.rstrip('.')}." if self.note else self.caption


@dataclass(frozen=True)
class Style:
    """Stable visual identity per algorithm (:mod:`.palette`: the same in every figure) and per backend
    (solid lines for the reference backend, :func:`.load.backend_order`; dashed, dash-dotted … the others).

    ``kw(..., lead=True)`` draws one of a figure's best algorithms bold and on top, ``lead=False``
    the others thinner and lighter, so the lines that matter are the ones the eye finds first.
    """

    linestyles: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_frame(cls, df: pd.DataFrame) -> "Style":
        return cls({b: _LINESTYLES[i % len(_LINESTYLES)] for i, b in enumerate(backend_order(df["backend"]))})

    @staticmethod
    def color(algo: str) -> str:
        return color_of(algo)

    def kw(self, algo: str, backend: str, lead: bool | None = None) -> dict[str, Any]:
        library = algo == "library"
        out: dict[str, Any] = {
            "color": color_of(algo),
            "marker": marker_of(algo),
            "linestyle": self.linestyles.get(backend, "-"),
            "linewidth": 2.4 if library else 1.8,
            "zorder": 3 if library else 2,
        }
        if lead:
            out.update(linewidth=2.8, zorder=5, markersize=6)
        elif lead is not None and not library:
            out.update(linewidth=1.2, alpha=0.5, markersize=3.5)
        return out


def best_counts(g: pd.DataFrame) -> dict[tuple[str, str], int]:
    """Per (algo, backend) line: at how many of the figure's sizes it is the answer by the shared rule
    (:mod:`.ranking`, colltune's): the fastest, or the simplest algorithm tied with it within its spread."""
    pts = g[g["measured"]] if "measured" in g else g
    line = pts["algo"] + " (" + pts["backend"] + ")"
    of = dict(zip(line, zip(pts["algo"], pts["backend"])))
    counts: dict[tuple[str, str], int] = {}
    for ch in decide_sizes(pts.assign(_line=line), ["bytes"], name="_line").values():
        counts[of[ch.choice.algo]] = counts.get(of[ch.choice.algo], 0) + 1
    return counts


def _lead_order(series: list, counts: dict[tuple[str, str], int]) -> list:
    """Lines in legend order: the most often best first, then the library, then by name."""
    return sorted(series, key=lambda t: (-counts.get((t[0], t[1]), 0), t[0] != "library", t[0], t[1]))


def _lead_label(label: str, algo: str, backend: str, counts: dict[tuple[str, str], int], sizes: int) -> str:
    k = counts.get((algo, backend), 0)
    return f"{label}: best at {k} of {sizes} sizes" if k else label


@dataclass(frozen=True)
class FigKey:
    """One bandwidth/latency figure: op × layout × the variant dims that vary."""

    op: str
    layout: str
    world_size: int
    variant: str = ""
    variant_slug: str = ""

    @property
    def slug(self) -> str:
        return f"{self.op}_{self.layout}" + (f"_{self.variant_slug}" if self.variant_slug else "")

    @property
    def subtitle(self) -> str:
        return subtitle(self.layout, self.world_size, self.variant)


def subtitle(layout: str, world_size: int, variant: str = "") -> str:
    """``2x2: 2 nodes × 2 ranks = 4 ranks[, variant]``."""
    if "+" in layout:  # uneven: each node's count
        s = f"{layout}: {layout.count('+') + 1} nodes with {layout} ranks = {world_size} ranks"
    else:
        nodes, _, rpn = layout.partition("x")
        s = f"{layout}: {nodes} {'node' if nodes == '1' else 'nodes'} × {rpn} ranks = {world_size} ranks"
    return s + (f", {variant}" if variant else "")


# --------------------------------------------------------------------------- axes helpers

def apply_size_axis(ax: Axes, sizes: Iterable[float], max_ticks: int = 14) -> None:
    """Log2 x axis labelled 8B/1K/1M/1G; tick spacing (1,2,5,10 octaves) keeps labels apart."""
    pos = sorted(s for s in sizes if s > 0)
    ax.set_xscale("log", base=2)
    if not pos:
        return
    e_lo, e_hi = math.floor(math.log2(pos[0])), math.ceil(math.log2(pos[-1]))
    for step in (1, 2, 5, 10):
        ticks = [2.0 ** e for e in range(e_lo, e_hi + 1) if e % step == 0]
        if len(ticks) <= max_ticks:
            break
    if len(ticks) < 2:  # narrow range: fall back to the measured sizes themselves
        ticks = sorted(set(pos))
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))
    ax.xaxis.set_minor_locator(FixedLocator([2.0 ** e for e in range(e_lo, e_hi + 1)]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(pos[0] / 1.35, pos[-1] * 1.35)
    ax.set_xlabel("Message size (bytes, log₂)")
    ax.grid(which="major", alpha=0.35)
    ax.grid(which="minor", alpha=0.12)


def _plain_log_y(ax: Axes, values: Sequence[float]) -> None:
    """Log y axis with plain numbers (0.5, 1, 10, 100), minor labels inside a narrow decade."""
    ax.set_yscale("log")
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    narrow = bool(pos) and max(pos) / min(pos) < 20
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))

    def minor(v: float, _: Any) -> str:
        if not narrow or v <= 0:
            return ""
        lead = round(v / 10 ** math.floor(math.log10(v)), 6)
        return f"{v:g}" if lead in (2.0, 5.0) else ""

    ax.yaxis.set_minor_formatter(FuncFormatter(minor))
    ax.grid(which="minor", axis="y", alpha=0.1)


def _legend(ax: Axes, n_entries: int, title: str | None = None) -> None:
    if n_entries > 8:
        ax.legend(title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend(title=title, loc="best")


def _new_figure(width: float = 9.0, height: float = 5.2, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def add_footnote(fig: Figure, note: str) -> None:
    """Write ``note`` small, left-aligned, at the bottom of the figure (empty: nothing).

    A figure-level label rather than axes text, so constrained layout makes room for it and
    it never covers data; wrapped to the figure's width, because a launcher's link text is
    free-form and may be long.
    """
    if not note:
        return
    width = max(40, int(fig.get_figwidth() * 15))  # ≈ characters per inch at 8 pt
    fig.supxlabel(textwrap.fill(note, width), x=0.005, ha="left", fontsize=8, color="#555555",
                  fontstyle="italic", fontweight="normal")


def _save(fig: Figure, outdir: Path, name: str) -> str:
    fig.savefig(outdir / name, dpi=DPI)
    return name


# --------------------------------------------------------------------------- grouping

def _series(g: pd.DataFrame) -> list[tuple[str, str, str, pd.DataFrame]]:
    """The lines of one figure: (algo, backend, label, points by size), the library first."""
    out = [(algo, backend, label, s.drop_duplicates("bytes", keep="last").sort_values("bytes"))
           for (algo, backend, label), s in g.groupby(["algo", "backend", "label"], sort=False)]
    return sorted(out, key=lambda t: (t[0] != "library", t[0], t[1]))


FAR_APART = 10.0  # several backends' lines this far apart: a log y axis, else the slower ones lie flat on 0


def _backends_far_apart(g: pd.DataFrame, values: Iterable[float]) -> bool:
    """Whether a figure of several backends' lines should use a log y axis: its positive values span more
    than :data:`FAR_APART` times (Gloo's TCP beside MPI's shared memory). One backend: never (the figures
    of a single-backend results file are drawn as they always were)."""
    if g["backend"].nunique() <= 1:
        return False
    pos = [float(v) for v in values if v > 0 and math.isfinite(v)]
    return len(pos) > 1 and max(pos) / min(pos) > FAR_APART


def collective_groups(results: pd.DataFrame) -> list[tuple[FigKey, pd.DataFrame]]:
    """Measured collective points (positive sizes) split into figures, each with a ``label`` per line."""
    v = views(results[~results["is_p2p"] & (results["bytes"] > 0)])
    v["label"] = v["algo"] if v["backend"].nunique() <= 1 else v["algo"] + " (" + v["backend"] + ")"
    keys = ["op", "layout", "world_size", "variant", "variant_slug"]
    groups = [(FigKey(*k), g) for k, g in v.groupby(keys, sort=False)]
    return sorted(groups, key=lambda kg: (kg[0].op, layout_sort_key(kg[0].layout), kg[0].slug))


# --------------------------------------------------------------------------- collective figures

def plot_busbw(key: FigKey, g: pd.DataFrame, style: Style, outdir: Path, note: str = "") -> FigureInfo:
    fig, (ax,) = _new_figure()
    counts = best_counts(g)
    series = _lead_order(_series(g), counts)
    sizes = g["bytes"].nunique()
    for algo, backend, label, s in series:
        lead = counts.get((algo, backend), 0) > 0
        ax.plot(s["bytes"], s["busbw_GBps"], label=_lead_label(label, algo, backend, counts, sizes),
                **style.kw(algo, backend, lead))
        ax.fill_between(s["bytes"], s["busbw_lo"], s["busbw_hi"], color=style.color(algo),
                        alpha=0.15 if lead or algo == "library" else 0.06, linewidth=0)
    band = "min–max" if (g["band"] != "p5–p95").any() else "p5–p95"
    apply_size_axis(ax, g["bytes"])
    log = _backends_far_apart(g, [s["busbw_GBps"].max() for _, _, _, s in series])
    if log:
        _plain_log_y(ax, g["busbw_GBps"].tolist())
    else:
        ax.set_ylim(bottom=0)
    ax.set_ylabel("Bus bandwidth (GB/s, at p50 time" + (", log)" if log else ")"))
    ax.set_title(f"{key.op} bus bandwidth\n{key.subtitle}")
    _legend(ax, len(series), title=f"algorithm (band: {band})")
    add_footnote(fig, note)
    name = _save(fig, outdir, f"busbw_{key.slug}.png")
    return FigureInfo("Bus bandwidth vs message size", name,
                      f"{key.op}, {key.subtitle}: busbw at p50, shaded {band}; bold: the algorithms that are the best at "
                      "some size (the fastest, or the simplest tied with it; the legend says at how many). Read: the highest line at a size is the fastest algorithm "
                      "there; where lines flatten is the bandwidth the layout can reach.", note)


def _small_sizes(g: pd.DataFrame) -> list[int]:
    """The sizes of the latency figure: up to SMALL_MSG_LIMIT, at least MIN_CURVE_SIZES of them, else none
    (drawing the large sizes instead repeated the bandwidth figure's points in other units)."""
    small = [x for x in sorted(g["bytes"].unique()) if x <= SMALL_MSG_LIMIT]
    return small if len(small) >= MIN_CURVE_SIZES else []


def plot_latency(key: FigKey, g: pd.DataFrame, style: Style, outdir: Path, note: str = "") -> FigureInfo | None:
    small = _small_sizes(g)
    g = g[g["bytes"].isin(small)]
    if g.empty:
        return None
    fig, (ax,) = _new_figure()
    counts = best_counts(g)
    series = _lead_order(_series(g), counts)
    for algo, backend, label, s in series:
        lead = counts.get((algo, backend), 0) > 0
        ax.plot(s["bytes"], s["p50_us"], label=_lead_label(label, algo, backend, counts, len(small)),
                **style.kw(algo, backend, lead))
        ax.fill_between(s["bytes"], s["lo_us"], s["hi_us"], color=style.color(algo),
                        alpha=0.15 if lead or algo == "library" else 0.06, linewidth=0)
    apply_size_axis(ax, small)
    _plain_log_y(ax, g["p50_us"].tolist())
    ax.set_ylabel("Time per operation, p50 (µs, log)")
    limit = format_bytes(max(small))
    ax.set_title(f"{key.op} small-message latency (≤ {limit})\n{key.subtitle}")
    _legend(ax, len(series), title="algorithm (band: p5–p95)")
    add_footnote(fig, note)
    name = _save(fig, outdir, f"latency_{key.slug}.png")
    return FigureInfo("Small-message latency", name,
                      f"{key.op}, {key.subtitle}: p50 time up to {limit}. Read: the lowest line is the algorithm "
                      "with the least start-up cost; where bands overlap, the difference is noise.", note)


def plot_ratio(key: FigKey, g: pd.DataFrame, style: Style, outdir: Path, note: str = "") -> FigureInfo | None:
    bw = g.pivot_table(index="bytes", columns=["algo", "backend"], values="busbw_GBps", aggfunc="last")
    libs = [c for c in bw.columns if c[0] == "library"]
    customs = [(algo, backend, label) for algo, backend, label, _ in _series(g) if algo != "library"]
    if not libs or not customs:
        return None
    if len(customs) < 2 and g["bytes"].nunique() < MIN_FIGURE_SIZES:
        return None  # one line over the library at a few sizes: the best table's "vs library" column
    internal = g[library_internal(g)]  # the library's own code, by the traits
    lib_code = set(zip(internal["algo"], internal["backend"]))
    internals = any((algo, backend) in lib_code for algo, backend, _ in customs)
    counts = best_counts(g)
    customs.sort(key=lambda t: (-counts.get((t[0], t[1]), 0), t[0], t[1]))
    fig, (ax,) = _new_figure()
    all_x: list[int] = []
    for algo, backend, label in customs:
        # its own backend's library; a backend without one: the reference backend's (mpi), else the first
        base = next(b for b in [("library", backend), *(("library", r) for r in backend_order(g["backend"])), libs[0]]
                    if b in libs)
        ratio = (bw[(algo, backend)] / bw[base].where(bw[base] > 0)).dropna()
        if ratio.empty:
            continue
        shown = label if base[1] == backend else f"{label} vs library ({base[1]})"
        kw = style.kw(algo, backend, counts.get((algo, backend), 0) > 0)
        if (algo, backend) in lib_code:  # the library's own code (library:ALGO, han): dotted, not a custom line
            kw.update(linestyle=":", linewidth=min(kw["linewidth"], 1.6))
            shown += " (library internal)"
        ax.plot(ratio.index, ratio.to_numpy(), label=shown, **kw)
        all_x += list(ratio.index)
    if not all_x:
        return None
    ratios = [y for line in ax.get_lines() for y in line.get_ydata()]
    log = _backends_far_apart(g, ratios)
    if log:
        _plain_log_y(ax, ratios)
    ax.axhline(1.0, color="#222222", linewidth=1.2, linestyle="--", zorder=1)
    ax.text(0.005, 1.0, " library", transform=ax.get_yaxis_transform(), va="bottom", ha="left",
            fontsize=8.5, color="#222222")
    apply_size_axis(ax, all_x)
    if not log:
        ax.set_ylim(bottom=0)
    ax.set_ylabel("busbw ÷ library busbw  (> 1: custom faster" + (", log)" if log else ")"))
    ax.set_title(f"{key.op}: custom algorithms{' and library internals' if internals else ''} vs library\n"
                 f"{key.subtitle}")
    _legend(ax, len(customs), title="algorithm")
    add_footnote(fig, note)
    name = _save(fig, outdir, f"ratio_{key.slug}.png")
    return FigureInfo("Custom vs library", name,
                      f"{key.op}, {key.subtitle}: each custom algorithm's busbw over the library's. Read: above the "
                      "dashed line at 1 the custom algorithm beats the library at that size, below it loses."
                      + (" Dotted: the library's own algorithms forced (library:ALGO) or han, which show how the "
                         "library's default choice compares with its alternatives." if internals else ""), note)


# --------------------------------------------------------------------------- the answers

ANSWERS_SECTION = "Answers"
TIE_HATCH = "////"


def plot_answer_chart(op: str, cells: pd.DataFrame, outdir: Path, note: str = "",
                      several_backends: bool = False) -> FigureInfo | None:
    """One op's answers at a glance: a size x layout grid, each cell the winner's colour.

    ``cells``: one row per (row label, size) with ``row`` (layout and variant), ``bytes``, ``algo``
    (the winner: its name, with its backend when ``several_backends``), optionally ``color`` (else
    its palette colour), ``tie`` (hatched: within noise of the fastest, the simpler one shown) and
    ``text`` (written in the cell: the margin over the library, of the winner's own backend).
    """
    if cells.empty:
        return None
    baseline = "its backend's library" if several_backends else "the library"
    rows = list(dict.fromkeys(cells["row"]))
    sizes = sorted(cells["bytes"].unique())
    if len(rows) < 2 and len(sizes) < MIN_FIGURE_SIZES:
        return None  # one short row: the answers table right below says it as fast
    col = {b: j for j, b in enumerate(sizes)}
    width = min(16.0, max(6.5, 0.5 * len(sizes) + 2.2))
    colors = dict(zip(cells["algo"], cells["color"])) if "color" in cells else {}
    winners = sorted(set(cells["algo"]), key=lambda a: (a.split(" (")[0] != "library", a))
    handles = [matplotlib.patches.Patch(facecolor=colors.get(a) or color_of(a), edgecolor="white", label=a)
               for a in winners]
    handles.append(matplotlib.patches.Patch(facecolor="#bbbbbb", edgecolor="white", hatch=TIE_HATCH,
                                            label="tie within noise (the simpler shown)"))
    ncol = min(len(handles), max(2, int(width // 2.3)))
    legend_rows = -(-len(handles) // ncol)
    height = 0.5 * len(rows) + 0.3 * legend_rows + (1.9 if len(sizes) > 12 else 1.5)
    with rc_context({**STYLE, "axes.grid": False, "axes.spines.left": False, "axes.spines.bottom": False}):
        fig = Figure(figsize=(width, height), layout="constrained")
        ax, lax = fig.subplots(2, 1, gridspec_kw={"height_ratios": [0.5 * len(rows) + 0.6, 0.3 * legend_rows]})
        ax.set_facecolor("#f4f4f4")  # a size not measured in a layout
        for r in cells.itertuples(index=False):
            i, j = rows.index(r.row), col[r.bytes]
            face = colors.get(r.algo) or color_of(r.algo)
            ax.add_patch(matplotlib.patches.Rectangle(
                (j - 0.5, i - 0.5), 1, 1, facecolor=face, edgecolor="white", linewidth=1.2,
                hatch=TIE_HATCH if r.tie else None))
            if r.text:
                ax.text(j, i, r.text, ha="center", va="center", fontsize=7.5, color=text_color_on(face),
                        fontweight="bold",
                        bbox=dict(boxstyle="round,pad=0.12", facecolor=face, edgecolor="none") if r.tie else None)
        ax.set_xlim(-0.5, len(sizes) - 0.5)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([format_bytes(b) for b in sizes], rotation=90 if len(sizes) > 12 else 0, fontsize=8.5)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows)
        ax.tick_params(length=0)
        ax.set_title(f"{op}: the fastest algorithm per size and layout", loc="left")
        lax.axis("off")
        lax.legend(handles=handles, loc="center", ncol=ncol, frameon=False, fontsize=8.5, handlelength=1.6,
                   title=f"winner (in the cell: × faster than {baseline})", title_fontsize=8.5)
        add_footnote(fig, note)
        name = _save(fig, outdir, f"answers_{op}.png")
    return FigureInfo(ANSWERS_SECTION, name,
                      f"{op}: the winner per size and layout in its colour, × faster than {baseline} in the cell "
                      "(lib: the library wins or ties). Read: one colour along a row is one algorithm for every "
                      "size; hatched: a tie within the spread, given to the simpler algorithm, as colltune does.", note)


# --------------------------------------------------------------------------- p2p figures

@dataclass(frozen=True)
class P2PKey:
    layout: str
    world_size: int
    variant: str = ""
    variant_slug: str = ""

    @property
    def slug(self) -> str:
        return self.layout + (f"_{self.variant_slug}" if self.variant_slug else "")

    @property
    def subtitle(self) -> str:
        return subtitle(self.layout, self.world_size, self.variant)


def p2p_groups(results: pd.DataFrame) -> list[tuple[P2PKey, pd.DataFrame]]:
    v = views(results[results["is_p2p"] & (results["bytes"] > 0)], fields=("device", "dtype", "mode"), by=())
    v["link"] = v["link"].fillna("unknown")
    groups = [(P2PKey(*k), g) for k, g in v.groupby(["layout", "world_size", "variant", "variant_slug"], sort=False)]
    return sorted(groups, key=lambda kg: (layout_sort_key(kg[0].layout), kg[0].slug))


def _link_curve(pts: pd.DataFrame, value: str, lo: str, hi: str) -> tuple[pd.DataFrame, int]:
    """Median over pairs per size; band = min..max across pairs, or the point's own band for one pair."""
    pairs = len(pts[["src", "dst"]].drop_duplicates())
    by_size = pts.groupby("bytes")
    if pairs > 1:
        curve = by_size[value].agg(["median", "min", "max"])
    else:
        first = by_size[[value, lo, hi]].first()
        curve = pd.DataFrame({"median": first[value], "min": first[[lo, hi]].min(axis=1),
                              "max": first[[lo, hi]].max(axis=1)})
    return curve.sort_index(), pairs


def plot_p2p(key: P2PKey, pts: pd.DataFrame, outdir: Path, note: str = "") -> FigureInfo:
    fig, (ax_lat, ax_bw) = _new_figure(width=13.0, height=5.0, ncols=2)
    links = sorted(pts["link"].unique(), key=lambda l: (l != "intra", l))
    lat_y: list[float] = []
    lat_x: list[int] = []
    for link in links:
        lp = pts[(pts["link"] == link) & (pts["algo"] == "latency")]
        if len(lp):
            curve, npairs = _link_curve(lp, "p50_us", "lo_us", "hi_us")
            color = _LINK_COLORS.get(link, "#7f7f7f")
            ax_lat.plot(curve.index, curve["median"], marker="o", color=color,
                        label=f"{link} ({npairs} pair{'s' * (npairs > 1)})")
            ax_lat.fill_between(curve.index, curve["min"], curve["max"], color=color, alpha=0.15, linewidth=0)
            lat_y += curve["median"].tolist()
            lat_x += curve.index.tolist()
    if lat_x:
        apply_size_axis(ax_lat, lat_x, max_ticks=10)
        _plain_log_y(ax_lat, lat_y)
        ax_lat.legend(title="link (band: spread)", loc="upper left")
    else:
        ax_lat.text(0.5, 0.5, "no latency-mode points", transform=ax_lat.transAxes, ha="center", color="grey")
    ax_lat.set_ylabel("One-way latency, p50 (µs, log)")
    ax_lat.set_title("Latency (half round trip)")

    bw_x: list[int] = []
    for link in links:
        for mode, ls in (("bw", "-"), ("bibw", "--")):
            mp = pts[(pts["link"] == link) & (pts["algo"] == mode)]
            if mp.empty:
                continue
            curve, _ = _link_curve(mp, "busbw_GBps", "busbw_lo", "busbw_hi")
            color = _LINK_COLORS.get(link, "#7f7f7f")
            label = f"{link} {'unidirectional' if mode == 'bw' else 'bidirectional'}"
            ax_bw.plot(curve.index, curve["median"], marker="o" if mode == "bw" else "s", linestyle=ls, color=color,
                       label=label)
            ax_bw.fill_between(curve.index, curve["min"], curve["max"], color=color, alpha=0.12, linewidth=0)
            bw_x += curve.index.tolist()
    if bw_x:
        apply_size_axis(ax_bw, bw_x, max_ticks=10)
        ax_bw.set_ylim(bottom=0)
        ax_bw.legend(title="link, mode", loc="upper left")
    else:
        ax_bw.text(0.5, 0.5, "no bandwidth-mode points", transform=ax_bw.transAxes, ha="center", color="grey")
    ax_bw.set_ylabel("Bandwidth (GB/s)")
    ax_bw.set_title("Bandwidth (windowed, OSU style)")
    fig.suptitle(f"Point-to-point within vs across nodes — {key.subtitle}", fontweight="bold", fontsize=12.5)
    add_footnote(fig, note)
    name = _save(fig, outdir, f"p2p_{key.slug}.png")
    return FigureInfo("Within vs across nodes", name,
                      f"pingpong, {key.subtitle}: intra-node vs inter-node latency and bandwidth (median over "
                      "pairs, band = spread across pairs). Read: the gap between the blue (intra) and red (inter) "
                      "lines is what crossing a node boundary costs.", note)


def _pair_matrix(pts: pd.DataFrame, n: int, value: str) -> pd.DataFrame:
    """n × n matrix of ``value`` by (src, dst), mirrored where only one direction was measured."""
    pts = pts[pts["src"].notna() & pts["dst"].notna()]
    m = pts.pivot_table(index="src", columns="dst", values=value, aggfunc="last")
    m = m.reindex(index=range(n), columns=range(n)).astype(float)
    return m.combine_first(m.T)


def _draw_matrix(fig: Figure, ax: Axes, m: pd.DataFrame, title: str, unit: str,
                 cmap: str, log: bool, boundaries: list[int]) -> None:
    arr = np.ma.masked_invalid(m.to_numpy(dtype=float))
    vals = arr.compressed()
    norm: Normalize | None = None
    if vals.size and log and vals.min() > 0 and vals.max() / vals.min() > 10:
        norm = LogNorm(vmin=float(vals.min()), vmax=float(vals.max()))
    cm = matplotlib.colormaps[cmap].copy()
    cm.set_bad("#eeeeee")
    im = ax.imshow(arr, cmap=cm, norm=norm, origin="upper", interpolation="nearest")
    n = len(m)
    ax.grid(False)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    if n > 16:
        step = math.ceil(n / 16)
        ax.set_xticks(range(0, n, step))
        ax.set_yticks(range(0, n, step))
    ax.set_xlabel("dst rank")
    ax.set_ylabel("src rank")
    for b in boundaries:
        ax.axhline(b - 0.5, color="black", linewidth=1.2)
        ax.axvline(b - 0.5, color="black", linewidth=1.2)
    if n <= 12 and vals.size:
        mid = math.sqrt(vals.min() * vals.max()) if norm is not None else (vals.min() + vals.max()) / 2
        for i in range(n):
            for j in range(n):
                if not np.ma.is_masked(arr[i, j]):
                    v = float(arr[i, j])
                    dark_bg = v < mid if cmap == "viridis" else v > mid  # viridis: low = dark
                    ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=8,
                            color="white" if dark_bg else "black")
    ax.set_title(title)
    cbar = fig.colorbar(im, ax=ax, label=unit, shrink=0.85)
    cbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    if norm is not None:
        cbar.ax.yaxis.set_minor_formatter(FuncFormatter(
            lambda v, _: f"{v:g}" if round(v / 10 ** math.floor(math.log10(v)), 6) in (2.0, 5.0) else ""))


def plot_pair_heatmap(key: P2PKey, pts: pd.DataFrame, node_of_rank: Sequence[int], outdir: Path,
                      note: str = "") -> FigureInfo | None:
    lat = pts[pts["algo"] == "latency"]
    bw = pts[pts["algo"] == "bw"]
    bw = bw if len(bw) else pts[pts["algo"] == "bibw"]
    if lat.empty and bw.empty:
        return None
    n = key.world_size
    boundaries = [i for i in range(1, min(n, len(node_of_rank))) if node_of_rank[i] != node_of_rank[i - 1]]
    if not boundaries and len(node_of_rank) < n:
        rpn = int(key.layout.partition("x")[2] or n) if "+" not in key.layout else n
        boundaries = list(range(rpn, n, rpn))
    panels = [x for x in (lat, bw) if len(x)]
    fig, axes = _new_figure(width=6.2 * len(panels) + 0.6, height=5.4, ncols=len(panels))
    k = 0
    if len(lat):
        size = lat["bytes"].min()
        _draw_matrix(fig, axes[k], _pair_matrix(lat[lat["bytes"] == size], n, "p50_us"),
                     f"p50 latency at {format_bytes(size)}", "one-way latency (µs)", "viridis", True, boundaries)
        k += 1
    if len(bw):
        size = bw["bytes"].max()
        mode = "unidirectional" if bw["algo"].iloc[0] == "bw" else "bidirectional"
        _draw_matrix(fig, axes[k], _pair_matrix(bw[bw["bytes"] == size], n, "busbw_GBps"),
                     f"{mode} bandwidth at {format_bytes(size)}", "bandwidth (GB/s)", "viridis_r", False, boundaries)
    fig.suptitle(f"Pair matrix — {key.subtitle} (lines: node boundaries)", fontweight="bold", fontsize=12.5)
    add_footnote(fig, note)
    name = _save(fig, outdir, f"p2p_heatmap_{key.slug}.png")
    return FigureInfo("Within vs across nodes", name,
                      f"pingpong, {key.subtitle}: every measured pair (matrix mirrored for src > dst). Read: blocks "
                      "along the diagonal are pairs on one node; a cell unlike its block is a slow rank or link.", note)


# --------------------------------------------------------------------------- scaling

def default_scaling_sizes(common: Sequence[int]) -> list[int]:
    """A small, a mid (log-centre) and the largest common size."""
    c = sorted(set(common))
    if len(c) <= 3:
        return c
    centre = math.sqrt(max(c[0], 1) * c[-1])
    mid = min(c[1:-1], key=lambda x: abs(math.log(max(x, 1)) - math.log(centre)))
    return [c[0], mid, c[-1]]


def plot_scaling(op: str, algo: str, backend: str, variant: str, variant_slug: str, pts: pd.DataFrame,
                 sizes: Sequence[int] | None, outdir: Path, note: str = "") -> FigureInfo | None:
    pts = pts.drop_duplicates(["layout", "bytes"], keep="last")
    layouts = sorted(pts["layout"].unique(), key=layout_sort_key)
    if len(layouts) < 2:
        return None
    common = set.intersection(*(set(g["bytes"]) for _, g in pts.groupby("layout")))
    measured = set(pts["bytes"])
    chosen = [s for s in sizes if s in measured] if sizes else default_scaling_sizes(sorted(common))
    if not chosen:
        return None
    fig, (ax,) = _new_figure(width=8.0, height=5.0)
    cmap = matplotlib.colormaps["plasma"]
    pos = {lay: k for k, lay in enumerate(layouts)}
    for i, size in enumerate(sorted(chosen)):
        ps = pts[pts["bytes"] == size].sort_values("layout", key=lambda s: s.map(pos))
        color = cmap(0.1 + 0.75 * i / max(1, len(chosen) - 1))
        yerr = [ps["busbw_GBps"] - ps["busbw_lo"], ps["busbw_hi"] - ps["busbw_GBps"]]
        ax.errorbar(ps["layout"].map(pos), ps["busbw_GBps"], yerr=yerr, marker="o", capsize=3, color=color,
                    label=format_bytes(size))
    world = pts.groupby("layout")["world_size"].first()
    ax.set_xticks(range(len(layouts)))
    ax.set_xticklabels([f"{lay}\n{world[lay]} ranks" for lay in layouts])
    ax.set_xlim(-0.4, len(layouts) - 0.6)
    values = pts.loc[pts["bytes"].isin(chosen) & (pts["busbw_GBps"] > 0), "busbw_GBps"]
    if len(values) and values.max() / values.min() > 50:  # small and large sizes differ by decades
        _plain_log_y(ax, values.tolist())
    else:
        ax.set_ylim(bottom=0)
    ax.grid(axis="x", which="both", visible=False)
    ax.set_xlabel("Layout (nodes × ranks per node)")
    ax.set_ylabel("Bus bandwidth (GB/s" + (", log)" if ax.get_yscale() == "log" else ")"))
    who = algo if algo != "library" else f"library ({backend})"
    ax.set_title(f"{op} / {who}: scaling with layout" + (f"\n{variant}" if variant else ""))
    ax.legend(title="message size", loc="best")
    add_footnote(fig, note)
    name = _save(fig, outdir, f"scaling_{op}_{algo}_{backend}" + (f"_{variant_slug}" if variant_slug else "") + ".png")
    return FigureInfo("Scaling", name, f"{op} / {who}: busbw at {', '.join(format_bytes(s) for s in sorted(chosen))} "
                      "vs layout (error bars: p5–p95). Read: a line that falls from left to right loses bandwidth "
                      "as ranks and nodes are added.", note)


def scaling_groups(results: pd.DataFrame) -> list[tuple[tuple[str, str, str, str, str], pd.DataFrame]]:
    v = views(results[~results["is_p2p"] & (results["bytes"] > 0)])
    groups = list(v.groupby(["op", "algo", "backend", "variant", "variant_slug"], sort=False))
    return sorted(groups, key=lambda kg: (kg[0][0], kg[0][1] != "library", kg[0][1], kg[0][2]))


# --------------------------------------------------------------------------- driver

def make_all(ds: Dataset, outdir: Path, sizes: Sequence[int] | None = None) -> list[FigureInfo]:
    """Write every applicable figure into ``outdir``; return them in report order."""
    outdir.mkdir(parents=True, exist_ok=True)
    style = Style.for_frame(ds.measured)
    figs: list[FigureInfo | None] = []
    with rc_context(STYLE):
        groups = [(key, g, frame_note(g)) for key, g in collective_groups(ds.results)]
        figs += [plot_busbw(key, g, style, outdir, note) for key, g, note in groups]
        figs += [plot_latency(key, g, style, outdir, note) for key, g, note in groups]
        figs += [plot_ratio(key, g, style, outdir, note) for key, g, note in groups]
        for key, pts in p2p_groups(ds.results):
            note = frame_note(pts)
            figs.append(plot_p2p(key, pts, outdir, note))
            if len(pts[["src", "dst"]].drop_duplicates()) >= 3:
                known = pts["node_of_rank"].dropna()
                figs.append(plot_pair_heatmap(key, pts, known.iloc[0] if len(known) else [], outdir, note))
        for (op, algo, backend, variant, slug), pts in scaling_groups(ds.results):
            figs.append(plot_scaling(op, algo, backend, variant, slug, pts, sizes, outdir, frame_note(pts)))
    return [f for f in figs if f is not None]
