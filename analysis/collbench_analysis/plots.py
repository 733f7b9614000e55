"""Figures for collplot: bandwidth, latency, custom-vs-library, p2p, scaling.

Uses matplotlib's object API (``Figure`` + Agg canvas), never pyplot, so no
global figure registry grows and nothing has to be closed. Every figure helper
takes the already-grouped series and writes exactly one PNG.
"""
from __future__ import annotations

import math
import statistics
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
from matplotlib import rc_context  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: E402

from .load import (  # noqa: E402
    Dataset, Point, Run, dedupe, format_bytes, group_by, inter_node_links, layout_sort_key, link_note,
    variant_label, variant_of, variant_slug, varying_fields,
)

SMALL_MSG_LIMIT = 64 * 1024
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
    caption: str
    note: str = ""  # the figure's footnote (the inter-node link), also shown under it in the report

    @property
    def text(self) -> str:
        """Caption plus note: what the report prints under the figure."""
        return f"{self.caption} {self.note.rstrip('.')}." if self.note else self.caption


@dataclass(frozen=True)
class Style:
    """Stable visual identity per algorithm/backend across every figure of a report."""

    colors: dict[str, str]
    markers: dict[str, str]
    linestyles: dict[str, str]

    @classmethod
    def for_points(cls, points: Iterable[Point]) -> "Style":
        pts = list(points)
        algos = sorted({p.algo for p in pts if not p.is_library and not p.is_p2p})
        cmap = matplotlib.colormaps["tab10" if len(algos) <= 10 else "tab20"]
        colors = {a: matplotlib.colors.to_hex(cmap(i % cmap.N)) for i, a in enumerate(algos)}
        colors["library"] = "#222222"
        markers = {a: _MARKERS[i % len(_MARKERS)] for i, a in enumerate(algos)}
        markers["library"] = "s"
        backends = sorted({p.backend for p in pts})
        styles = {b: _LINESTYLES[i % len(_LINESTYLES)] for i, b in enumerate(backends)}
        return cls(colors, markers, styles)

    def kw(self, algo: str, backend: str) -> dict[str, Any]:
        return {
            "color": self.colors.get(algo, "#7f7f7f"),
            "marker": self.markers.get(algo, "o"),
            "linestyle": self.linestyles.get(backend, "-"),
            "linewidth": 2.4 if algo == "library" else 1.8,
            "zorder": 3 if algo == "library" else 2,
        }


@dataclass
class Series:
    """One line: an (algo, backend) across sizes, sorted by bytes, measured only."""

    algo: str
    backend: str
    label: str
    points: list[Point] = field(default_factory=list)

    @property
    def sizes(self) -> list[int]:
        return [p.bytes for p in self.points]

    def at(self, size: int) -> Point | None:
        return next((p for p in self.points if p.bytes == size), None)


@dataclass(frozen=True)
class FigKey:
    """One bandwidth/latency figure: op × layout × the variant dims that vary."""

    op: str
    layout: str
    world_size: int
    variant: tuple[tuple[str, Any], ...]

    @property
    def slug(self) -> str:
        v = variant_slug(self.variant)
        return f"{self.op}_{self.layout}" + (f"_{v}" if v else "")

    @property
    def subtitle(self) -> str:
        if "+" in self.layout:  # uneven: each node's count
            s = f"{self.layout}: {self.layout.count('+') + 1} nodes with {self.layout} ranks = {self.world_size} ranks"
        else:
            nodes, _, rpn = self.layout.partition("x")
            node_word = "node" if nodes == "1" else "nodes"
            s = f"{self.layout}: {nodes} {node_word} × {rpn} ranks = {self.world_size} ranks"
        v = variant_label(self.variant)
        return s + (f", {v}" if v else "")


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


def figure_note(points: Iterable[Point], runs: Mapping[str, Run]) -> str:
    """The footnote of a figure drawn from ``points``: the declared inter-node link of its multi-node runs."""
    return link_note(inter_node_links(points, runs))


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

def collective_groups(points: Iterable[Point]) -> dict[FigKey, list[Series]]:
    """Group measured collective points into figures and lines (positive sizes only)."""
    pts, _ = dedupe(p for p in points if p.measured and not p.is_p2p and p.bytes > 0)
    out: dict[FigKey, list[Series]] = {}
    by_backend = {p.backend for p in pts}
    for op, op_pts in group_by(pts, lambda p: p.op).items():
        dims = varying_fields(op_pts)
        groups = group_by(op_pts, lambda p: FigKey(op, p.layout, p.world_size, variant_of(p, dims)))
        for key, grp in groups.items():
            series = []
            for (algo, backend), sp in group_by(grp, lambda p: (p.algo, p.backend)).items():
                by_size = {p.bytes: p for p in sp}  # last one wins on a residual duplicate
                label = algo if len(by_backend) == 1 else f"{algo} ({backend})"
                series.append(Series(algo, backend, label, [by_size[s] for s in sorted(by_size)]))
            series.sort(key=lambda s: (s.algo != "library", s.algo, s.backend))
            out[key] = series
    return dict(sorted(out.items(), key=lambda kv: (kv[0].op, layout_sort_key(kv[0].layout), kv[0].slug)))


# --------------------------------------------------------------------------- collective figures

def plot_busbw(key: FigKey, series: list[Series], style: Style, outdir: Path, note: str = "") -> FigureInfo:
    fig, (ax,) = _new_figure()
    band = "p5–p95"
    for s in series:
        xs = s.sizes
        ax.plot(xs, [p.bw for p in s.points], label=s.label, **style.kw(s.algo, s.backend))
        ax.fill_between(xs, [p.bw_lo for p in s.points], [p.bw_hi for p in s.points],
                        color=style.colors.get(s.algo, "#7f7f7f"), alpha=0.15, linewidth=0)
        if any(p.time and p.time.band_name != "p5–p95" for p in s.points):
            band = "min–max"
    apply_size_axis(ax, [x for s in series for x in s.sizes])
    ax.set_ylim(bottom=0)
    ax.set_ylabel("Bus bandwidth (GB/s, at p50 time)")
    ax.set_title(f"{key.op} bus bandwidth\n{key.subtitle}")
    _legend(ax, len(series), title=f"algorithm (band: {band})")
    add_footnote(fig, note)
    name = _save(fig, outdir, f"busbw_{key.slug}.png")
    return FigureInfo("Bus bandwidth vs message size", name,
                      f"{key.op}, {key.subtitle}: busbw at p50, shaded {band}.", note)


def _small_sizes(series: list[Series]) -> list[int]:
    sizes = sorted({x for s in series for x in s.sizes})
    small = [x for x in sizes if x <= SMALL_MSG_LIMIT]
    return small if len(small) >= 2 else sizes


def plot_latency(key: FigKey, series: list[Series], style: Style, outdir: Path, note: str = "") -> FigureInfo | None:
    small = set(_small_sizes(series))
    fig, (ax,) = _new_figure()
    ys: list[float] = []
    n = 0
    for s in series:
        pts = [p for p in s.points if p.bytes in small]
        if not pts:
            continue
        n += 1
        xs = [p.bytes for p in pts]
        ax.plot(xs, [p.time.p50 for p in pts], label=s.label, **style.kw(s.algo, s.backend))  # type: ignore[union-attr]
        ax.fill_between(xs, [p.time.lo for p in pts], [p.time.hi for p in pts],  # type: ignore[union-attr]
                        color=style.colors.get(s.algo, "#7f7f7f"), alpha=0.15, linewidth=0)
        ys += [p.time.p50 for p in pts]  # type: ignore[union-attr]
    if n == 0:
        return None
    apply_size_axis(ax, small)
    _plain_log_y(ax, ys)
    ax.set_ylabel("Time per operation, p50 (µs, log)")
    limit = format_bytes(max(small))
    ax.set_title(f"{key.op} small-message latency (≤ {limit})\n{key.subtitle}")
    _legend(ax, n, title="algorithm (band: p5–p95)")
    add_footnote(fig, note)
    name = _save(fig, outdir, f"latency_{key.slug}.png")
    return FigureInfo("Small-message latency", name, f"{key.op}, {key.subtitle}: p50 time up to {limit}.", note)


def plot_ratio(key: FigKey, series: list[Series], style: Style, outdir: Path, note: str = "") -> FigureInfo | None:
    libs = {s.backend: s for s in series if s.algo == "library"}
    customs = [s for s in series if s.algo != "library"]
    if not libs or not customs:
        return None
    fig, (ax,) = _new_figure()
    all_x: list[int] = []
    n = 0
    for s in customs:
        base = libs.get(s.backend) or next(iter(libs.values()))
        xs = [x for x in s.sizes if base.at(x) is not None]
        if not xs:
            continue
        ratios = [s.at(x).bw / base.at(x).bw if base.at(x).bw > 0 else float("nan") for x in xs]  # type: ignore[union-attr]
        label = s.label if base.backend == s.backend else f"{s.label} vs library ({base.backend})"
        ax.plot(xs, ratios, label=label, **style.kw(s.algo, s.backend))
        all_x += xs
        n += 1
    if n == 0:
        return None
    ax.axhline(1.0, color="#222222", linewidth=1.2, linestyle="--", zorder=1)
    ax.text(0.005, 1.0, " library", transform=ax.get_yaxis_transform(), va="bottom", ha="left",
            fontsize=8.5, color="#222222")
    apply_size_axis(ax, all_x)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("busbw ÷ library busbw  (> 1: custom faster)")
    ax.set_title(f"{key.op}: custom algorithms vs library\n{key.subtitle}")
    _legend(ax, n, title="algorithm")
    add_footnote(fig, note)
    name = _save(fig, outdir, f"ratio_{key.slug}.png")
    return FigureInfo("Custom vs library", name,
                      f"{key.op}, {key.subtitle}: each custom algorithm's busbw over the library's (1 = parity).", note)


# --------------------------------------------------------------------------- p2p figures

@dataclass(frozen=True)
class P2PKey:
    layout: str
    world_size: int
    variant: tuple[tuple[str, Any], ...]

    @property
    def slug(self) -> str:
        v = variant_slug(self.variant)
        return self.layout + (f"_{v}" if v else "")

    @property
    def subtitle(self) -> str:
        return FigKey("pingpong", self.layout, self.world_size, self.variant).subtitle


def p2p_groups(points: Iterable[Point]) -> dict[P2PKey, list[Point]]:
    pts, _ = dedupe(p for p in points if p.measured and p.is_p2p and p.bytes > 0)
    dims = varying_fields(pts, ("device", "dtype", "mode"))
    groups = group_by(pts, lambda p: P2PKey(p.layout, p.world_size, variant_of(p, dims)))
    return dict(sorted(groups.items(), key=lambda kv: (layout_sort_key(kv[0].layout), kv[0].slug)))


def _link_curve(pts: list[Point], value: Callable[[Point], float],
                band: Callable[[Point], tuple[float, float]]) -> tuple[list[int], list[float], list[float], list[float], int]:
    """Median over pairs per size; band = min..max across pairs, or the point's own band for one pair."""
    pairs = {(p.src, p.dst) for p in pts}
    xs: list[int] = []
    mid: list[float] = []
    lo: list[float] = []
    hi: list[float] = []
    for size, grp in sorted(group_by(pts, lambda p: p.bytes).items()):
        vals = [value(p) for p in grp]
        xs.append(size)
        mid.append(statistics.median(vals))
        if len(pairs) > 1:
            lo.append(min(vals))
            hi.append(max(vals))
        else:
            a, b = band(grp[0])
            lo.append(min(a, b))
            hi.append(max(a, b))
    return xs, mid, lo, hi, len(pairs)


def plot_p2p(key: P2PKey, pts: list[Point], outdir: Path, note: str = "") -> FigureInfo:
    fig, (ax_lat, ax_bw) = _new_figure(width=13.0, height=5.0, ncols=2)
    links = sorted({p.link or "unknown" for p in pts}, key=lambda l: (l != "intra", l))
    lat_y: list[float] = []
    lat_x: list[int] = []
    for link in links:
        lp = [p for p in pts if (p.link or "unknown") == link and p.algo == "latency"]
        if lp:
            xs, mid, lo, hi, npairs = _link_curve(lp, lambda p: p.time.p50, lambda p: (p.time.lo, p.time.hi))  # type: ignore[union-attr]
            color = _LINK_COLORS.get(link, "#7f7f7f")
            ax_lat.plot(xs, mid, marker="o", color=color, label=f"{link} ({npairs} pair{'s' * (npairs > 1)})")
            ax_lat.fill_between(xs, lo, hi, color=color, alpha=0.15, linewidth=0)
            lat_y += mid
            lat_x += xs
    if lat_x:
        apply_size_axis(ax_lat, lat_x, max_ticks=10)
        _plain_log_y(ax_lat, lat_y)
        ax_lat.legend(title="link (band: spread)", loc="upper left")
    else:
        ax_lat.text(0.5, 0.5, "no latency-mode points", transform=ax_lat.transAxes, ha="center", color="grey")
    ax_lat.set_ylabel("One-way latency, p50 (µs, log)")
    ax_lat.set_title("Latency (half round trip)")

    bw_x: list[int] = []
    n = 0
    for link in links:
        for mode, ls in (("bw", "-"), ("bibw", "--")):
            mp = [p for p in pts if (p.link or "unknown") == link and p.algo == mode]
            if not mp:
                continue
            xs, mid, lo, hi, npairs = _link_curve(mp, lambda p: p.bw, lambda p: (p.bw_lo, p.bw_hi))
            color = _LINK_COLORS.get(link, "#7f7f7f")
            label = f"{link} {'unidirectional' if mode == 'bw' else 'bidirectional'}"
            ax_bw.plot(xs, mid, marker="o" if mode == "bw" else "s", linestyle=ls, color=color, label=label)
            ax_bw.fill_between(xs, lo, hi, color=color, alpha=0.12, linewidth=0)
            bw_x += xs
            n += 1
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
                      f"pingpong, {key.subtitle}: intra-node vs inter-node latency and bandwidth "
                      "(median over pairs, band = spread across pairs).", note)


def _pair_matrix(pts: list[Point], n: int, value: Callable[[Point], float]) -> list[list[float]]:
    m = [[math.nan] * n for _ in range(n)]
    for p in pts:
        if p.src is None or p.dst is None or max(p.src, p.dst) >= n:
            continue
        v = value(p)
        m[p.src][p.dst] = v
        if math.isnan(m[p.dst][p.src]):
            m[p.dst][p.src] = v
    return m


def _draw_matrix(fig: Figure, ax: Axes, m: list[list[float]], title: str, unit: str,
                 cmap: str, log: bool, boundaries: list[int]) -> None:
    import numpy as np

    arr = np.ma.masked_invalid(np.array(m, dtype=float))
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


def plot_pair_heatmap(key: P2PKey, pts: list[Point], node_of_rank: list[int], outdir: Path,
                      note: str = "") -> FigureInfo | None:
    lat = [p for p in pts if p.algo == "latency"]
    bw = [p for p in pts if p.algo == "bw"] or [p for p in pts if p.algo == "bibw"]
    if not lat and not bw:
        return None
    n = key.world_size
    boundaries = [i for i in range(1, min(n, len(node_of_rank))) if node_of_rank[i] != node_of_rank[i - 1]]
    if not boundaries and len(node_of_rank) < n:
        rpn = int(key.layout.partition("x")[2] or n) if "+" not in key.layout else n
        boundaries = list(range(rpn, n, rpn))
    panels = [x for x in (lat, bw) if x]
    fig, axes = _new_figure(width=6.2 * len(panels) + 0.6, height=5.4, ncols=len(panels))
    k = 0
    if lat:
        size = min(p.bytes for p in lat)
        sel = [p for p in lat if p.bytes == size]
        _draw_matrix(fig, axes[k], _pair_matrix(sel, n, lambda p: p.time.p50), f"p50 latency at {format_bytes(size)}",  # type: ignore[union-attr]
                     "one-way latency (µs)", "viridis", True, boundaries)
        k += 1
    if bw:
        size = max(p.bytes for p in bw)
        sel = [p for p in bw if p.bytes == size]
        mode = "unidirectional" if bw[0].algo == "bw" else "bidirectional"
        _draw_matrix(fig, axes[k], _pair_matrix(sel, n, lambda p: p.bw), f"{mode} bandwidth at {format_bytes(size)}",
                     "bandwidth (GB/s)", "viridis_r", False, boundaries)
    fig.suptitle(f"Pair matrix — {key.subtitle} (lines: node boundaries)", fontweight="bold", fontsize=12.5)
    add_footnote(fig, note)
    name = _save(fig, outdir, f"p2p_heatmap_{key.slug}.png")
    return FigureInfo("Within vs across nodes", name,
                      f"pingpong, {key.subtitle}: every measured pair (matrix mirrored for src > dst).", note)


# --------------------------------------------------------------------------- scaling

def default_scaling_sizes(common: Sequence[int]) -> list[int]:
    """A small, a mid (log-centre) and the largest common size."""
    c = sorted(set(common))
    if len(c) <= 3:
        return c
    centre = math.sqrt(max(c[0], 1) * c[-1])
    mid = min(c[1:-1], key=lambda x: abs(math.log(max(x, 1)) - math.log(centre)))
    return [c[0], mid, c[-1]]


def plot_scaling(op: str, algo: str, backend: str, variant: tuple[tuple[str, Any], ...],
                 pts: list[Point], sizes: Sequence[int] | None, outdir: Path, note: str = "") -> FigureInfo | None:
    layouts = sorted({p.layout for p in pts}, key=layout_sort_key)
    if len(layouts) < 2:
        return None
    per_layout = {lay: {p.bytes: p for p in pts if p.layout == lay} for lay in layouts}
    common = set.intersection(*(set(d) for d in per_layout.values()))
    chosen = [s for s in sizes if any(s in d for d in per_layout.values())] if sizes else default_scaling_sizes(sorted(common))
    if not chosen:
        return None
    fig, (ax,) = _new_figure(width=8.0, height=5.0)
    cmap = matplotlib.colormaps["plasma"]
    xs_all = list(range(len(layouts)))
    for i, size in enumerate(sorted(chosen)):
        xs = [k for k, lay in enumerate(layouts) if size in per_layout[lay]]
        ps = [per_layout[layouts[k]][size] for k in xs]
        color = cmap(0.1 + 0.75 * i / max(1, len(chosen) - 1))
        yerr = [[p.bw - p.bw_lo for p in ps], [p.bw_hi - p.bw for p in ps]]
        ax.errorbar(xs, [p.bw for p in ps], yerr=yerr, marker="o", capsize=3, color=color,
                    label=format_bytes(size))
    world = {p.layout: p.world_size for p in pts}
    ax.set_xticks(xs_all)
    ax.set_xticklabels([f"{lay}\n{world[lay]} ranks" for lay in layouts])
    ax.set_xlim(-0.4, len(layouts) - 0.6)
    values = [p.bw for p in pts if p.bytes in chosen and p.bw > 0]
    if values and max(values) / min(values) > 50:  # small and large sizes differ by decades
        _plain_log_y(ax, values)
    else:
        ax.set_ylim(bottom=0)
    ax.grid(axis="x", which="both", visible=False)
    ax.set_xlabel("Layout (nodes × ranks per node)")
    ax.set_ylabel("Bus bandwidth (GB/s" + (", log)" if ax.get_yscale() == "log" else ")"))
    v = variant_label(variant)
    who = algo if algo != "library" else f"library ({backend})"
    ax.set_title(f"{op} / {who}: scaling with layout" + (f"\n{v}" if v else ""))
    ax.legend(title="message size", loc="best")
    add_footnote(fig, note)
    slug_v = variant_slug(variant)
    name = _save(fig, outdir, f"scaling_{op}_{algo}_{backend}" + (f"_{slug_v}" if slug_v else "") + ".png")
    return FigureInfo("Scaling", name, f"{op} / {who}: busbw at {', '.join(format_bytes(s) for s in sorted(chosen))} "
                      "vs layout (error bars: p5–p95).", note)


def scaling_groups(points: Iterable[Point]) -> dict[tuple[str, str, str, tuple[tuple[str, Any], ...]], list[Point]]:
    pts, _ = dedupe(p for p in points if p.measured and not p.is_p2p and p.bytes > 0)
    out: dict[tuple[str, str, str, tuple[tuple[str, Any], ...]], list[Point]] = {}
    for op, op_pts in group_by(pts, lambda p: p.op).items():
        dims = varying_fields(op_pts)
        for k, grp in group_by(op_pts, lambda p: (op, p.algo, p.backend, variant_of(p, dims))).items():
            out[k] = grp
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], kv[0][1] != "library", kv[0][1], kv[0][2])))


# --------------------------------------------------------------------------- driver

def make_all(ds: Dataset, outdir: Path, sizes: Sequence[int] | None = None) -> list[FigureInfo]:
    """Write every applicable figure into ``outdir``; return them in report order."""
    outdir.mkdir(parents=True, exist_ok=True)
    style = Style.for_points(ds.measured)
    figs: list[FigureInfo] = []
    with rc_context(STYLE):
        groups = collective_groups(ds.points)
        notes = {key: figure_note((p for s in series for p in s.points), ds.runs) for key, series in groups.items()}
        for key, series in groups.items():
            figs.append(plot_busbw(key, series, style, outdir, notes[key]))
        for key, series in groups.items():
            info = plot_latency(key, series, style, outdir, notes[key])
            figs += [info] if info else []
        for key, series in groups.items():
            info = plot_ratio(key, series, style, outdir, notes[key])
            figs += [info] if info else []
        for key, pts in p2p_groups(ds.points).items():
            note = figure_note(pts, ds.runs)
            figs.append(plot_p2p(key, pts, outdir, note))
            if len({(p.src, p.dst) for p in pts}) >= 3:
                run = next((ds.runs[p.run_id] for p in pts if p.run_id in ds.runs), None)
                info = plot_pair_heatmap(key, pts, run.node_of_rank if run else [], outdir, note)
                figs += [info] if info else []
        for (op, algo, backend, variant), pts in scaling_groups(ds.points).items():
            info = plot_scaling(op, algo, backend, variant, pts, sizes, outdir, figure_note(pts, ds.runs))
            figs += [info] if info else []
    return figs
