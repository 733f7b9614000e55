"""Summary tables and the ``report.html`` / ``summary.md`` writers for collplot.

Tables are computed once (:func:`build_tables`) and rendered into both files so
the HTML report and the GitHub-readable Markdown never disagree.
"""
from __future__ import annotations

import base64
import html
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from .ddp import SECTION as DDP_SECTION, Workload, tables as ddp_tables
from .load import (
    LIBRARY_ALGO, Dataset, Point, dedupe, describe_links, format_bytes, group_by, inter_node_links,
    layout_sort_key, link_note, variant_label, variant_of, varying_fields,
)
from .model import Crossover, ModelRow, fit_models, measured_crossovers, predicted_crossovers
from .plots import FigureInfo
from .tables import Table, fmt_num

_DETAILS_ROWS = 40  # longer tables fold into <details> in the HTML report


def _series(p: Point) -> str:
    return f"{p.algo} ({p.backend})"


def _coll_groups(ds: Dataset) -> dict[tuple[str, str, str], list[Point]]:
    """(op, layout, variant label) → deduplicated measured collective points."""
    pts, _ = dedupe(p for p in ds.points if p.measured and not p.is_p2p)
    out: dict[tuple[str, str, str], list[Point]] = {}
    for op, op_pts in group_by(pts, lambda p: p.op).items():
        dims = varying_fields(op_pts)
        for (layout, var), grp in group_by(op_pts, lambda p: (p.layout, variant_of(p, dims))).items():
            out[(op, layout, variant_label(var))] = grp
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], layout_sort_key(kv[0][1]), kv[0][2])))


# --------------------------------------------------------------------------- tables

def best_algorithm_table(ds: Dataset) -> Table:
    t = Table("Best algorithm per (op, layout, size)",
              ["op", "layout", "variant", "size", "best", "p50 (µs)", "busbw (GB/s)", "runner-up", "margin",
               "vs library"],
              align="lllrlrrlrr",
              note="Lowest p50 time wins. margin = how much slower the runner-up is; "
                   "vs library = best busbw ÷ library busbw (same backend).")
    for (op, layout, var), grp in _coll_groups(ds).items():
        for size, cands in sorted(group_by(grp, lambda p: p.bytes).items()):
            ranked = sorted(cands, key=lambda p: p.time.p50)  # type: ignore[union-attr]
            best = ranked[0]
            second = ranked[1] if len(ranked) > 1 else None
            lib = next((p for p in cands if p.is_library and p.backend == best.backend), None)
            margin = f"{(second.time.p50 / best.time.p50 - 1) * 100:.1f}%" if second and best.time.p50 > 0 else "—"  # type: ignore[union-attr]
            vs_lib = f"{best.bw / lib.bw:.2f}×" if lib and lib.bw > 0 else "—"
            t.rows.append([op, layout, var or "—", format_bytes(size), _series(best), fmt_num(best.time.p50),  # type: ignore[union-attr]
                           fmt_num(best.bw), _series(second) if second else "—", margin, vs_lib])
    return t


# Node-aware vs flat. Names, not registry metadata, decide (results carry only the name):
HIER_PREFIX = "hier"  # the node-aware schedules: allreduce hier_ring / hier_leader, broadcast hier, allgather hier
HAN_ALGO = "han"  # Open MPI's own hierarchical component (coll/han) on a communicator of its own
# Not flat candidates: the libraries (their own choice, compared in columns of their own); auto (runs what a
# tuning file names, possibly a hier one); shm (zero-copy within one node only, never a whole multi-node
# collective). Every other custom algorithm (ring, rabenseifner, tree, ...) is flat: node-blind.
NOT_FLAT = frozenset({LIBRARY_ALGO, HAN_ALGO, "auto", "shm"})


def is_node_aware(algo: str) -> bool:
    return algo.startswith(HIER_PREFIX)


def is_flat(algo: str) -> bool:
    """A node-blind custom algorithm: what the node-aware ones have to beat."""
    return not is_node_aware(algo) and algo not in NOT_FLAT


@dataclass(frozen=True)
class NodeAwareRow:
    """One (op, layout, variant, backend, size) of a multi-node layout with node-aware results: p50 times, µs."""

    op: str
    layout: str
    variant: str
    backend: str
    bytes: int
    hier: tuple[tuple[str, float], ...]  # every node-aware algorithm, fastest first
    flat: tuple[str, float] | None  # the fastest flat algorithm
    library: float | None
    han: float | None
    points: tuple[Point, ...] = field(default=(), compare=False, repr=False)  # the points compared (link note)

    @property
    def best_hier(self) -> float:
        return self.hier[0][1]

    def ratio(self, p50: float | None) -> float | None:
        """``p50`` ÷ the best node-aware p50: > 1 means the node-aware algorithm is faster."""
        if p50 is None or self.best_hier <= 0:
            return None
        return p50 / self.best_hier

    @property
    def flat_ratio(self) -> float | None:
        return self.ratio(self.flat[1] if self.flat else None)

    @property
    def library_ratio(self) -> float | None:
        return self.ratio(self.library)

    @property
    def han_ratio(self) -> float | None:
        return self.ratio(self.han)


def node_aware_rows(ds: Dataset) -> list[NodeAwareRow]:
    """Per multi-node (op, layout, variant, backend, size) where a node-aware algorithm was measured.

    Points are compared within one backend only (a library's NCCL time says nothing about MPI
    schedules); as in the other tables, the last-loaded point of an identity stands for it.
    """
    rows: list[NodeAwareRow] = []
    for (op, layout, var), grp in _coll_groups(ds).items():
        if grp[0].nodes <= 1:
            continue
        for (backend, size), cands in sorted(group_by(grp, lambda p: (p.backend, p.bytes)).items()):
            p50 = {p.algo: p.time.p50 for p in cands}  # type: ignore[union-attr]
            hier = sorted(((a, t) for a, t in p50.items() if is_node_aware(a)), key=lambda at: (at[1], at[0]))
            if not hier:
                continue
            flats = sorted(((a, t) for a, t in p50.items() if is_flat(a)), key=lambda at: (at[1], at[0]))
            rows.append(NodeAwareRow(op, layout, var, backend, size, tuple(hier), flats[0] if flats else None,
                                     p50.get(LIBRARY_ALGO), p50.get(HAN_ALGO), tuple(cands)))
    return rows


def _times(r: float | None) -> str:
    return "—" if r is None else f"{r:.2f}×"


def node_aware_table(ds: Dataset) -> Table:
    """Issue 19's question, one row per multi-node size: do the hier algorithms beat what a user has anyway?

    Empty (and left out of the report) without node-aware results on a multi-node layout. Columns
    nobody measured (han, a second backend, a variant) are dropped to keep the table narrow.
    """
    rows = node_aware_rows(ds)
    note = ("p50 times. node-aware: the hier* algorithms, fastest first; best flat: the fastest node-blind custom "
            "algorithm (not library, han, auto or the single-node shm); library: the backend's own call (MPI: "
            "Open MPI's default choice); han: Open MPI's hierarchical coll/han. Ratios are p50 ÷ the best "
            "node-aware p50: > 1 means node-aware is faster.")
    links = link_note(inter_node_links((p for r in rows for p in r.points), ds.runs))
    t = Table("Node-aware vs flat",
              ["op", "layout", "variant", "backend", "size", "node-aware p50 (µs)", "best flat", "flat p50 (µs)",
               "library p50 (µs)", "han p50 (µs)", "flat ÷ hier", "library ÷ hier", "han ÷ hier"],
              align="llllrllrrrrrr", note=note + (f" {links.rstrip('.')}." if links else ""))
    one_backend = len({r.backend for r in rows}) <= 1
    for r in rows:
        t.rows.append([r.op, r.layout, r.variant or "—", "—" if one_backend else r.backend, format_bytes(r.bytes),
                       ", ".join(f"{a} {fmt_num(v)}" for a, v in r.hier), r.flat[0] if r.flat else "—",
                       fmt_num(r.flat[1]) if r.flat else "—", fmt_num(r.library), fmt_num(r.han),
                       _times(r.flat_ratio), _times(r.library_ratio), _times(r.han_ratio)])
    for header in ("variant", "backend", "han p50 (µs)", "han ÷ hier"):
        t.drop_blank_column(header)
    return t


def peak_busbw_table(ds: Dataset) -> Table:
    t = Table("Peak bus bandwidth per (op, algo, layout)",
              ["op", "layout", "variant", "algorithm", "peak busbw (GB/s)", "at size", "vs library peak"],
              align="llllrrr")
    for (op, layout, var), grp in _coll_groups(ds).items():
        peaks = {name: max(pts, key=lambda p: p.bw) for name, pts in group_by(grp, _series).items()}
        libs = {p.backend: p.bw for p in peaks.values() if p.is_library}
        for name, p in sorted(peaks.items(), key=lambda kv: -kv[1].bw):
            lib = libs.get(p.backend)
            rel = f"{p.bw / lib:.2f}×" if lib and not p.is_library else "—"
            t.rows.append([op, layout, var or "—", name, fmt_num(p.bw), format_bytes(p.bytes), rel])
    return t


def small_latency_table(ds: Dataset) -> Table:
    t = Table("Small-message latency (smallest measured size)",
              ["op", "layout", "variant", "algorithm", "size", "p50 (µs)", "p5–p95 (µs)"], align="llllrrr")
    for (op, layout, var), grp in _coll_groups(ds).items():
        rows = []
        for name, pts in group_by(grp, _series).items():
            p = min(pts, key=lambda q: q.bytes)
            rows.append((p.time.p50, [op, layout, var or "—", name, format_bytes(p.bytes), fmt_num(p.time.p50),  # type: ignore[union-attr]
                                      f"{fmt_num(p.time.lo)}–{fmt_num(p.time.hi)}"]))  # type: ignore[union-attr]
        t.rows += [r for _, r in sorted(rows, key=lambda x: x[0])]
    return t


def pingpong_table(ds: Dataset) -> Table:
    t = Table("Point-to-point: within vs across nodes",
              ["layout", "link", "pairs", "latency size", "p50 latency (µs, median)", "latency range",
               "bw size", "bw (GB/s, median)", "bibw (GB/s, median)"],
              align="llrrrrrrr",
              note="Medians over pairs; range = fastest–slowest pair. Latency is one-way (half round trip).")
    pts, _ = dedupe(p for p in ds.points if p.measured and p.is_p2p)
    for (layout, link), grp in sorted(group_by(pts, lambda p: (p.layout, p.link or "unknown")).items(),
                                      key=lambda kv: (layout_sort_key(kv[0][0]), kv[0][1] != "intra")):
        pairs = len({(p.src, p.dst) for p in grp})
        lat = [p for p in grp if p.algo == "latency"]
        row = [layout, link, str(pairs)]
        if lat:
            s = min(p.bytes for p in lat)
            v = [p.time.p50 for p in lat if p.bytes == s]  # type: ignore[union-attr]
            row += [format_bytes(s), fmt_num(statistics.median(v)), f"{fmt_num(min(v))}–{fmt_num(max(v))}"]
        else:
            row += ["—", "—", "—"]
        bws = {m: [p for p in grp if p.algo == m] for m in ("bw", "bibw")}
        big = max((p.bytes for m in bws.values() for p in m), default=None)
        row.append(format_bytes(big) if big is not None else "—")
        for m in ("bw", "bibw"):
            v = [p.bw for p in bws[m] if p.bytes == big]
            row.append(fmt_num(statistics.median(v)) if v else "—")
        t.rows.append(row)
    return t


def model_table(rows: Sequence[ModelRow]) -> Table:
    t = Table("α–β model: t = α + n·β (fit on p50)",
              ["op", "layout", "variant", "algorithm", "α (µs)", "β (µs/B)", "1/β (GB/s)", "R²",
               "max rel err", "sizes", "note"],
              align="llllrrrrrrl",
              note="Weighted least squares on relative error (sizes span decades). "
                   "If the free fit gives α < 0 the model is refitted through the origin.")
    for r in rows:
        f = r.fit
        note = "α clamped: fit through origin" if f.through_origin else ("β=0: constant" if f.beta_us_per_byte == 0 else "")
        t.rows.append([r.key.op, r.key.layout, r.key.variant_text or "—", r.key.series, fmt_num(f.alpha_us),
                       fmt_num(f.beta_us_per_byte), fmt_num(f.gbps), f"{f.r2:.4f}", f"{f.max_rel_err * 100:.1f}%",
                       f"{format_bytes(f.min_bytes)}–{format_bytes(f.max_bytes)} ({f.n_points})", note])
    return t


def crossover_table(measured: Sequence[Crossover], predicted: Sequence[Crossover]) -> Table:
    t = Table("Crossovers: where the fastest algorithm changes",
              ["op", "layout", "variant", "kind", "from", "to", "at"],
              align="lllllll",
              note="measured: between two consecutive measured sizes; predicted: intersection of the fitted α–β lines.")
    for c in sorted([*measured, *predicted], key=lambda c: (c.op, layout_sort_key(c.layout), c.variant, c.at_bytes, c.kind)):
        at = (f"{format_bytes(c.lo_bytes)} → {format_bytes(c.hi_bytes)}" if c.kind == "measured"
              else f"≈ {format_bytes(c.lo_bytes)}")
        t.rows.append([c.op, c.layout, c.variant or "—", c.kind, c.before, c.after, at])
    return t


def problems_table(ds: Dataset) -> Table:
    """Skipped points and verification failures: the things a reader must not miss."""
    t = Table("Skipped points and verification failures",
              ["op", "algorithm", "layout", "what", "points", "detail"], align="llllrl")
    t.row_classes = []
    bad = [p for p in ds.points if p.wrong > 0]
    for (op, name, layout), grp in group_by(bad, lambda p: (p.op, _series(p), p.layout)).items():
        sizes = ", ".join(format_bytes(s) for s in sorted({p.bytes for p in grp})[:6])
        t.rows.append([op, name, layout, "WRONG RESULTS", str(len(grp)),
                       f"{sum(p.wrong for p in grp)} wrong elements at {sizes}"])
        t.row_classes.append("bad")
    for (op, name, layout), grp in group_by(ds.skipped, lambda p: (p.op, _series(p), p.layout)).items():
        reasons = "; ".join(sorted({p.skip_reason or "no reason given" for p in grp}))
        t.rows.append([op, name, layout, "skipped", str(len(grp)), reasons])
        t.row_classes.append("")
    return t


def runs_table(ds: Dataset) -> Table:
    """Every run's metadata; the inter-node link only for multi-node runs (a single node crosses none)."""
    t = Table("Runs", ["run_id", "source", "start", "end / exit", "layout", "backend", "hosts", "versions",
                       "git", "slurm job", "inter-node link", "argv"], align="llllllllllll")
    for run in sorted(ds.runs.values(), key=lambda r: (r.start_time or "", r.run_id)):
        versions = ", ".join(f"{k} {v}" for k, v in run.versions.items() if v) or "—"
        if run.end_time is not None:
            end = f"{run.end_time} / {run.exit_status}"
        else:
            end = "no end record (killed?)"
        slurm = "—"
        if run.slurm:
            slurm = str(run.slurm.get("job_id", "?"))
            extra = {k: v for k, v in run.slurm.items() if k != "job_id" and v not in (None, "")}
            if extra:
                slurm += " (" + ", ".join(f"{k}={v}" for k, v in extra.items()) + ")"
        t.rows.append([run.run_id, run.source.rsplit(":", 1)[0], run.start_time or "—", end,
                       f"{run.layout} ({run.world_size} ranks)", f"{run.backend}/{run.device}",
                       ", ".join(run.hosts) or "—", versions, run.git_commit or "—", slurm,
                       run.inter_node_link if run.inter_node_link and (run.nodes or 0) > 1 else "—",
                       " ".join(run.argv) or "—"])
    return t.drop_blank_column("inter-node link")


@dataclass
class Tables:
    """Everything the report prints, in report order."""

    summary: list[Table]
    model: Table
    crossovers: Table
    problems: Table
    runs: Table
    model_rows: list[ModelRow]
    ddp: list[Table] = field(default_factory=list)  # one per model; empty without workload records
    # Figure section -> tables shown under it: hot vs cold (cache_state), stragglers (per rank).
    extra: dict[str, list[Table]] = field(default_factory=dict)

    def all(self) -> list[Table]:
        return [self.problems, *self.summary, self.model, self.crossovers, *self.ddp,
                *(t for ts in self.extra.values() for t in ts), self.runs]


def extra_tables(ds: Dataset) -> dict[str, list[Table]]:
    """The tables of the pandas modules: hot vs cold cache, stragglers."""
    from . import cache_state, result_frames, stragglers

    results, runs = result_frames.read(ds.files)
    out = {cache_state.SECTION: cache_state.tables(results), stragglers.SECTION: stragglers.tables(
        stragglers.frame(results, runs))}
    return {s: ts for s, ts in out.items() if ts}


def build_tables(ds: Dataset, workloads: Sequence[Workload] = ()) -> Tables:
    rows = fit_models(ds.points)
    node_aware = node_aware_table(ds)  # only when some multi-node layout has node-aware results
    return Tables(
        summary=[t.drop_blank_column("variant") for t in
                 (best_algorithm_table(ds), *([node_aware] if node_aware.rows else []), peak_busbw_table(ds),
                  small_latency_table(ds), pingpong_table(ds))],
        model=model_table(rows).drop_blank_column("variant"),
        crossovers=crossover_table(measured_crossovers(ds.points), predicted_crossovers(rows)).drop_blank_column("variant"),
        problems=problems_table(ds),
        runs=runs_table(ds),
        model_rows=rows,
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
th{background:#f3f4f6;text-align:left;position:sticky;top:0} td.num,th.num{text-align:right;
font-variant-numeric:tabular-nums} tr:nth-child(even) td{background:#fafafa}
tr.bad td{background:#fde2e2;font-weight:600}
.warn{background:#fff7d6;border:1px solid #e6cf6e;padding:.5rem .8rem;border-radius:4px}
figure{margin:1rem 0 2rem} figure img{max-width:100%;border:1px solid #e5e5e5}
figcaption{font-size:.9rem;color:#444} nav a{margin-right:1rem} details summary{cursor:pointer;color:#1f5fa8}
"""


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
    per_layout = {layout: inter_node_links(pts, ds.runs)
                  for layout, pts in group_by((p for p in ds.points if p.nodes > 1), lambda p: p.layout).items()}
    if not any(any(links) for links in per_layout.values()):
        return []
    return [f"inter-node link, {layout}: {describe_links(links)}"
            for layout, links in sorted(per_layout.items(), key=lambda kv: layout_sort_key(kv[0]))]


def _overview(ds: Dataset) -> list[str]:
    ops = sorted({p.op for p in ds.points})
    layouts = sorted({p.layout for p in ds.points}, key=layout_sort_key)
    return [
        f"{len(ds.files)} input file(s), {len(ds.runs)} run(s), {len(ds.points)} points "
        f"({len(ds.measured)} measured, {len(ds.skipped)} skipped)",
        f"ops: {', '.join(ops)}; layouts: {', '.join(layouts)}",
        *link_lines(ds),
        "generated " + datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") + " by collplot",
    ]


def write_html(path: Path, title: str, ds: Dataset, tables: Tables, figures: Sequence[FigureInfo]) -> Path:
    sections = _sections(tables, figures)
    anchors = {s: "fig-" + "".join(c if c.isalnum() else "-" for c in s.lower()) for s in sections}
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p class='meta'>{html.escape(line)}</p>" for line in _overview(ds)]
    nav = ["<a href='#tables'>Summary tables</a>", "<a href='#model'>α–β model</a>"]
    nav += [f"<a href='#{anchors[s]}'>{html.escape(s)}</a>" for s in sections] + ["<a href='#runs'>Runs</a>"]
    parts.append("<nav>" + "".join(nav) + "</nav>")
    if ds.warnings:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in ds.warnings)
        parts.append(f"<div class='warn'><b>Input warnings</b><ul>{items}</ul></div>")
    parts.append("<h2 id='tables'>Summary tables</h2>")
    if tables.problems.rows:
        parts.append(_html_table(tables.problems))
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
    lines += ["## Summary tables", ""]
    if tables.problems.rows:
        lines.append(tables.problems.markdown())
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
