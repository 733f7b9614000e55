"""The report's two files: ``report.html`` (self-contained: every figure embedded, long tables folded)
and ``summary.md`` (GitHub-readable: the answers, the short tables, every figure with its caption).

Both lead with the answers (best algorithm per size and layout, custom vs library, within vs across
node, DDP step time) before the detailed tables and the figure gallery.
"""
from __future__ import annotations

import base64
import html
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from ..ddp.naming import SECTION as DDP_SECTION
from ..load import Dataset, describe_links, inter_node_links, layout_sort_key
from ..plots import ANSWERS_SECTION, FigureInfo
from ..tables import NUM_CSS, Table
from .answers import BEST_GRID
from .assemble import Tables
from .runs import PROBLEMS_ID, load_warnings, problems_line

_DETAILS_ROWS = 40  # longer tables fold into <details> in the HTML report


def _sections(tables: Tables, figures: Sequence[FigureInfo]) -> list[str]:
    """Figure sections in order, plus the DDP section when it has tables but no figure."""
    sections = list(dict.fromkeys(f.section for f in figures if f.section != ANSWERS_SECTION))
    if tables.ddp and DDP_SECTION not in sections:
        sections.append(DDP_SECTION)
    sections += [s for s in tables.extra if s not in sections]
    return sections


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1280px;
     padding:0 1rem;color:#222;line-height:1.4}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2.2rem}
h3{margin:1.4rem 0 .4rem} .meta{color:#555} .note{color:#555;font-size:.9rem;margin:.2rem 0 .5rem}
table{border-collapse:collapse;font-size:.85rem;margin:.3rem 0 1rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;vertical-align:top}
th{background:#f3f4f6;text-align:left;position:sticky;top:0} tr:nth-child(even) td{background:#fafafa}
tr.bad td{background:#fde2e2;font-weight:600}
.warn{background:#fff7d6;border:1px solid #e6cf6e;padding:.5rem .8rem;border-radius:4px}
.answers{background:#f4f8fc;border:1px solid #c9dcf0;border-radius:6px;padding:.2rem 1rem .6rem}
figure{margin:1rem 0 2rem} figure img{max-width:100%;border:1px solid #e5e5e5}
figcaption{font-size:.9rem;color:#444} nav a{margin-right:1rem} details summary{cursor:pointer;color:#1f5fa8}
""" + NUM_CSS


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
    multi = ds.results[ds.results["nodes"] > 1]
    per_layout = {layout: inter_node_links(g) for layout, g in multi.groupby("layout", sort=False)}
    if not any(any(links) for links in per_layout.values()):
        return []
    return [f"inter-node link, {layout}: {describe_links(links)}"
            for layout, links in sorted(per_layout.items(), key=lambda kv: layout_sort_key(kv[0]))]


def _overview(ds: Dataset) -> list[str]:
    r = ds.results
    layouts = sorted(r["layout"].unique(), key=layout_sort_key)
    return [
        f"{len(ds.files)} input file(s), {len(ds.runs)} run(s), {len(r)} points "
        f"({int(r['measured'].sum())} measured, {int(r['skipped'].sum())} skipped)",
        f"ops: {', '.join(sorted(r['op'].unique()))}; layouts: {', '.join(layouts)}",
        *link_lines(ds),
        "generated " + datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") + " by collplot",
    ]


ANSWERS = ANSWERS_SECTION
ANSWERS_LEAD = ("What the measurements say, before the detail: per op, the fastest algorithm at each size and "
                "layout, ties within noise marked; the tables and figures below back each answer up.")
MD_SLUG = "skipped-points-and-verification-failures"  # GitHub's anchor for the table's ### heading


def _figure_html(path: Path, f: FigureInfo) -> str:
    src = _png_data_uri(path.parent / f.filename)
    return (f"<figure><a href='{html.escape(f.filename)}'><img src='{src}' alt='{html.escape(f.filename)}'>"
            f"</a><figcaption>{html.escape(f.text)} "
            f"<a href='{html.escape(f.filename)}'>{html.escape(f.filename)}</a></figcaption></figure>")


def _wrong(ds: Dataset) -> bool:
    return bool((ds.results["wrong"] > 0).any())


def write_html(path: Path, title: str, ds: Dataset, tables: Tables, figures: Sequence[FigureInfo]) -> Path:
    sections = _sections(tables, figures)
    anchors = {s: "fig-" + "".join(c if c.isalnum() else "-" for c in s.lower()) for s in sections}
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p class='meta'>{html.escape(line)}</p>" for line in _overview(ds)]
    model = tables.model_tables
    nav = ["<a href='#answers'>Answers</a>", "<a href='#tables'>Summary tables</a>"]
    nav += ["<a href='#model'>α–β model</a>"] if model else []
    nav += [f"<a href='#{anchors[s]}'>{html.escape(s)}</a>" for s in sections]
    nav += ["<a href='#problems'>Skipped points</a>"] if tables.problems.rows else []
    parts.append("<nav>" + "".join(nav + ["<a href='#runs'>Runs</a>"]) + "</nav>")
    if ds.warnings:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in ds.warnings)
        parts.append(f"<div class='warn'><b>Input warnings</b><ul>{items}</ul></div>")
    loads = load_warnings(ds)
    if loads:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in loads)
        parts.append(f"<div class='warn'><b>Loaded machine</b><ul>{items}</ul></div>")
    problems_first = _wrong(ds)  # wrong results lead the page; skips are one line
    if problems_first:
        parts.append(f"<div id='{PROBLEMS_ID}'>{_html_table(tables.problems)}</div>")
    elif tables.problems.rows:
        parts.append(f"<p class='meta'>{html.escape(problems_line(ds))}: <a href='#{PROBLEMS_ID}'>which and why</a></p>")
    parts.append(f"<section class='answers'><h2 id='answers'>{ANSWERS}</h2><p class='note'>{html.escape(ANSWERS_LEAD)}</p>")
    charts = [f for f in figures if f.section == ANSWERS_SECTION]
    parts += [_figure_html(path, f) for f in charts]
    for t in tables.answers:
        if t.title == BEST_GRID and charts:  # the charts above say it; the rows one click below
            parts.append(f"<details><summary>{html.escape(t.title)}: the table ({len(t.rows)} rows)</summary>"
                         f"{t.html()}</details>")
        else:
            parts.append(t.html())
    if not tables.answers:
        parts.append("<p>No collective, point-to-point or DDP results to answer from.</p>")
    parts.append("</section><h2 id='tables'>Summary tables</h2>")
    parts += [_html_table(t) for t in tables.summary]
    if model:
        parts.append("<h2 id='model'>α–β model and crossovers</h2>")
        parts += [f"<p class='note'>{html.escape(tables.model_note)}</p>"] if tables.model_note else []
        parts += [_html_table(t) for t in model]
    for s in sections:
        parts.append(f"<h2 id='{anchors[s]}'>{html.escape(s)}</h2>")
        parts += [_html_table(t) for t in tables.ddp] if s == DDP_SECTION else []
        parts += [_html_table(t) for t in tables.extra.get(s, [])]
        parts += [_figure_html(path, f) for f in figures if f.section == s]
    if tables.problems.rows and not problems_first:
        parts.append(f"<h2 id='{PROBLEMS_ID}'>Skipped points</h2>" + _html_table(tables.problems))
    parts.append("<h2 id='runs'>Runs</h2>" + _html_table(tables.runs) + "</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _md_table(t: Table) -> str:
    """The table, or for one longer than the HTML report shows unfolded, a line saying where it is."""
    if len(t.rows) <= _DETAILS_ROWS:
        return t.markdown()
    return (f"### {t.title}\n\n{len(t.rows)} rows: in [report.html](report.html) (this summary keeps tables of up "
            f"to {_DETAILS_ROWS} rows).\n")


def write_markdown(path: Path, title: str, ds: Dataset, tables: Tables, figures: Sequence[FigureInfo]) -> Path:
    """The compact, GitHub-readable summary: the answers, the short tables, every figure with its caption.

    Tables longer than the HTML report shows unfolded (the per-size rows, the per-rank tables, the
    models) are one line pointing at report.html, which holds everything: the example run's summary
    was 312 KB of Markdown tables that repeated the report (docs/analysis.md "collplot").
    """
    lines = [f"# {title}", ""] + [f"- {line}" for line in _overview(ds)] + [""]
    if ds.warnings:
        lines += ["**Input warnings**", ""] + [f"- {w}" for w in ds.warnings] + [""]
    loads = load_warnings(ds)
    if loads:
        lines += ["**Loaded machine**", ""] + [f"- {w}" for w in loads] + [""]
    problems_first = _wrong(ds)
    if problems_first:
        lines.append(tables.problems.markdown())
    elif tables.problems.rows:
        lines += [f"{problems_line(ds)}: [which and why](#{MD_SLUG})", ""]
    lines += [f"## {ANSWERS}", "", ANSWERS_LEAD, ""]
    for f in (f for f in figures if f.section == ANSWERS_SECTION):
        lines += [f"![{f.filename}]({f.filename})", "", f"*{f.text}*", ""]
    lines += [_md_table(t) for t in tables.answers] or ["No collective, point-to-point or DDP results to answer from.", ""]
    lines += ["## Summary tables", ""]
    lines += [_md_table(t) for t in tables.summary]
    if tables.model_tables:
        lines += ["## α–β model and crossovers", ""] + ([tables.model_note, ""] if tables.model_note else [])
        lines += [_md_table(t) for t in tables.model_tables]
    for s in _sections(tables, figures):
        lines += [f"## {s}", ""]
        lines += [_md_table(t) for t in tables.ddp] if s == DDP_SECTION else []
        lines += [_md_table(t) for t in tables.extra.get(s, [])]
        for f in (f for f in figures if f.section == s):
            lines += [f"![{f.filename}]({f.filename})", "", f"*{f.text}*", ""]  # the caption once, below
    if tables.problems.rows and not problems_first:
        lines += [_md_table(tables.problems)]
    lines += ["## Runs", "", _md_table(tables.runs)]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
