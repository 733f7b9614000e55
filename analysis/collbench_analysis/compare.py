"""Noise-aware before/after comparison of two sets of collbench results.

A point only counts as ``regressed``/``improved`` when the p50 moved by more than
the relative threshold *and* by more than the runs' own spread (half the wider
p5–p95 band of the two sides): a 12 % change inside ±20 % jitter is not a finding.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Sequence

from .load import MATCH_FIELDS, Point, dedupe, format_bytes, group_by, match_key
from .tables import Table, fmt_num


class Verdict(str, Enum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    SAME = "same"
    ADDED = "added"
    REMOVED = "removed"
    SKIPPED = "skipped"  # skipped on at least one side: nothing to compare

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class PointDiff:
    """One matched (or one-sided) point."""

    key: tuple[Any, ...]
    before: Point | None
    after: Point | None
    verdict: Verdict
    change: float | None = None  # (after.p50 - before.p50) / before.p50
    noise_us: float | None = None
    reason: str = ""

    @property
    def point(self) -> Point:
        p = self.after or self.before
        assert p is not None
        return p

    @property
    def ratio(self) -> float | None:
        return None if self.change is None else 1.0 + self.change


def judge(before: Point, after: Point, threshold: float) -> tuple[Verdict, float | None, float | None, str]:
    """Verdict for one matched pair; see module docstring for the rule."""
    if after.wrong > 0 and before.wrong == 0:
        return Verdict.REGRESSED, None, None, f"wrong results after ({after.wrong} elements)"
    if not before.measured or not after.measured:
        side = "both" if not before.measured and not after.measured else ("before" if not before.measured else "after")
        reason = (after.skip_reason if not after.measured else before.skip_reason) or ""
        return Verdict.SKIPPED, None, None, f"skipped {side}" + (f": {reason}" if reason else "")
    b, a = before.time, after.time
    assert a is not None and b is not None
    if b.p50 <= 0:
        return Verdict.SAME, None, None, "before p50 is 0"
    diff = a.p50 - b.p50
    change = diff / b.p50
    noise = max(b.half_spread, a.half_spread)
    if change > threshold and diff > noise:
        return Verdict.REGRESSED, change, noise, ""
    if change < -threshold and -diff > noise:
        return Verdict.IMPROVED, change, noise, ""
    reason = "within noise" if abs(change) > threshold else ""
    return Verdict.SAME, change, noise, reason


def compare(before: Iterable[Point], after: Iterable[Point], threshold: float = 0.10) -> list[PointDiff]:
    """Pair points by :data:`MATCH_FIELDS`; duplicates on one side: the last loaded wins."""
    b_pts, _ = dedupe(before)
    a_pts, _ = dedupe(after)
    b_map = {match_key(p): p for p in b_pts}
    a_map = {match_key(p): p for p in a_pts}
    out: list[PointDiff] = []
    for key in list(b_map) + [k for k in a_map if k not in b_map]:
        b, a = b_map.get(key), a_map.get(key)
        if b is None:
            out.append(PointDiff(key, None, a, Verdict.ADDED))
        elif a is None:
            out.append(PointDiff(key, b, None, Verdict.REMOVED))
        else:
            verdict, change, noise, reason = judge(b, a, threshold)
            out.append(PointDiff(key, b, a, verdict, change, noise, reason))
    return sorted(out, key=_sort_key)


def _sort_key(d: PointDiff) -> tuple[Any, ...]:
    p = d.point
    return (p.op, p.world_size, p.nodes, p.algo, p.backend, p.device, p.dtype, str(p.redop), p.in_place,
            p.mode, -1 if p.src is None else p.src, -1 if p.dst is None else p.dst, p.bytes)


def _where(p: Point) -> str:
    s = f"{p.op}/{p.algo} {p.backend}/{p.device} {p.dtype}"
    if p.redop:
        s += f" {p.redop}"
    if p.in_place:
        s += " inplace"
    if p.mode != "per_iter":
        s += f" {p.mode}"
    if p.src is not None:
        s += f" {p.src}->{p.dst}"
    return s


def diff_table(diffs: Sequence[PointDiff], threshold: float) -> Table:
    t = Table("Before vs after (p50 time)",
              ["point", "layout", "size", "before p50 (µs)", "after p50 (µs)", "change", "noise (µs)", "verdict",
               "note"],
              align="llrrrrrll",
              note=f"regressed/improved: |change| > {threshold:.0%} and |Δp50| > noise "
                   "(noise = max of the two runs' (p95 − p5)/2).")
    for d in diffs:
        p = d.point
        bt = d.before.time.p50 if d.before and d.before.time else None
        at = d.after.time.p50 if d.after and d.after.time else None
        change = f"{d.change * 100:+.1f}%" if d.change is not None else "—"
        t.rows.append([_where(p), p.layout, format_bytes(p.bytes), fmt_num(bt), fmt_num(at), change,
                       fmt_num(d.noise_us), str(d.verdict), d.reason])
        t.row_classes.append("bad" if d.verdict is Verdict.REGRESSED else "")
    return t


def counts(diffs: Sequence[PointDiff]) -> dict[Verdict, int]:
    return {v: sum(1 for d in diffs if d.verdict is v) for v in Verdict}


def summary_line(diffs: Sequence[PointDiff]) -> str:
    c = counts(diffs)
    return ", ".join(f"{n} {v}" for v, n in c.items() if n) or "no points"


def write_markdown(path: Path, diffs: Sequence[PointDiff], threshold: float, before: str, after: str,
                   figures: Sequence[str]) -> Path:
    lines = ["# collcompare", "", f"- before: `{before}`", f"- after: `{after}`",
             f"- threshold: {threshold:.0%} (and beyond the runs' own p5–p95 noise)",
             f"- result: {summary_line(diffs)}", ""]
    regressed = [d for d in diffs if d.verdict is Verdict.REGRESSED]
    if regressed:
        lines += ["## Regressions", "", diff_table(regressed, threshold).markdown()]
    lines += ["## All points", "", diff_table(diffs, threshold).markdown()]
    if figures:
        lines += ["## Figures", ""] + [f"![{f}]({f})\n" for f in figures]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def plot_ratios(diffs: Sequence[PointDiff], outdir: Path, threshold: float) -> list[str]:
    """One figure per op: after/before p50 ratio vs size, one line per (algo, backend, layout…)."""
    from matplotlib import rc_context
    from matplotlib.ticker import FuncFormatter

    from .plots import STYLE, _legend, _new_figure, _save, apply_size_axis

    matched = [d for d in diffs if d.ratio is not None and d.point.bytes > 0]
    names: list[str] = []
    with rc_context(STYLE):
        for op, grp in sorted(group_by(matched, lambda d: d.point.op).items()):
            fig, (ax,) = _new_figure()
            lines = group_by(grp, lambda d: _line_label(d.point))
            for i, (label, ds) in enumerate(sorted(lines.items())):
                ds = sorted(ds, key=lambda d: d.point.bytes)
                xs = [d.point.bytes for d in ds]
                line, = ax.plot(xs, [d.ratio for d in ds], marker="o", markersize=4, label=label)
                for d in ds:
                    if d.verdict in (Verdict.REGRESSED, Verdict.IMPROVED):
                        ax.plot([d.point.bytes], [d.ratio], marker="X" if d.verdict is Verdict.REGRESSED else "P",
                                markersize=10, color="#d62728" if d.verdict is Verdict.REGRESSED else "#2ca02c",
                                linestyle="none", zorder=5)
            ax.axhspan(1 - threshold, 1 + threshold, color="#999999", alpha=0.15, linewidth=0,
                       label=f"±{threshold:.0%} threshold")
            ax.axhline(1.0, color="#222222", linewidth=1.0, linestyle="--")
            apply_size_axis(ax, [d.point.bytes for d in grp])
            ratios = [d.ratio for d in grp if d.ratio and d.ratio > 0]
            lo, hi = min(ratios + [1 - threshold]), max(ratios + [1 + threshold])
            if hi / lo > 4:  # big swings: a log axis keeps 2× faster and 2× slower symmetric
                ax.set_yscale("log", base=2)
                ax.set_ylim(lo / 1.15, hi * 1.15)
            else:
                pad = (hi - lo) * 0.08
                ax.set_ylim(lo - pad, hi + pad)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}×"))
            ax.set_ylabel("after ÷ before p50 time (> 1: slower)")
            ax.set_title(f"{op}: after vs before (X regressed, + improved)")
            _legend(ax, len(lines) + 1, title="algorithm, layout")
            names.append(_save(fig, outdir, f"compare_{op}.png"))
    return names


def _line_label(p: Point) -> str:
    s = f"{p.algo} ({p.backend}) {p.layout}"
    if p.src is not None:
        s += f" {p.src}→{p.dst}"
    if p.dtype not in ("float32", "int8"):
        s += f" {p.dtype}"
    if p.in_place:
        s += " in-place"
    return s


__all__ = ["MATCH_FIELDS", "PointDiff", "Verdict", "compare", "judge", "diff_table", "summary_line",
           "write_markdown", "plot_ratios", "counts"]
