"""Stragglers (per-rank records) and hot vs cold (cache) on synthetic records: the rule's two
conditions each on their own, node naming on a two-node layout, the compact (summary-only) form,
heat maps and the report hook. The end-to-end check under mpirun is tests/harness/cache_stragglers.py."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from cb_synth import RunCtx, result, write_jsonl
from collbench_analysis import cache_state, cli, load, schema, stragglers


def per_rank(times: np.ndarray, keep_matrix: bool = True) -> dict:
    """A per_rank field as collbench writes it (summary computed the same way)."""
    n, m = times.shape
    slowest = np.bincount(np.argmax(times, axis=0), minlength=n)
    q25, q50, q75 = np.percentile(times, [25, 50, 75], axis=1)
    skew = np.zeros_like(times)
    return {"start": "agreed", "ranks": n, "samples": m,
            "time_us": times.round(3).tolist() if keep_matrix else None,
            "start_skew_us": skew.tolist() if keep_matrix else None,
            "summary": {"time_p25_us": q25.tolist(), "time_p50_us": q50.tolist(), "time_p75_us": q75.tolist(),
                        "slowest_samples": slowest.tolist(), "start_skew_p50_us": np.median(skew, axis=1).tolist()}}


def point(ctx: RunCtx, times: np.ndarray, algo: str = "ring", nbytes: int = 1024, keep_matrix: bool = True) -> dict:
    rec = result(ctx, "allreduce", algo, nbytes, float(np.median(times.max(axis=0))), cache="hot")
    rec["per_rank"] = per_rank(times, keep_matrix)
    return rec


def noise(rng: np.random.Generator, n: int, m: int, base: float = 50.0) -> np.ndarray:
    return base + rng.gamma(2.0, 3.0, size=(n, m))


def test_binomial_tail_is_exact():
    assert stragglers.binomial_tail(0, 10, Fraction(1, 3)) == 1.0
    assert stragglers.binomial_tail(10, 10, Fraction(1, 2)) == pytest.approx(2 ** -10)
    assert stragglers.binomial_tail(2, 3, Fraction(1, 2)) == pytest.approx(0.5)


def test_planted_rank_on_a_two_node_layout_is_named_with_its_node(tmp_path: Path):
    rng = np.random.default_rng(1)
    ctx = RunCtx("a" * 16, 2, 2)  # ranks 0,1 on node 0 and 2,3 on node 1
    t = noise(rng, 4, 40)
    t[3] += 200.0  # rank 3 (node 1) spins 200 us per call
    path = write_jsonl(tmp_path / "r.jsonl", [ctx.record(), point(ctx, t), ctx.end(1)])
    for line in path.read_text().splitlines():
        assert schema.first_error(json.loads(line), strict=True) is None
    pts = stragglers.load([path])
    assert len(pts) == 1
    r = pts.iloc[0]
    assert (r["slowest_rank"], r["slowest_node"], r["flagged"]) == (3, 1, True)
    assert r["slowest_host"] == ctx.record()["hosts"][1]
    assert r["slowest_share"] == 1.0


def test_no_straggler_is_flagged_in_noise():
    for seed in range(50):  # 50 independent points: the rule's false-alarm rate stays at ~ALPHA
        t = noise(np.random.default_rng(seed), 3, 30)
        assert not stragglers.analyse_matrix(t, [0, 0, 0], ["h"] * 3).flagged, seed


def test_each_condition_alone_is_not_enough():
    rng = np.random.default_rng(3)
    # Last in every sample but by a hair (a structural order): rule 2 says no.
    t = noise(rng, 3, 40)
    t[2] = t[:2].max(axis=0) + 0.01
    v = stragglers.analyse_matrix(t, [0, 0, 0], ["h"] * 3)
    assert v.slowest_rank == 2 and v.slowest_share == 1.0 and not v.flagged and "noise" in v.reason
    # Last because a barrier released it last: a lead of about its start skew is start spread.
    t = 100.0 + rng.normal(0, 0.2, size=(3, 40))
    skew = np.zeros_like(t)
    skew[1] = 30.0
    t[1] += 30.0
    v = stragglers.analyse_matrix(t, [0, 0, 0], ["h"] * 3, skew)
    assert v.slowest_rank == 1 and v.slowest_share == 1.0 and not v.flagged, v
    assert stragglers.analyse_matrix(t, [0, 0, 0], ["h"] * 3).flagged, "without the skews the lead is not explained"
    # Two ranks, one last by 2 % in every sample: consistent but immaterial (the 10 % floor).
    t = 100.0 + rng.normal(0, 0.1, size=(2, 40))
    t[0] += 2.0
    v = stragglers.analyse_matrix(t, [0, 0], ["h"] * 2)
    assert v.slowest_rank == 0 and not v.flagged and v.noise_us == pytest.approx(10.0, rel=0.01), v
    t[0] += 20.0
    assert stragglers.analyse_matrix(t, [0, 0], ["h"] * 2).flagged
    # One huge outlier sample: median not above the others', not slowest in half: no.
    t = noise(rng, 3, 40)
    t[1, 5] += 10_000
    assert not stragglers.analyse_matrix(t, [0, 0, 0], ["h"] * 3).flagged
    # Too few samples: no verdict.
    t = noise(rng, 3, 5)
    t[0] += 500
    v = stragglers.analyse_matrix(t, [0, 0, 0], ["h"] * 3)
    assert not v.flagged and "no verdict" in v.reason


def test_summary_only_records_give_the_same_verdict(tmp_path: Path):
    rng = np.random.default_rng(4)
    ctx = RunCtx("b" * 16, 1, 3)
    t = noise(rng, 3, 40)
    t[1] += 150
    full = point(ctx, t)
    compact = point(ctx, t, algo="library", keep_matrix=False)
    path = write_jsonl(tmp_path / "r.jsonl", [ctx.record(), full, compact, ctx.end(2)])
    pts = stragglers.load([path])
    assert list(pts["flagged"]) == [True, True] and list(pts["slowest_rank"]) == [1, 1]
    assert pts["matrix"].isna().tolist() == [False, True]


def test_report_shows_tables_and_heat_maps(tmp_path: Path):
    rng = np.random.default_rng(5)
    ctx = RunCtx("c" * 16, 1, 3)
    t = noise(rng, 3, 30)
    t[2] += 300
    hot = result(ctx, "allreduce", "ring", 1 << 20, 100.0, cache="hot")
    cold = result(ctx, "allreduce", "ring", 1 << 20, 130.0, cache="cold",
                  cache_pool={"bytes": 64 << 20, "sets": 32, "set_bytes": 2 << 20, "llc_bytes": 32 << 20,
                              "llc_source": "sysfs", "verified_sets": 32})
    for rec in (hot, cold):
        assert schema.first_error(rec, strict=True) is None
    inp = write_jsonl(tmp_path / "in" / "r.jsonl", [ctx.record(), point(ctx, t), hot, cold, ctx.end(3)])
    pairs = cache_state.pairs(load([inp]).results)
    assert len(pairs) == 1 and pairs.iloc[0]["ratio"] == pytest.approx(1.3)
    assert pairs.iloc[0]["pool_bytes"] == 64 << 20
    out = tmp_path / "plots"
    assert cli.collplot_main([str(inp), "-o", str(out)]) == 0
    html = (out / "report.html").read_text()
    assert cache_state.SECTION in html and "Hot vs cold cache" in html and "1.30×" in html
    assert stragglers.SECTION in html and "Slowest rank per point" in html
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert any(p.startswith("stragglers_allreduce_ring_1024") for p in pngs), pngs
    assert "cache_hot_cold_1x3.png" in pngs
