"""Command-line front ends: ``collplot`` and ``collcompare``.

Both return an exit status instead of calling ``sys.exit`` so tests can run them
in-process (matplotlib is imported once per test session, keeping tests fast).
Exit codes: 0 ok, 1 collcompare found a regression, 2 bad input or usage.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from .load import LoadError, format_bytes, load, parse_size

EXIT_OK, EXIT_REGRESSED, EXIT_BAD_INPUT = 0, 1, 2


def _sizes(text: str) -> list[int]:
    try:
        return [parse_size(s) for s in text.split(",") if s.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _fraction(text: str) -> float:
    """Accept 0.1, 10% or 10 (percent when > 1)."""
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad threshold {text!r} (e.g. 0.10 or 10%)") from None
    if text.endswith("%") or v >= 1:
        v /= 100.0
    if not 0 <= v < 10:
        raise argparse.ArgumentTypeError(f"bad threshold {text!r}")
    return v


# --------------------------------------------------------------------------- collplot

def collplot_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="collplot",
        description="Plot collbench JSON Lines results: bandwidth/latency curves, custom vs library, "
                    "intra vs inter node p2p, scaling, α–β model; writes PNGs, report.html and summary.md.",
        epilog="example: collplot results/ -o plots --sizes 1K,1M,64M --title 'allreduce on n[1-4]'")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="*.jsonl file or folder (searched recursively)")
    p.add_argument("-o", "--outdir", required=True, type=Path, help="output folder (created if missing)")
    p.add_argument("--sizes", type=_sizes, default=None,
                   help="message sizes for the scaling plots, e.g. 1M,16M (default: smallest, mid, largest common)")
    p.add_argument("--title", default="collbench report", help="report title")
    p.add_argument("--model", action="store_true", help="also print the α–β model and crossover tables")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors and warnings")
    return p


def collplot_main(argv: Sequence[str] | None = None) -> int:
    args = collplot_parser().parse_args(argv)
    try:
        ds = load(args.inputs)
    except LoadError as err:
        print(f"collplot: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from . import plots, report  # heavy (matplotlib): only once input is known to be good

    outdir: Path = args.outdir
    figures = plots.make_all(ds, outdir, args.sizes)
    tables = report.build_tables(ds)
    html_path = report.write_html(outdir / "report.html", args.title, ds, tables, figures)
    md_path = report.write_markdown(outdir / "summary.md", args.title, ds, tables, figures)
    if args.model:
        for t in (tables.model, tables.crossovers):
            print(f"\n{t.title}\n{t.text()}")
    if not args.quiet:
        bad = sum(1 for p in ds.points if p.wrong > 0)
        if bad:
            print(f"collplot: {bad} point(s) reported wrong results — see the report's first table",
                  file=sys.stderr)
        print(f"collplot: {len(ds.points)} points from {len(ds.files)} file(s) -> {len(figures)} figures, "
              f"{html_path}, {md_path}")
    return EXIT_OK


# --------------------------------------------------------------------------- collcompare

def collcompare_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="collcompare",
        description="Compare two collbench result sets point by point with a noise-aware verdict. "
                    "Exit status: 0 no regression, 1 at least one regression, 2 bad input.",
        epilog="example: collcompare main.jsonl branch.jsonl -o cmp --threshold 5%")
    p.add_argument("before", help="baseline *.jsonl file or folder")
    p.add_argument("after", help="candidate *.jsonl file or folder")
    p.add_argument("-o", "--outdir", type=Path, default=None,
                   help="write compare.md and compare_<op>.png here (default: print only)")
    p.add_argument("--threshold", type=_fraction, default=0.10,
                   help="relative p50 change that counts, e.g. 0.10 or 10%% (default 0.10)")
    p.add_argument("--changed-only", action="store_true", help="print only points whose verdict is not 'same'")
    return p


def collcompare_main(argv: Sequence[str] | None = None) -> int:
    args = collcompare_parser().parse_args(argv)
    try:
        before = load([args.before])
        after = load([args.after])
    except LoadError as err:
        print(f"collcompare: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from . import compare as cmp

    diffs = cmp.compare(before.points, after.points, args.threshold)
    shown = [d for d in diffs if d.verdict is not cmp.Verdict.SAME] if args.changed_only else diffs
    print(cmp.diff_table(shown, args.threshold).text())
    print(f"\ncollcompare: {len(diffs)} points: {cmp.summary_line(diffs)} (threshold {args.threshold:.0%})")
    if args.outdir is not None:
        args.outdir.mkdir(parents=True, exist_ok=True)
        figs = cmp.plot_ratios(diffs, args.outdir, args.threshold)
        md = cmp.write_markdown(args.outdir / "compare.md", diffs, args.threshold, args.before, args.after, figs)
        print(f"collcompare: wrote {md} and {len(figs)} figure(s)")
    regressed = [d for d in diffs if d.verdict is cmp.Verdict.REGRESSED]
    if regressed:
        worst = max(regressed, key=lambda d: d.change or 0)
        p = worst.point
        print(f"collcompare: REGRESSION in {len(regressed)} point(s); worst {p.op}/{p.algo} {p.layout} "
              f"{format_bytes(p.bytes)} {('%+.1f%%' % (worst.change * 100)) if worst.change is not None else worst.reason}",
              file=sys.stderr)
        return EXIT_REGRESSED
    return EXIT_OK
