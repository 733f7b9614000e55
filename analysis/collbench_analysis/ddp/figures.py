"""The DDP section's figures: step sync per algorithm, one modelled step's timeline, the projected speed-up."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Iterable, Sequence

import matplotlib

matplotlib.use("Agg")
from matplotlib import rc_context  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from ..load import layout_sort_key  # noqa: E402
from ..plots import DPI, STYLE, FigureInfo, Style, add_footnote  # noqa: E402
from ..tables import fmt_num  # noqa: E402
from .model import workload_overlap, workload_projection  # noqa: E402
from .naming import (MODEL_LABEL, SECTION, TIMELINE_LABEL, model_summary, series_name, series_order,  # noqa: E402
                     varying, workload_note)
from .records import Workload, by_model, frame, latest  # noqa: E402


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)


def _style(workloads: Iterable[Workload]) -> Style:
    """The collective figures' colours per algorithm (:mod:`.palette`: the same in every figure)."""
    return Style()


def _save(fig: Figure, outdir: Path, name: str) -> str:
    fig.savefig(outdir / name, dpi=DPI)
    return name


def plot_sync(model: str, ws: Sequence[Workload], style: Style, outdir: Path) -> FigureInfo:
    """(a) Step sync time per algorithm, grouped by layout: p50 bars, p5–p95 error bars."""
    fields = varying(ws)
    layouts = sorted({w.layout for w in ws}, key=layout_sort_key)
    series = sorted({(series_name(w, fields), w.algo) for w in ws}, key=series_order)
    by_key = {(w.layout, series_name(w, fields)): w for w in ws}
    fig = Figure(figsize=(max(7.0, 1.2 + 0.5 * len(layouts) * len(series)), 5.0), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    for i, (name, algo) in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for j, lay in enumerate(layouts):
            w = by_key.get((lay, name))
            if w is None or w.step is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(w.step.p50 / 1e3)
            lo.append((w.step.p50 - w.step.lo) / 1e3)
            hi.append((w.step.hi - w.step.p50) / 1e3)
        ax.bar(xs, ys, width * 0.92, yerr=[lo, hi], capsize=3, label=name,
               color=style.color(algo), edgecolor="white", linewidth=0.5, zorder=2)
    world = {w.layout: w.world_size for w in ws}
    ax.set_xticks(range(len(layouts)))
    ax.set_xticklabels([f"{lay}\n{world[lay]} ranks" for lay in layouts])
    ax.set_xlim(-0.6, len(layouts) - 0.4)
    ax.grid(axis="x", which="both", visible=False)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("Layout (nodes × ranks per node)")
    ax.set_ylabel("Gradient sync per step, p50 (ms)")
    width = int(fig.get_figwidth() * 9)  # ≈ title characters per inch at 12 pt bold
    ax.set_title(textwrap.fill(f"DDP gradient sync per step — {model_summary(ws)}, {len(ws[0].buckets)} buckets",
                               width))
    ax.legend(title="algorithm (error bars: p5–p95)", loc="best")
    note = workload_note(ws)
    add_footnote(fig, note)
    name = _save(fig, outdir, f"ddp_sync_{_slug(model)}.png")
    return FigureInfo(SECTION, name, f"{model}: measured sync time of one DDP step (every gradient bucket "
                      "all-reduced back to back, max over ranks) per algorithm and layout, p50 with p5–p95 "
                      "error bars. Read: the shortest bar in a layout is the algorithm that syncs the gradients "
                      "fastest there.", note)


def _bar(ax: Axes, row: float, start: float, length: float, **kw: Any) -> None:
    ax.broken_barh([(start, length)], (row - 0.35, 0.7), **kw)


def plot_timeline(w: Workload, name: str, outdir: Path) -> FigureInfo:
    """(b) One modelled step: compute row (F, B, O) and each bucket's all-reduce on a comm row.

    Times in ms from the start of forward. The part of the communication after backward ends
    (exposed) is hatched; without compute only the comm row is drawn, all of it exposed.
    """
    ov = workload_overlap(w)
    c = w.compute
    f_ms = c.forward_ms if c else 0.0
    b_ms = ov.backward_us / 1e3
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    ax = fig.subplots()
    comm_row, compute_row = 0.0, 1.0
    colors = ("#4c72b0", "#8fb0dc")
    serial = c is not None and ov.share == 0.0  # no free core: the all-reduces after backward, back to back
    after = f_ms + (ov.backward_us + ov.copy_us) / 1e3
    for k in range(len(ov.bucket_us)):
        if serial:
            s = after + sum(ov.bucket_us[:k]) / 1e3
            e = s + ov.bucket_us[k] / 1e3
        else:
            s, e = f_ms + ov.start_us[k] / 1e3, f_ms + ov.end_us[k] / 1e3
        _bar(ax, comm_row, s, e - s, facecolors=colors[k % 2], edgecolor="white", linewidth=0.4)
        part = (e - s) if serial else ov.exposed_part_us(k) / 1e3
        if part > 0:
            _bar(ax, comm_row, e - part, part, facecolors="none", edgecolor="#c44e52", hatch="///", linewidth=0.6)
        if len(ov.bucket_us) <= 16 and e - s > 0:
            ax.text((s + e) / 2, comm_row, str(k), ha="center", va="center", fontsize=7, color="white")
    handles = [Patch(facecolor=colors[0], label="bucket all-reduce (measured p50)"),
               Patch(facecolor="none", edgecolor="#c44e52", hatch="///", label="exposed (after backward)")]
    end_ms = f_ms + ov.comm_end_us / 1e3
    if c is not None:
        _bar(ax, compute_row, 0.0, f_ms, facecolors="#55a868")
        _bar(ax, compute_row, f_ms, b_ms, facecolors="#dd8452")
        # After backward: DDP's copies and the exposed sync (the schedule's tail scaled by φ, plus
        # (1 − φ) of the sync: what cannot overlap without a free core).
        wait = (ov.copy_us + ov.exposed_us) / 1e3
        if wait > 0:
            _bar(ax, compute_row, f_ms + b_ms, wait, facecolors="#eeeeee", edgecolor="#c44e52", hatch="///",
                 linewidth=0.6)
        _bar(ax, compute_row, f_ms + b_ms + wait, c.optimizer_ms, facecolors="#8172b3")
        ax.plot([f_ms + r / 1e3 for r in ov.ready_us], [compute_row - 0.42] * len(ov.ready_us), "|",
                color="#333333", markersize=6)
        end_ms = f_ms + b_ms + wait + c.optimizer_ms
        ax.axvline(f_ms + b_ms, color="#333333", linestyle=":", linewidth=1)
        handles = [Patch(facecolor="#55a868", label="forward"), Patch(facecolor="#dd8452", label="backward"),
                   Patch(facecolor="#8172b3", label="optimizer"), *handles]
        ax.set_yticks([comm_row, compute_row], ["all-reduce", "compute"])
        detail = (f"exposed {fmt_num(ov.exposed_us / 1e3)} ms of {fmt_num(ov.sync_us / 1e3)} ms sync"
                  + (f" (overlap share φ = {ov.share:.2g})" if ov.share < 1 else "")
                  + (f", DDP copies {fmt_num(ov.copy_us / 1e3)} ms" if ov.copy_us > 0 else "")
                  + f", step {fmt_num(ov.step_us / 1e3)} ms")  # type: ignore[operator]
    else:
        ax.set_yticks([comm_row], ["all-reduce"])
        detail = f"no --compute-ms: nothing overlaps, exposed = all {fmt_num(ov.sync_us / 1e3)} ms"
    ax.set_xlim(0, end_ms * 1.02 if end_ms > 0 else 1)
    ax.set_ylim(-0.6, (compute_row if c else comm_row) + 0.6)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("Time in one training step (ms)" + (" (ticks: bucket ready)" if c else ""))
    ax.set_title(f"DDP step timeline — {TIMELINE_LABEL}\n" + textwrap.fill(
        f"{w.model}, {w.layout} ({w.world_size} ranks), {name}: {detail}", 95), fontsize=11)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)
    note = workload_note([w])
    profile = c.profile if c is not None else None
    profile_note = f"compute: per-layer profile {profile}, bucket ready times from it" if profile else ""
    add_footnote(fig, "; ".join(n.rstrip(".") for n in (note, profile_note) if n))
    fname = _save(fig, outdir, f"ddp_timeline_{_slug(w.model)}_{w.layout}_{_slug(name)}.png")
    how = profile_note if profile else "compute from --compute-ms spread over buckets by bytes"
    cap = (f"{w.model}, {w.layout}, {name}: one DDP step, {TIMELINE_LABEL} (bucket p50 all-reduce times, "
           f"{how}). Read: the hatched part is communication left after backward ends, the time the "
           "step loses to the sync." if c else
           f"{w.model}, {w.layout}, {name}: bucket all-reduces back to back ({TIMELINE_LABEL}). Read: without "
           "--compute-ms nothing overlaps, so the whole row is exposed sync time.")
    if serial:
        cap += (f" No free core (overlap share φ = 0: {w.online_cpus} online CPUs, {w.ranks_per_node} ranks per node): "
                "the all-reduces are drawn after backward and DDP's copies, none of them hidden.")
    return FigureInfo(SECTION, fname, cap, note)


_NODE_LINESTYLES = ("-", ":", "-.", (0, (6, 2, 1, 2)))


def plot_speedup(model: str, ws: Sequence[Workload], style: Style, outdir: Path) -> FigureInfo | None:
    """(c) Projected speed-up vs world size, one line per algorithm, ideal y = x dashed (compute only).

    One line per (algorithm, node count): 1x4 and 2x2 share a world size, and a line joining
    them would suggest a trend along n that is really a change of layout. Colour = algorithm,
    line style = node count.
    """
    fields = varying(ws)
    with_compute = [w for w in ws if w.compute is not None and w.measured]
    if not with_compute:
        return None
    fig = Figure(figsize=(8.0, 5.0), layout="constrained")
    ax = fig.subplots()
    node_counts = sorted({w.nodes for w in with_compute})
    dash = {n: _NODE_LINESTYLES[i % len(_NODE_LINESTYLES)] for i, n in enumerate(node_counts)}
    top = 1
    labelled: set[str] = set()
    lines = frame(with_compute).assign(name=[series_name(w, fields) for w in with_compute])
    for (name, algo, nodes), g in sorted(lines.groupby(["name", "algo", "nodes"], sort=False),
                                         key=lambda kv: (*series_order(kv[0][:2]), kv[0][2])):
        grp = sorted(g["record"], key=lambda w: layout_sort_key(w.layout))
        xs = [w.world_size for w in grp]
        ys = [workload_projection(w).speedup for w in grp]  # type: ignore[union-attr]
        kw = style.kw(algo, "")
        ax.plot(xs, ys, label=None if name in labelled else name, color=kw["color"], marker=kw["marker"],
                linewidth=kw["linewidth"], linestyle=dash[nodes])
        labelled.add(name)
        top = max(top, *xs)
    ax.plot([1, top], [1, top], linestyle="--", color="#888888", linewidth=1.2, label="ideal (speed-up = n)")
    if len(node_counts) > 1:
        for n in node_counts:
            ax.plot([], [], color="#555555", linestyle=dash[n], label=f"{n} node{'s' * (n > 1)}")
    ax.set_xlim(0.5, top + 0.5)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("World size n (ranks)")
    ax.set_ylabel("Projected speed-up over one device")
    ax.set_title(f"DDP projected speed-up: {model}\n{MODEL_LABEL}, not a measurement")
    ax.legend(title="algorithm" + (", nodes" if len(node_counts) > 1 else ""), loc="upper left")
    note = workload_note(with_compute)
    add_footnote(fig, note)
    name = _save(fig, outdir, f"ddp_speedup_{_slug(model)}.png")
    computes = sorted({(w.compute.forward_ms, w.compute.backward_ms, w.compute.optimizer_ms)  # type: ignore[union-attr]
                       for w in with_compute})
    cs = "; ".join(f"F={fmt_num(f)}, B={fmt_num(b)}, O={fmt_num(o)} ms" for f, b, o in computes)
    return FigureInfo(SECTION, name, f"{model}: projected speed-up over one device for the same global batch, "
                      f"T1/Tn with T1 = n·(F+B)+O and Tn = the modelled step, F+B+copies+exposed sync+O (overlap share φ; docs/ddp.md) ({cs}) — "
                      f"{MODEL_LABEL}, not a measurement; one line per algorithm and node count. Read: the closer a "
                      "line stays to the dashed ideal, the less the gradient sync limits scaling.",
                      note)


def timeline_choice(ws: Sequence[Workload]) -> Workload:
    """The record whose step the timeline shows: the largest layout, its fastest algorithm.

    Fastest by modelled step when compute is given, else by step sync p50; the largest layout
    is where communication matters most.
    """
    big = max((w.layout for w in ws), key=layout_sort_key)
    cands = [w for w in ws if w.layout == big]

    def cost(w: Workload) -> float:
        ov = workload_overlap(w)
        return ov.step_us if ov.step_us is not None else w.step.p50  # type: ignore[union-attr]

    return min(cands, key=lambda w: (cost(w), w.algo))


def make_figures(workloads: Sequence[Workload], outdir: Path) -> list[FigureInfo]:
    """Per model: sync bars, one step timeline, and the speed-up projection (when compute is known)."""
    ws = [w for w in latest(workloads) if w.measured]
    if not ws:
        return []
    outdir.mkdir(parents=True, exist_ok=True)
    style = _style(ws)
    figs: list[FigureInfo] = []
    with rc_context(STYLE):
        for model, grp in by_model(ws):
            figs.append(plot_sync(model, grp, style, outdir))
            chosen = timeline_choice(grp)
            figs.append(plot_timeline(chosen, series_name(chosen, varying(grp)), outdir))
            info = plot_speedup(model, grp, style, outdir)
            figs += [info] if info else []
    return figs
