"""Issue 33 part 6: the report and colltune decide ties by one rule, and a small run gets a small report."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

from cb_synth import RunCtx, result, write_jsonl
from collbench_analysis import load, ranking, report, tune
from collbench_analysis.cli import collplot_main, colltune_main
from collbench_analysis.model import MIN_FIT_SIZES, fit_models, fits_enough

# The case at 1M: ring 4 % faster than the library, its p5–p95 band (±5 %) holding the library's p50.
# 1K: the library clearly faster; 32K: ring clearly faster.
TIMES = {1024: {"library": (1.63, 0.05), "ring": (3.04, 0.05)},
         32768: {"library": (35.1, 0.05), "ring": (23.8, 0.05)},
         1 << 20: {"library": (441.6, 0.05), "ring": (424.6, 0.05)}}


def _six_points(root: Path) -> Path:
    """A 6-point run: 2 algorithms x 3 sizes, one layout (mpirun -np 2 ... --algo ring,library -b 1K -e 1M -f 32)."""
    ctx = RunCtx("six", 1, 2)
    recs = [ctx.record()] + [result(ctx, "allreduce", a, n, t, spread=sp, efficiency=0.1)
                             for n, by in TIMES.items() for a, (t, sp) in by.items()]
    return write_jsonl(root / "six.jsonl", recs + [ctx.end(len(recs) - 1)])


def test_the_rule_best_margin_and_tie() -> None:
    ring, lib = ranking.Candidate("ring", 10.0, 9.5, 10.5, rank=30), ranking.Candidate("library", 10.4, 9.9, 10.9, rank=0)
    ch = ranking.choose(64, [ring, lib])
    assert ch.best.algo == "ring" and round(ch.margin, 3) == 0.04 and ch.within_noise
    assert ch.choice.algo == "library" and ch.tied == ("library", "ring")
    clear = ranking.choose(64, [ring, ranking.Candidate("library", 10.6, 10.1, 11.1, rank=0)])  # 10.6 > p95 10.5
    assert clear.choice.algo == "ring" and not clear.within_noise and clear.tied == ("ring",)
    assert tune.choose is ranking.choose and tune.Candidate is ranking.Candidate  # colltune's is this one


RANKING_CASES = Path(__file__).resolve().parents[1] / "common" / "ranking_cases.json"


def test_the_rule_agrees_with_the_tables_best_column() -> None:
    """The cases tests/harness/test_ranking.cpp runs through the terminal's rule (report/ranking.hpp)."""
    for case in json.loads(RANKING_CASES.read_text())["cases"]:
        cands = [ranking.Candidate(c["algo"], c["p50"], c["p5"], c["p95"], rank=c["rank"]) for c in case["candidates"]]
        ch = ranking.choose(64, cands)
        assert ch.best.algo == case["best"], case["name"]
        assert (ch.runner_up.algo if ch.runner_up else None) == case["runner_up"], case["name"]
        margin = 0.0 if math.isnan(ch.margin) else ch.margin
        assert abs(margin - case["margin"]) < 1e-12, case["name"]
        assert ch.within_noise == case["tied"], case["name"]


def test_report_and_colltune_agree_on_ties(tmp_path: Path, capsys) -> None:
    path = _six_points(tmp_path / "in")
    ds = load([path])
    r = report.ranked(report.collectives(ds)).set_index("bytes")
    t = tune.tune(ds)
    (entry,) = t.entries
    by_size = {c.bytes: c for c in entry.choices}
    for n in TIMES:
        got = by_size[n]
        assert report._algo_of(r.at[n, "choice"]) == got.choice.algo
        assert tuple(map(report._algo_of, r.at[n, "tied"])) == got.tied
    assert by_size[1 << 20].tied == ("library", "ring") and by_size[1 << 20].choice.algo == "library"
    # The report's table says the same: the tie, and the 4 % margin marked as inside the spread.
    best = next(x for x in report.build_tables(ds).summary if x.title == "Best algorithm per (op, layout, size)")
    row = best.frame.set_index("size").loc["1M"]
    assert row["answer"] == "library ≈ ring (within noise)" and row["fastest"] == "ring (mpi)"
    assert row["margin"] == "≈ (+4.0%)"
    assert best.frame.set_index("size").loc["32K", "margin"] == "+47.5%"
    # colltune's own output on the same file names the same tied set.
    assert colltune_main([str(path), "-o", str(tmp_path / "t.yaml")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("1M"))
    assert line.rstrip().endswith("library, ring") and " library " in f" {line.split()[1]} "
    # Measured crossovers follow the answer too (where colltune's ranges change): no flip at the tie.
    cross = report.build_tables(ds).crossovers.frame
    assert list(zip(cross["from"], cross["to"])) == [("library (mpi)", "ring (mpi)"), ("ring (mpi)", "library (mpi)")]
    assert [r.algo for r in entry.ranges] == ["library", "ring", "library"]


def test_a_tiny_run_gets_a_small_report(tmp_path: Path) -> None:
    path = _six_points(tmp_path / "in")
    out = tmp_path / "out"
    assert collplot_main([str(path), "-o", str(out), "-q"]) == 0
    # Two figures: the bandwidth curve and the efficiency; no latency (2 sizes ≤ 64K), no ratio (one custom line,
    # 3 sizes), no one-row answers chart.
    assert sorted(p.name for p in out.glob("*.png")) == ["busbw_allreduce_1x2.png",
                                                         "efficiency_allreduce_1x2_float32.png"]
    page = (out / "report.html").read_text()
    assert len(page.encode()) < 200_000  # was 349 KB with 5 figures
    # No α–β fit from 3 sizes, so no model table, no predicted crossover; no table of nothing but '—'.
    assert not fits_enough(TIMES) and fit_models(load([path]).results).empty
    assert "α–β model: t = α" not in page and "<td>predicted</td>" not in page and "<td>measured</td>" in page
    assert "No α–β fit: a fit needs at least 5 distinct sizes" in page
    assert "Point-to-point" not in page
    tables = re.findall(r"<table.*?</table>", page, re.S)
    # the answers per size, custom vs library, best algorithm, peak busbw, small-message latency, crossovers, runs
    # (a real run adds its hardware table: 8; before, 10 with an all-'—' point-to-point table and the α–β model)
    assert len(tables) == 7
    for t in tables:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", t, re.S)
        assert cells and any(c.strip() not in ("—", "") for c in cells)
    md = (out / "summary.md").read_text()
    assert "α–β model: t = α" not in md and md.count("![") == 2


def test_fit_needs_five_sizes_over_two_decades(tmp_path: Path) -> None:
    ctx = RunCtx("fit", 1, 2)
    sizes = [1024 << k for k in range(MIN_FIT_SIZES)]  # 5 sizes, 16x: not two decades
    recs = [ctx.record()] + [result(ctx, "allreduce", "ring", n, 2.0 + n * 1e-3) for n in sizes]
    assert fit_models(load([write_jsonl(tmp_path / "a.jsonl", recs)]).results).empty
    wide = [8 << (2 * k) for k in range(MIN_FIT_SIZES)]  # 8 B .. 2 KiB: 256x
    recs = [ctx.record()] + [result(ctx, "allreduce", "ring", n, 2.0 + n * 1e-3) for n in wide]
    fit = fit_models(load([write_jsonl(tmp_path / "b.jsonl", recs)]).results)
    assert len(fit) == 1 and fit.iloc[0].n_points == MIN_FIT_SIZES
