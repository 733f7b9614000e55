"""collcompare on real collbench runs recorded on this project's shared 2-core machine (fixtures/capture.sh):
A/A (runs against runs, halves of one run), a planted 20 % slowdown, and a run under a competing load.

Each file: `mpirun -np 2 collbench --op allreduce,broadcast --algo all --interleave -b 8 -e 4M -n 50`
(9 algorithms × 20 sizes, 40 of them library controls, 50 samples each), replayed deterministically.
What they show about the method is in the asserts; the rates are printed in analysis/README.md.
"""
from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Iterable

import pytest

from cb_synth import with_samples, write_jsonl
from collbench_analysis.cli import collcompare_main
from collbench_analysis.compare import CHANGED, Comparison, Verdict, compare
from collbench_analysis.load import Point, load

FIXTURES = Path(__file__).resolve().parent / "fixtures"
AA_RUNS = ("aa1", "aa2", "aa3", "aa4")
AA_RATE = 0.05  # the bound on points flagged (either direction) when nothing changed
PLANTED = ("ring", 65536)  # COLLBENCH_TEST_FAULT=delay:algo=ring:min_bytes=65536:percent=20


@pytest.fixture(scope="module")
def points(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Point]]:
    out = tmp_path_factory.mktemp("fixtures")
    loaded = {}
    for gz in sorted(FIXTURES.glob("*.jsonl.gz")):
        path = out / gz.name[: -len(".gz")]
        path.write_bytes(gzip.decompress(gz.read_bytes()))
        loaded[path.stem] = load([path]).points
    assert set(loaded) == {*AA_RUNS, "slow1", "slow2", "load"}
    return loaded


def run(points: dict[str, list[Point]], before: Iterable[str], after: Iterable[str], **kw) -> Comparison:
    return compare([p for n in before for p in points[n]], [p for n in after for p in points[n]], **kw)


def judged(cmp: Comparison) -> list:
    return [d for d in cmp.diffs if d.verdict in (*CHANGED, Verdict.UNCHANGED)]


def rate(diffs: list) -> float:
    return sum(d.verdict in CHANGED for d in diffs) / len(diffs)


def planted(d) -> bool:
    return d.point.algo == PLANTED[0] and d.point.bytes >= PLANTED[1]


def test_fixtures_are_real_runs_with_samples(points: dict[str, list[Point]]) -> None:
    measured = [p for p in points["aa1"] if p.measured]
    assert len(measured) == 180 and all(p.samples and len(p.samples) == 50 for p in measured)
    assert sum(p.algo == "library" for p in measured) == 40


def test_aa_one_run_per_side_flags_at_most_5_percent(points: dict[str, list[Point]]) -> None:
    """Every ordered pair of the four A/A runs. Seen: 0–3 of 140 judged points flagged."""
    for b, a in itertools.permutations(AA_RUNS, 2):
        cmp = run(points, [b], [a])
        assert len(judged(cmp)) == 140 and rate(judged(cmp)) <= AA_RATE, (b, a)
        assert all(d.method == "normalised" for d in judged(cmp))


def test_aa_two_runs_per_side_use_the_replicates(points: dict[str, list[Point]]) -> None:
    cmp = run(points, ["aa1", "aa2"], ["aa3", "aa4"])
    assert cmp.runs == (2, 2) and "from the replicate runs" in cmp.method_sentence()
    assert rate(judged(cmp)) <= AA_RATE


@pytest.mark.parametrize("name", [*AA_RUNS, "slow1"])
def test_aa_two_halves_of_one_run_exit_0(points: dict[str, list[Point]], tmp_path: Path, name: str) -> None:
    """Each point's first 25 samples against its last 25 (interleaved: both halves saw one machine)."""
    src = FIXTURES / f"{name}.jsonl.gz"
    lines = [json.loads(line) for line in gzip.decompress(src.read_bytes()).decode().splitlines() if line.strip()]
    halves = []
    for part in (slice(0, 25), slice(25, 50)):
        recs = [with_samples(r, r["samples_us"][part]) if r["type"] == "result" and r.get("samples_us") else r
                for r in lines]
        halves.append(write_jsonl(tmp_path / f"half{part.start}.jsonl", recs))
    cmp = compare(load([halves[0]]).points, load([halves[1]]).points)
    assert rate(judged(cmp)) <= AA_RATE
    assert collcompare_main([str(h) for h in halves]) == 0


def test_planted_slowdown_is_found_and_nothing_else(points: dict[str, list[Point]]) -> None:
    """aa1 vs slow1, the best-matched pair (the machine drifted 1 % between them; all pairs: next
    test and the README). Every planted point at 64K–512K is
    regressed; at 1M–4M this machine's run-to-run noise is of the order of the 20 % (A/A changes
    up to ±50 % there, the library itself moved +177 % at 1M broadcast), so 4 of the 6 stay
    "unchanged" with one run per side: the estimate points the right way, the test cannot call it."""
    cmp = run(points, ["aa1"], ["slow1"])
    hit = [d for d in cmp.diffs if planted(d)]
    assert len(hit) == 14  # ring of allreduce and broadcast at 64K … 4M
    mid = [d for d in hit if d.point.bytes <= 512 << 10]
    assert sum(d.verdict is Verdict.REGRESSED for d in mid) >= 0.95 * len(mid)
    assert all(0.12 < d.change < 0.45 for d in mid), [d.change for d in mid]
    assert sum(d.verdict is Verdict.REGRESSED for d in hit) >= 10
    assert all(d.change > 0.1 and d.verdict is not Verdict.IMPROVED for d in hit)
    assert rate([d for d in judged(cmp) if not planted(d)]) <= AA_RATE
    assert abs(cmp.drift.change) < 0.05


def test_planted_slowdown_over_every_pair_never_blames_others(points: dict[str, list[Point]]) -> None:
    """Every (A/A run, slowdown run) pair: detection ranges from 0 to 10 of 14 (README), but the
    unplanted points stay within the A/A rate and no planted point is ever called improved."""
    detected = 0
    for b, a in itertools.product(AA_RUNS, ("slow1", "slow2")):
        cmp = run(points, [b], [a])
        assert rate([d for d in judged(cmp) if not planted(d)]) <= AA_RATE, (b, a)
        assert not any(planted(d) and d.verdict is Verdict.IMPROVED for d in cmp.diffs), (b, a)
        detected += sum(planted(d) and d.verdict is Verdict.REGRESSED for d in cmp.diffs)
    assert detected == 33  # of 8 × 14: the rate the README reports


def test_machine_drift_is_reported_and_normalisation_keeps_it_out(points: dict[str, list[Point]]) -> None:
    """The run under busy loops on both cores came out 40–60 % *faster* (p10) than the A/A runs
    (busy loops keep the cores out of their idle states): the drift is reported; the raw comparison
    flags a third or more of the points, the normalised one none."""
    for b in AA_RUNS:
        cmp = run(points, [b], ["load"])
        assert cmp.drift.points == 40 and cmp.drift.change < -0.10
        assert "faster in AFTER" in cmp.drift.sentence()
        raw = run(points, [b], ["load"], mode="raw")
        norm_rate, raw_rate = rate(judged(cmp)), rate(judged(raw))
        assert raw_rate > 0.3 and norm_rate <= AA_RATE, (b, norm_rate, raw_rate)
        assert all(d.ci[0] > 0 or d.ci[1] < 0 for d in cmp.changed)
