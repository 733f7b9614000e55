"""collcompare: statistics (corrections, estimates), verdicts on synthetic runs, outputs and exit codes.

The rates on real collbench files (A/A, planted slowdown, machine drift) are in test_compare_fixtures.py.
"""
from __future__ import annotations

import math
import subprocess
from collections import Counter
import sys
from pathlib import Path

import numpy as np
import pytest

from cb_synth import RunCtx, result, with_samples, write_jsonl
from collbench_analysis.cli import collcompare_main
from collbench_analysis.compare import Verdict, adjust, compare, resample_percentiles, robust_var, run_estimate
from collbench_analysis.load import load
from conftest import ANALYSIS

SIZES = [8 << k for k in range(0, 20, 1)]  # 8 B … 4 MiB
ALGOS = {"library": 1.0, "ring": 1.3, "recursive_doubling": 0.9, "rabenseifner": 1.1}


def base_time(algo: str, nbytes: int) -> float:
    return ALGOS[algo] * (10.0 + nbytes * 2e-4)


def synth_run(name: str, seed: int, *, machine: float = 1.0, plant: dict | None = None, samples: int = 30,
              noise: float = 0.08, run_jitter: float = 0.0, ops: tuple[str, ...] = ("allreduce",)) -> list[dict]:
    """One run: every algo × size, skewed samples; `machine` scales every time (drift), `plant`
    {(algo, min_bytes): factor} slows one algorithm, `run_jitter` a per-point run-to-run wobble."""
    ctx = RunCtx(name, 1, 2)
    rng = np.random.default_rng(seed)
    recs = [ctx.record()]
    for op in ops:
        for n in SIZES:
            wobble = machine * math.exp(rng.normal(0, run_jitter))
            for algo in ALGOS:
                t = base_time(algo, n) * wobble
                for (a, lo), f in (plant or {}).items():
                    if algo == a and n >= lo:
                        t *= f
                # as measured: a tight floor plus interference that only ever adds time (15 % of samples)
                x = t * np.exp(rng.normal(0, noise / 4, samples))
                x *= np.where(rng.random(samples) < 0.15, 1 + rng.exponential(5 * noise, samples), 1.0)
                recs.append(with_samples(result(ctx, op, algo, n, t), x))
    recs.append(ctx.end(len(recs) - 1))
    return recs


def run_compare(tmp_path: Path, before: list[list[dict]], after: list[list[dict]], **kw):
    for side, runs in (("b", before), ("a", after)):
        for i, recs in enumerate(runs):
            write_jsonl(tmp_path / side / f"run{i}.jsonl", recs)
    return compare(load([tmp_path / "b"]).results, load([tmp_path / "a"]).results, **kw)


def flagged(cmp) -> list:
    return [d for d in cmp.diffs if d.verdict in (Verdict.REGRESSED, Verdict.IMPROVED)]


# --------------------------------------------------------------------------- pure statistics

def test_adjust_matches_the_textbook_values() -> None:
    p = [0.01, 0.04, 0.03, 0.5]
    assert adjust(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert adjust(p, "bh") == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])
    assert adjust([], "bh") == []
    with pytest.raises(ValueError):
        adjust(p, "bonferroni-ish")


def test_robust_var_ignores_the_few_that_moved() -> None:
    rng = np.random.default_rng(1)
    values = list(rng.normal(0, 0.1, 200)) + [5.0] * 10
    assert robust_var(values) == pytest.approx(0.01, rel=0.3)


def test_resample_percentiles_is_numpy_percentile_bit_for_bit() -> None:
    """The bootstrap's sort-free percentiles equal np.percentile over each resample exactly: with
    ties, a constant sample, every index rule's edge (q = 0, 100, a whole virtual index) and one row."""
    rng = np.random.default_rng(7)
    for trial in range(400):
        n = int(rng.integers(2, 90))
        x = rng.lognormal(size=n) * 10
        if trial % 3 == 0:
            x = np.round(x, 1)
        if trial % 11 == 0:
            x = np.full(n, 2.5)
        idx = rng.integers(0, n, size=(int(rng.integers(1, 40)), n))
        whole = 100.0 * 3 / (n - 1) if n > 3 else 50.0  # virtual index 3
        for q in (0.0, 5.0, 10.0, 50.0, whole, 99.0, 100.0, float(rng.uniform(0, 100))):
            want, got = np.percentile(x[idx], q, axis=1), resample_percentiles(x, idx, q)
            assert np.array_equal(want, got), (n, q, want[:4], got[:4])


def test_run_estimate_uses_samples_else_the_p5_p95_width(tmp_path: Path) -> None:
    ctx = RunCtx("r", 1, 2)
    rng = np.random.default_rng(3)
    x = 100 * np.exp(rng.normal(0, 0.1, 400))
    recs = [ctx.record(), with_samples(result(ctx, "allreduce", "ring", 64, 100.0), x),
            result(ctx, "allreduce", "ring", 128, 100.0, spread=0.1)]
    pts = {p.bytes: p for p in load([write_jsonl(tmp_path / "r.jsonl", recs)]).results.itertuples(index=False)}
    est = run_estimate(pts[64])
    assert est.n == 400 and math.exp(est.log_m) == pytest.approx(np.median(x), rel=1e-4)  # samples_us: 1 ns
    # the median of 400 lognormal(σ=0.1) samples: se ≈ 1.2533 · 0.1 / √400 ≈ 0.0063 on the log scale
    assert math.sqrt(est.var) == pytest.approx(0.0063, rel=0.35)
    old = run_estimate(pts[128])  # no samples_us: from p5–p95 (±10 %) and 20 iterations
    assert old.n == 20 and math.sqrt(old.var) == pytest.approx(1.2533 * 20 / 3.29 / math.sqrt(20) / 100, rel=1e-6)


# --------------------------------------------------------------------------- verdicts

def test_aa_flags_nothing_and_controls_are_not_judged(tmp_path: Path) -> None:
    cmp = run_compare(tmp_path, [synth_run("a", 1, run_jitter=0.05)], [synth_run("b", 2, run_jitter=0.05)])
    assert flagged(cmp) == []
    assert Counter(d.verdict for d in cmp.diffs) == {Verdict.UNCHANGED: 3 * len(SIZES), Verdict.CONTROL: len(SIZES)}
    assert "control-normalised" in cmp.method_sentence() and "one run per side" in cmp.method_sentence()


def test_planted_slowdown_is_found_where_it_is_and_nowhere_else(tmp_path: Path) -> None:
    cmp = run_compare(tmp_path, [synth_run("a", 1)], [synth_run("b", 2, plant={("ring", 65536): 1.2})])
    hit = {(d.point.algo, d.point.bytes) for d in cmp.diffs if d.verdict is Verdict.REGRESSED}
    assert hit == {("ring", n) for n in SIZES if n >= 65536}
    assert all(d.verdict is not Verdict.IMPROVED for d in cmp.diffs)
    ring = [d for d in cmp.diffs if d.point.algo == "ring" and d.point.bytes >= 65536]
    assert all(d.ci[0] < 0.2 < d.ci[1] or abs(d.change - 0.2) < 0.05 for d in ring)


def test_uniform_machine_drift_is_reported_not_flagged(tmp_path: Path) -> None:
    before, after = [synth_run("a", 1)], [synth_run("b", 2, machine=1.38, plant={("ring", 65536): 1.2})]
    cmp = run_compare(tmp_path, before, after)
    assert cmp.drift.change == pytest.approx(0.38, abs=0.03) and cmp.drift.points == len(SIZES)
    assert "the machine is 38% slower in AFTER, median over 20 control point(s)" in cmp.drift.sentence()
    assert {(d.point.algo, d.point.bytes) for d in flagged(cmp)} == {("ring", n) for n in SIZES if n >= 65536}
    raw = compare(load([tmp_path / "b"]).results, load([tmp_path / "a"]).results, mode="raw")
    assert len([d for d in raw.diffs if d.verdict is Verdict.REGRESSED]) == 4 * len(SIZES)  # raw: all of them


def test_replicate_runs_give_the_between_run_variance(tmp_path: Path) -> None:
    # every run wobbles per point by 15 % (beyond the threshold): one run per side would be a coin toss
    before = [synth_run(f"a{i}", 10 + i, run_jitter=0.15) for i in range(3)]
    after = [synth_run(f"b{i}", 20 + i, run_jitter=0.15, plant={("ring", 1 << 20): 1.6}) for i in range(3)]
    cmp = run_compare(tmp_path, before, after)
    assert cmp.runs == (3, 3) and "each point's replicate runs" in cmp.method_sentence()
    assert all(d.runs == (3, 3) for d in cmp.diffs if d.verdict is not Verdict.CONTROL)
    wrong = [d for d in flagged(cmp) if not (d.point.algo == "ring" and d.point.bytes >= 1 << 20)]
    assert len(wrong) <= 0.05 * 3 * len(SIZES)
    assert sum(1 for d in cmp.diffs if d.verdict is Verdict.REGRESSED and d.point.algo == "ring") >= 2


def test_threshold_and_significance_are_both_needed(tmp_path: Path) -> None:
    before, after = [synth_run("a", 1, noise=0.01)], [synth_run("b", 2, noise=0.01, plant={("ring", 8): 1.05})]
    loose = run_compare(tmp_path, before, after, threshold=0.03)
    assert {d.point.algo for d in flagged(loose)} == {"ring"}
    strict = compare(load([tmp_path / "b"]).results, load([tmp_path / "a"]).results, threshold=0.10)
    assert flagged(strict) == []
    notes = {d.reason for d in strict.diffs if d.point.algo == "ring"}
    assert notes == {"significant, below the threshold"}


def test_too_few_samples_or_no_control_is_inconclusive(tmp_path: Path) -> None:
    ctx = RunCtx("r", 1, 2)
    few = [ctx.record(), with_samples(result(ctx, "allreduce", "library", 64, 10.0), [10, 11, 10]),
           with_samples(result(ctx, "allreduce", "ring", 64, 10.0), [10, 11, 10]),
           with_samples(result(ctx, "allreduce", "ring", 128, 10.0), [10.0] * 20)]
    cmp = run_compare(tmp_path, [few], [few])
    v = {(d.point.algo, d.point.bytes): (d.verdict, d.reason) for d in cmp.diffs}
    assert v[("ring", 64)] == (Verdict.INCONCLUSIVE, "too few samples (< 5 in a run)")
    assert v[("ring", 128)][0] is Verdict.INCONCLUSIVE and v[("ring", 128)][1].startswith("no control point")


def test_wrong_added_removed_skipped(tmp_path: Path) -> None:
    ctx = RunCtx("r", 1, 2)
    rec = lambda algo, n, **kw: result(ctx, "allreduce", algo, n, 10.0, **kw)  # noqa: E731
    before = [ctx.record(), rec("library", 8), rec("ring", 8), rec("naive", 8), rec("tree", 8)]
    after = [ctx.record(), rec("library", 8), rec("ring", 8, wrong=3), rec("butterfly", 8),
             result(ctx, "allreduce", "tree", 8, None, skip_reason="NotSupported: odd")]
    v = {d.point.algo: d.verdict for d in run_compare(tmp_path, [before], [after]).diffs}
    assert v == {"library": Verdict.CONTROL, "ring": Verdict.REGRESSED, "naive": Verdict.REMOVED,
                 "butterfly": Verdict.ADDED, "tree": Verdict.SKIPPED}


# --------------------------------------------------------------------------- command line

def test_cli_reports_changes_grouped_with_ci_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_jsonl(tmp_path / "b.jsonl", synth_run("a", 1))
    write_jsonl(tmp_path / "a.jsonl", synth_run("b", 2, machine=1.3, plant={("ring", 65536): 1.25}))
    out = tmp_path / "cmp"
    assert collcompare_main([str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl"), "-o", str(out)]) == 1
    cap = capsys.readouterr()
    assert "the machine is 30% slower in AFTER" in cap.out
    rows = [line for line in cap.out.splitlines() if line.endswith("regressed")]
    assert len(rows) == sum(1 for n in SIZES if n >= 65536)
    assert sum(1 for r in rows if "allreduce/ring" in r) == 1, "grouped: the series is named once"
    assert all("[+" in r for r in rows), "each change carries its 95 % CI"
    assert "unchanged" not in cap.out.split("Changed points")[1], "the text lists only changed points"
    assert "REGRESSION in 7 point(s); worst allreduce/ring" in cap.err
    png = (out / "compare_allreduce.png").read_bytes()
    assert png[:4] == b"\x89PNG" and len(png) > 20000
    html = (out / "compare.html").read_text()
    assert "data:image/png;base64," in html and "the machine is 30% slower" in html
    assert "## Changed points" in (out / "compare.md").read_text()


def test_cli_exit_0_on_improvement_and_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_jsonl(tmp_path / "b.jsonl", synth_run("a", 1))
    write_jsonl(tmp_path / "a.jsonl", synth_run("b", 2, plant={("ring", 8): 0.7}))
    b, a = str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl")
    assert collcompare_main([b, a]) == 0
    assert "improved" in capsys.readouterr().out
    assert collcompare_main([a, b, "--correction", "holm", "--alpha", "0.01", "--threshold", "20%"]) == 1
    assert "Holm-corrected p < 0.01 and |change| > 20%" in capsys.readouterr().out
    assert collcompare_main([a, b, "--quantile", "50"]) == 1
    assert "on each point's median" in capsys.readouterr().out
    assert collcompare_main([b, b, "--all", "--mode", "raw"]) == 0
    out = capsys.readouterr().out
    assert "raw (absolute times)" in out and sum(line.endswith("unchanged") and "collcompare:" not in line for line in out.splitlines()) == 4 * len(SIZES)
    assert collcompare_main([b, a, "--control", "recursive_doubling"]) == 0  # ring: 0.7 vs rd: still improved
    assert "recursive_doubling" in capsys.readouterr().out


def test_cli_subprocess_exit_codes(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "b.jsonl", synth_run("a", 1))
    write_jsonl(tmp_path / "a.jsonl", synth_run("b", 2, plant={("ring", 65536): 1.3}))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"run","schema":"collbench/0","run_id":"x"}\n')
    b, a = str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl")
    script = str(ANALYSIS / "collcompare")
    codes = [subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=120)
             for args in ([b, a], [a, a], [b, str(bad)], [b, a, "--alpha", "2"], [b, a, "--quantile", "100"])]
    assert [c.returncode for c in codes] == [1, 0, 2, 2, 2]
    assert "unsupported schema 'collbench/0'" in codes[2].stderr and "Traceback" not in codes[2].stderr
    assert "bad alpha '2'" in codes[3].stderr and "bad quantile '100'" in codes[4].stderr

