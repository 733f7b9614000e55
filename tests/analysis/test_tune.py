"""colltune: the tie rule, range boundaries, layouts, filtering, the file format and its reader."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cb_synth import RunCtx, pingpong_sweep, result, traits, write_jsonl
from collbench_analysis import tune
from collbench_analysis.cli import colltune_main
from collbench_analysis.load import load
from conftest import ANALYSIS, ROOT

EXAMPLE = ROOT / "results" / "example" / "results.jsonl"
R = RunCtx("tune", 1, 2)
EVEN_1X2 = tune.Layout((2,))


def run_colltune(tmp_path: Path, records: list[dict[str, Any]], *extra: str) -> tuple[int, tune.Tuning | None, str]:
    """Write ``records``, run colltune in-process; return (status, the file read back, its text)."""
    src = write_jsonl(tmp_path / "in.jsonl", records)
    out = tmp_path / "tuning.yaml"
    status = colltune_main([str(src), "-o", str(out), *extra])
    if status != 0:
        return status, None, ""
    return status, tune.load_tuning(out), out.read_text()


def ranges_of(t: tune.Tuning, op: str = "allreduce",
              layout: tune.Layout = EVEN_1X2) -> list[tuple[int, int | None, str]]:
    e = t.entry(op, "mpi", "cpu", layout)
    assert e is not None, [x.label for x in t.entries]
    return [(r.min_bytes, r.max_bytes, r.algo) for r in e.ranges]


# --------------------------------------------------------------------------- the tie rule

def test_simplicity_order_comes_from_the_registry_traits(tmp_path: Path) -> None:
    # The ranks are the results' traits (the run record's algorithms: here the registry snapshot's, as
    # collbench writes them), equal ranks by name; algorithms without traits come last.
    names = ["zeta", "hier_ring", "ring", "alpha", "library", "rabenseifner", "naive", "shm", "tree", "pairwise",
             "butterfly", "recursive_doubling", "hier_leader", "library:ring", "han"]
    ctx = RunCtx("order", 2, 2, algorithms={("allreduce", "zeta"): traits(simplicity_rank=1000),
                                            ("allreduce", "alpha"): traits(simplicity_rank=1000)})
    op = {"tree": "broadcast", "pairwise": "alltoall", "recursive_doubling": "allgather"}
    ds = load([write_jsonl(tmp_path / "r.jsonl", [ctx.record()] + [result(ctx, op.get(a, "allreduce"), a, 64, 1.0)
                                                                     for a in names])])
    rank = dict(zip(ds.results["algo"], ds.results["simplicity_rank"]))
    cands = [tune.Candidate(a, 1.0, 1.0, 1.0, rank=int(rank[a])) for a in names]
    assert [c.algo for c in sorted(cands, key=tune.simplicity_key)] == [
        "library", "han", "naive", "ring", "tree", "butterfly", "recursive_doubling", "pairwise", "rabenseifner", "shm",
        "hier_leader", "hier_ring", "alpha", "library:ring", "zeta"]


def test_the_traits_not_the_names_break_ties(tmp_path: Path) -> None:
    # Two algorithms the registry snapshot does not know, tied with ring: the run record ranks "zz_simple"
    # below ring (it is chosen, although its name sorts last) and "aa_complex" above it (never chosen).
    ctx = RunCtx("traits", 1, 2, algorithms={("allreduce", "zz_simple"): traits(simplicity_rank=25),
                                             ("allreduce", "aa_complex"): traits(simplicity_rank=500)})
    recs = [ctx.record()] + [result(ctx, "allreduce", a, 64, t) for a, t in
                             (("ring", 10.0), ("zz_simple", 10.2), ("aa_complex", 10.1))]
    status, t, _ = run_colltune(tmp_path, recs)
    assert status == 0 and t is not None
    assert [r.algo for r in t.entry("allreduce", "mpi", "cpu", EVEN_1X2).ranges] == ["zz_simple"]
    # The same names without their traits (a record written before they existed, not in the snapshot):
    # unknown, ranked last, so ring wins the tie, and the load warns once naming them.
    old = RunCtx("traits", 1, 2, legacy=True)
    warned: list[str] = []
    ds = load([write_jsonl(tmp_path / "old.jsonl", [old.record()] + recs[1:])], warn=warned.append)
    assert [r.algo for r in tune.tune(ds).entries[0].ranges] == ["ring"]
    assert len(warned) == 1 and "allreduce/zz_simple (mpi)" in warned[0] and "allreduce/aa_complex (mpi)" in warned[0]
    known = dict(zip(ds.results["algo"], ds.results["traits_known"]))
    assert known == {"ring": True, "zz_simple": False, "aa_complex": False}  # ring: the snapshot's traits


def test_ties_go_to_library_then_to_the_simpler(tmp_path: Path) -> None:
    # spread 0.05: p95 = 1.05 x p50. Best rabenseifner 10.0 (p95 10.5) at every size.
    recs = [R.record()]
    for nbytes, others in {
        1024: {"library": 10.5, "ring": 10.2, "naive": 12.0},  # library exactly at the best's p95: tied, wins
        2048: {"library": 10.6, "ring": 10.4, "naive": 12.0},  # library beyond it; ring tied, simpler
        4096: {"library": 11.0, "ring": 11.0, "naive": 12.0},  # nothing tied: the fastest stays
    }.items():
        recs.append(result(R, "allreduce", "rabenseifner", nbytes, 10.0))
        recs += [result(R, "allreduce", algo, nbytes, t) for algo, t in others.items()]
    status, t, _ = run_colltune(tmp_path, recs)
    assert status == 0 and t is not None
    assert ranges_of(t) == [(0, 1448, "library"), (1449, 2896, "ring"), (2897, None, "rabenseifner")]


def test_a_library_variant_can_be_chosen_and_is_quoted(tmp_path: Path) -> None:
    # library:ring (Open MPI's ring forced) is a candidate: collbench --algo auto runs it (mpi.tuned_forcing).
    recs = [R.record()] + [result(R, "allreduce", algo, n, t) for n in (1024, 1 << 20)
                           for algo, t in (("library", 80.0), ("ring", 100.0), ("library:ring", 50.0))]
    status, t, text = run_colltune(tmp_path, recs)
    assert status == 0 and t is not None
    assert ranges_of(t) == [(0, None, "library:ring")]
    assert "algo: 'library:ring'}" in text  # quoted: a plain ':' is not safe in every flow-mapping parser


def test_choice_records_best_runner_up_and_ratio() -> None:
    cands = [tune.Candidate("rabenseifner", 10.0, 9.5, 10.5, rank=80), tune.Candidate("ring", 10.4, 9.9, 10.9, rank=30),
             tune.Candidate("library", 10.6, 10.0, 11.1, rank=0), tune.Candidate("zeta", 10.1, 9.6, 10.6),
             tune.Candidate("alpha", 10.3, 9.8, 10.8)]
    ch = tune.choose(1024, cands)
    assert ch.runner_up is not None
    assert (ch.choice.algo, ch.best.algo, ch.runner_up.algo) == ("ring", "rabenseifner", "zeta")
    assert ch.tied == ("ring", "rabenseifner", "alpha", "zeta")
    assert ch.ratio == pytest.approx(1.04)
    only = tune.choose(8, [tune.Candidate("tree", 3.0, 2.0, 4.0)])
    assert only.choice.algo == "tree" and only.runner_up is None and only.ratio == 1.0


def test_margin_widens_the_tie() -> None:
    cands = [tune.Candidate("ring", 10.0, 9.5, 10.5, rank=30), tune.Candidate("library", 10.8, 10.3, 11.3, rank=0)]
    assert tune.choose(64, cands).choice.algo == "ring"  # 10.8 > p95 10.5
    assert tune.choose(64, cands, margin=0.10).choice.algo == "library"  # 10.8 <= 10.0 x 1.10
    assert tune.choose(64, cands, margin=0.05).choice.algo == "ring"  # max(10.5, 10.5) < 10.8
    assert "p50 x 1.1" in tune.tie_rule(0.10) and "p95" in tune.tie_rule(0.0)


def test_median_tie_rule_uses_the_medians_standard_errors() -> None:
    # Wide spreads, as across an emulated link: p95 = 2 x p50. han is 1.6x faster at p50.
    han = tune.Candidate("han", 100.0, 60.0, 200.0, samples=50, rank=10)
    lib = tune.Candidate("library", 160.0, 100.0, 320.0, samples=50, rank=0)
    assert tune.choose(8, [han, lib]).choice.algo == "library"  # spread: 160 <= han's p95 200
    # median: se = 1.2533 x spread / 3.29 / sqrt(50): han 7.54, library 11.85; 1.96 x hypot = 27.5 < 60
    assert han.p50_se == pytest.approx(1.2533 * 140 / 3.29 / 50 ** 0.5)
    assert tune.choose(8, [han, lib], tie="median").choice.algo == "han"
    # A difference inside the medians' noise is still a tie, and goes to the library.
    close = tune.Candidate("library", 120.0, 100.0, 320.0, samples=50, rank=0)  # 20 < 1.96 x hypot(7.54, 11.85) = 27.5
    assert tune.choose(8, [han, close], tie="median").choice.algo == "library"
    # Fewer samples, wider standard errors: with 5 samples each the 1.6x is a tie again.
    few = [tune.Candidate("han", 100.0, 60.0, 200.0, samples=5, rank=10),
           tune.Candidate("library", 160.0, 100.0, 320.0, samples=5, rank=0)]
    assert tune.choose(8, few, tie="median").choice.algo == "library"
    assert "standard errors" in tune.tie_rule(0.0, "median")


def test_tie_option_on_the_command_line(tmp_path: Path) -> None:
    # cb_synth spread 0.05 (p5 = 0.95, p95 = 1.05 x p50), 20 samples: library 5 % slower than ring.
    recs = [R.record(), result(R, "allreduce", "ring", 64, 10.0), result(R, "allreduce", "library", 64, 10.5)]
    _, spread, _ = run_colltune(tmp_path, recs)
    _, median, _ = run_colltune(tmp_path, recs, "--tie", "median")
    assert spread is not None and median is not None
    assert ranges_of(spread) == [(0, None, "library")]  # 10.5 <= ring's p95 10.5
    assert ranges_of(median) == [(0, None, "ring")]  # 0.5 > 1.96 x hypot(0.095, 0.100) = 0.27
    assert "standard errors" in median.tie_rule


def test_margin_option_on_the_command_line(tmp_path: Path) -> None:
    recs = [R.record(), result(R, "allreduce", "ring", 64, 10.0), result(R, "allreduce", "library", 64, 10.8)]
    _, t0, _ = run_colltune(tmp_path, recs)
    _, t10, text = run_colltune(tmp_path, recs, "--margin", "10%")
    assert t0 is not None and t10 is not None
    assert ranges_of(t0) == [(0, None, "ring")] and ranges_of(t10) == [(0, None, "library")]
    assert "p50 x 1.1" in t10.tie_rule


def test_several_results_of_one_point_are_pooled_by_medians(tmp_path: Path) -> None:
    runs = [RunCtx(f"rep{k}", 1, 2) for k in range(3)]
    recs: list[dict[str, Any]] = []
    # ring: p50s 10, 30 (one disturbed run), 11 -> median 11, p95 median 11 x 1.05 = 11.55; library 11.5 -> tied
    for ctx, ring in zip(runs, (10.0, 30.0, 11.0)):
        recs += [ctx.record(), result(ctx, "allreduce", "ring", 4096, ring),
                 result(ctx, "allreduce", "library", 4096, 11.5)]
    ds = load([write_jsonl(tmp_path / "reps.jsonl", recs)])
    t = tune.tune(ds)
    (e,) = t.entries
    (ch,) = e.choices
    ring = next(c for c in tune.pool(ds.results[ds.results["algo"] == "ring"]))
    assert (ring.p50, ring.p5, ring.p95, ring.results) == (11.0, pytest.approx(10.45), pytest.approx(11.55), 3)
    assert ch.best.algo == "ring" and ch.choice.algo == "library"
    assert t.runs == [c.run_id for c in runs] and t.used == 6


# --------------------------------------------------------------------------- ranges

def test_boundaries_sit_at_geometric_means_and_equal_neighbours_merge(tmp_path: Path) -> None:
    fast, slow = 5.0, 50.0
    winner = {1000: "library", 3000: "library", 9000: "ring", 27000: "ring", 81000: "library", 250000: "library"}
    recs = [R.record()]
    for nbytes, algo in winner.items():
        recs += [result(R, "allreduce", a, nbytes, fast if a == algo else slow) for a in ("library", "ring")]
    status, t, _ = run_colltune(tmp_path, recs)
    assert status == 0 and t is not None
    b1, b2 = math.isqrt(3000 * 9000), math.isqrt(27000 * 81000)
    assert (b1, b2) == (5196, 46765)
    assert ranges_of(t) == [(0, b1, "library"), (b1 + 1, b2, "ring"), (b2 + 1, None, "library")]
    # every measured size falls in the range of its own choice
    e = t.entry("allreduce", "mpi", "cpu", EVEN_1X2)
    assert e is not None and all(e.range_for(n).algo == a for n, a in winner.items())


def test_one_choice_everywhere_is_one_unbounded_range(tmp_path: Path) -> None:
    recs = [R.record()] + [result(R, "broadcast", a, n, t) for n in (8, 64, 512)
                           for a, t in (("library", 5.0), ("tree", 9.0))]
    _, t, _ = run_colltune(tmp_path, recs)
    assert t is not None and ranges_of(t, "broadcast") == [(0, None, "library")]


def test_ranges_from_handles_a_zero_byte_size() -> None:
    def ch(n: int, algo: str) -> tune.SizeChoice:
        c = tune.Candidate(algo, 1.0, 1.0, 1.0)
        return tune.SizeChoice(n, c, c, None, (algo,))

    assert [(r.min_bytes, r.max_bytes, r.algo) for r in tune.ranges_from([ch(0, "ring"), ch(8, "library")])] == \
        [(0, 0, "ring"), (1, None, "library")]


# --------------------------------------------------------------------------- layouts

def uneven_run(name: str, node_of_rank: list[int]) -> RunCtx:
    """A 4-rank run on 2 nodes whose node_of_rank is uneven; results carry the max per node (3)."""
    per_node = tune.Layout.from_node_of_rank(node_of_rank).per_node
    ctx = RunCtx(name, 2, 2)  # world_size 4; ranks_per_node is overridden below
    ctx.extra = {"node_of_rank": node_of_rank, "ranks_per_node": max(per_node), "uneven_layout": True,
                 "host_of_rank": [f"n{i + 1}" for i in node_of_rank]}
    return ctx


def test_uneven_layouts_get_their_own_entries_with_per_node_counts(tmp_path: Path) -> None:
    even = RunCtx("even", 2, 2)
    u31 = uneven_run("u31", [0, 1, 0, 0])  # node 0 holds ranks 0, 2, 3
    u13 = uneven_run("u13", [0, 1, 1, 1])
    recs: list[dict[str, Any]] = []
    for ctx, winner in ((even, "ring"), (u31, "library"), (u13, "naive")):
        rpn = ctx.extra.get("ranks_per_node", ctx.ranks_per_node)
        recs.append(ctx.record())
        recs += [result(ctx, "allreduce", a, 1024, 5.0 if a == winner else 50.0, ranks_per_node=rpn)
                 for a in ("library", "naive", "ring")]
    status, t, text = run_colltune(tmp_path, recs)
    assert status == 0 and t is not None
    assert [e.layout.per_node for e in t.entries] == [(1, 3), (2, 2), (3, 1)]  # world size, nodes, counts
    assert ranges_of(t, layout=tune.Layout((3, 1))) == [(0, None, "library")]
    assert ranges_of(t, layout=tune.Layout((1, 3))) == [(0, None, "naive")]
    assert ranges_of(t, layout=tune.Layout((2, 2))) == [(0, None, "ring")]
    assert "    layout: {nodes: 2, ranks_per_node: [3, 1], world_size: 4}\n" in text
    assert "    layout: {nodes: 2, ranks_per_node: 2, world_size: 4}\n" in text


def test_uneven_result_without_run_record_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ctx = RunCtx("orphan", 2, 2)
    status, _, _ = run_colltune(tmp_path, [result(ctx, "allreduce", "ring", 8, 1.0, ranks_per_node=3)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "uneven layout" in err[0] and "node_of_rank" in err[0]


def test_layout_from_node_of_rank_orders_nodes_by_lowest_rank() -> None:
    assert tune.Layout.from_node_of_rank([5, 5, 2, 5]).per_node == (3, 1)
    lay = tune.Layout.from_node_of_rank([0, 0, 1, 1])
    assert (lay.ranks_per_node, lay.uneven, lay.label) == (2, False, "2x2")
    assert tune.Layout((3, 1)).as_mapping() == {"nodes": 2, "ranks_per_node": [3, 1], "world_size": 4}


# --------------------------------------------------------------------------- what counts

def test_wrong_skipped_unverified_auto_and_p2p_results_are_ignored(tmp_path: Path) -> None:
    recs = [R.record(),
            result(R, "allreduce", "ring", 1024, 1.0, wrong=3),  # fastest, but wrong
            result(R, "allreduce", "butterfly", 1024, None),  # skipped
            result(R, "allreduce", "tree", 1024, 1.5, checked=False),  # not verified
            result(R, "allreduce", "auto", 1024, 0.5),  # the selector itself
            result(R, "allreduce", "rabenseifner", 1024, 9.0),
            result(R, "allreduce", "naive", 1024, 20.0),
            *pingpong_sweep(R, [(0, 1)], [1024])]
    status, t, _ = run_colltune(tmp_path, recs)
    assert status == 0 and t is not None
    assert ranges_of(t) == [(0, None, "rabenseifner")]
    assert [e.op for e in t.entries] == ["allreduce"]
    ds = load([tmp_path / "in.jsonl"])
    made = tune.tune(ds)
    assert made.used == 2
    assert made.left_out == {"wrong results": 1, "skipped": 1, "not verified (checked: false)": 1, "algo auto": 1,
                             "point-to-point": 3}


def test_dtype_variants_prefer_float32_and_say_so(tmp_path: Path) -> None:
    recs = [R.record()]
    for dtype, winner in (("float32", "ring"), ("float64", "library")):
        recs += [result(R, "allreduce", a, 4096, 5.0 if a == winner else 50.0, dtype=dtype)
                 for a in ("library", "ring")]
    # allgather only in float64: tuned on it, and the comment names it
    recs += [result(R, "allgather", a, 4096, 5.0 if a == "naive" else 50.0, dtype="float64")
             for a in ("library", "naive")]
    status, t, text = run_colltune(tmp_path, recs)
    assert status == 0 and t is not None
    assert ranges_of(t) == [(0, None, "ring")] and ranges_of(t, "allgather") == [(0, None, "naive")]
    comments = [line for line in text.splitlines() if line.startswith("#")]
    note = next(line for line in comments if "dtype" in line)
    assert "float32, float64" in note and "dtype float32 results" in note and "allgather mpi/cpu 1x2 float64" in note
    assert all(set(e) == {"op", "backend", "device", "layout", "ranges"} for e in yaml.safe_load(text)["entries"])


def test_op_filter(tmp_path: Path) -> None:
    recs = [R.record()] + [result(R, op, "library", 64, 3.0) for op in ("allreduce", "broadcast", "allgather")]
    status, t, _ = run_colltune(tmp_path, recs, "--op", "broadcast,allgather")
    assert status == 0 and t is not None
    assert [e.op for e in t.entries] == ["broadcast", "allgather"]  # schema op order


# --------------------------------------------------------------------------- the file

def test_file_layout_one_range_per_line_and_round_trip(tmp_path: Path) -> None:
    recs = [R.record()]
    for n, winner in ((8, "library"), (64, "ring"), (512, "ring"), (4096, "tree")):
        recs += [result(R, "broadcast", a, n, 5.0 if a == winner else 50.0) for a in ("library", "ring", "tree")]
        recs += [result(R, "allreduce", a, n, 5.0 if a == winner else 50.0) for a in ("library", "ring", "tree")]
    ds = load([write_jsonl(tmp_path / "in.jsonl", recs)])
    made = tune.tune(ds, generated="2026-11-25T06:40:00Z")
    path = tune.write_tuning(tmp_path / "sub" / "t.yaml", made)
    text = path.read_text()
    lines = text.splitlines()
    assert lines[0].startswith("# ") and "schema: collbench-tuning/1" in lines
    assert 'generated: "2026-11-25T06:40:00Z"' in lines and "tool: colltune" in lines
    assert f"sources: [{tmp_path / 'in.jsonl'}]" in lines and f"runs: [{R.run_id}]" in lines
    assert "statistic: p50" in lines and any(line.startswith('tie_rule: "per measured size') for line in lines)
    range_lines = [i for i, line in enumerate(lines, 1) if line.startswith("      - {min_bytes")]
    loaded = tune.load_tuning(path)
    all_ranges = [r for e in loaded.entries for r in e.ranges]
    assert len(range_lines) == len(all_ranges) == 6
    assert [r.line for r in all_ranges] == range_lines  # the reader's file:line is the range's own line
    for i in range_lines:
        parsed = yaml.safe_load(lines[i - 1].strip()[2:])
        assert list(parsed) == ["min_bytes", "max_bytes", "algo"]
    assert lines[range_lines[0] - 1] == "      - {min_bytes: 0, max_bytes: 22, algo: library}"
    assert lines[range_lines[-1] - 1] == "      - {min_bytes: 1449, max_bytes: null, algo: tree}"
    # round trip: what was chosen is what is read back
    assert [(e.key, e.ranges) for e in loaded.entries] == [(e.key, e.ranges) for e in made.entries]
    assert (loaded.generated, loaded.runs, loaded.sources) == (made.generated, made.runs, made.sources)
    assert loaded.lookup("broadcast", "mpi", "cpu", EVEN_1X2, 100).algo == "ring"
    assert loaded.lookup("broadcast", "mpi", "cpu", tune.Layout((4,)), 100) is None


GOOD = """schema: collbench-tuning/1
generated: "2026-11-25T06:40:00Z"
tool: colltune
sources: [a.jsonl]
runs: [a7fc45f350b4d6c2]
statistic: p50
tie_rule: "x"
entries:
  - op: allreduce
    backend: mpi
    device: cpu
    layout: {nodes: 2, ranks_per_node: [3, 1], world_size: 4}
    ranges:
      - {min_bytes: 0, max_bytes: 2047, algo: library}
      - {min_bytes: 2048, max_bytes: 1048575, algo: rabenseifner}
      - {min_bytes: 1048576, max_bytes: null, algo: ring}
"""


def test_load_tuning_reads_a_file_without_what_wrote_it(tmp_path: Path) -> None:
    # generated, tool, sources, runs, statistic, tie_rule: colltune writes them, readers do not need them
    # (results/schema/collbench-tuning-1.json), as collbench's reader does not.
    path = tmp_path / "t.yaml"
    path.write_text("schema: collbench-tuning/1\n" + GOOD[GOOD.index("entries:"):])
    t = tune.load_tuning(path)
    assert [r.algo for r in t.entries[0].ranges] == ["library", "rabenseifner", "ring"] and t.runs == []


@pytest.mark.parametrize("old,new,expect", [
    ("min_bytes: 2048,", "min_bytes: 2049,", "t.yaml:15: entries[0].ranges[1]: min_bytes is 2049, must start at 2048"),
    ("min_bytes: 2048,", "min_bytes: 2000,", "t.yaml:15: entries[0].ranges[1]: min_bytes is 2000"),
    ("min_bytes: 0,", "min_bytes: 8,", "t.yaml:14: entries[0].ranges[0]: min_bytes is 8, must start at 0"),
    ("max_bytes: null", "max_bytes: 99999999",
     "t.yaml:16: entries[0].ranges[2]: the last range must end at max_bytes null"),
    ("max_bytes: 2047", "max_bytes: null", "t.yaml:14: entries[0].ranges[0]: max_bytes null (unbounded) on a range"),
    ("collbench-tuning/1", "collbench-tuning/2", "t.yaml:1: schema: unsupported version 'collbench-tuning/2'"),
    ("[3, 1]", "[3, 2]", "t.yaml:12: entries[0].layout: ranks_per_node [3, 2] does not fit"),
    ("op: allreduce", "op: pingpong", "t.yaml:9: entries[0].op: must be a collective op"),
    (", algo: ring}", "}", "t.yaml:16: entries[0].ranges[2]: field 'algo' is missing"),
    ("entries:", "entries: []\nx:", "t.yaml:8: entries: must be a non-empty list"),
    ("    device: cpu\n", "", "t.yaml:9: entries[0]: field 'device' is missing"),
    ("min_bytes: 0,", "min_bytes: '0',", "t.yaml:14: entries[0].ranges[0].min_bytes: must be an integer >= 0, got '0'"),
    ("runs: [", "runs: [[", "t.yaml:6: not valid YAML"),  # where the parser notices
])
def test_load_tuning_refuses_bad_files_naming_line_and_field(tmp_path: Path, old: str, new: str, expect: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(GOOD)
    assert [r.algo for r in tune.load_tuning(path).entries[0].ranges] == ["library", "rabenseifner", "ring"]
    assert GOOD.count(old) == 1
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(tune.TuningFileError) as err:
        tune.load_tuning(path)
    assert str(err.value).startswith(str(tmp_path / expect)), str(err.value)
    assert "\n" not in str(err.value)


def test_load_tuning_refuses_a_duplicate_entry_and_a_missing_file(tmp_path: Path) -> None:
    entry = GOOD[GOOD.index("  - op:"):]
    path = tmp_path / "t.yaml"
    path.write_text(GOOD + entry)
    with pytest.raises(tune.TuningFileError, match=r"t.yaml:17: entries\[1\]: a second entry for allreduce mpi/cpu "
                                                   r"2x\[3,1\] \(the first is on line 9\)"):
        tune.load_tuning(path)
    with pytest.raises(tune.TuningFileError, match="cannot read"):
        tune.load_tuning(tmp_path / "missing.yaml")


# --------------------------------------------------------------------------- the real example run

@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[tune.Tuning, str, str]:
    out = tmp_path_factory.mktemp("example") / "tuning.yaml"
    proc = subprocess.run([sys.executable, str(ANALYSIS / "colltune"), str(EXAMPLE), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return tune.load_tuning(out), out.read_text(), proc.stdout


def test_example_data_gives_a_valid_file_naming_measured_algorithms(example: tuple[tune.Tuning, str, str]) -> None:
    t, text, _ = example
    ds = load([EXAMPLE])
    measured: dict[tuple[str, int], set[str]] = {}
    for p in ds.results[ds.results["measured"] & ~ds.results["is_p2p"]].itertuples(index=False):
        measured.setdefault((p.op, p.world_size * 100 + p.nodes), set()).add(p.algo)
    assert len(t.entries) == 12  # 4 ops x 3 layouts (1x2, 1x4, 2x2)
    assert {e.layout.label for e in t.entries} == {"1x2", "1x4", "2x2"}
    assert {e.op for e in t.entries} == {"allreduce", "broadcast", "allgather", "reduce_scatter"}
    assert t.runs == list(ds.runs["run_id"])  # every run of the file, in its order
    assert t.sources == [str(EXAMPLE)] and t.statistic == "p50" and t.tool == "colltune"
    for e in t.entries:
        algos = measured[(e.op, e.layout.world_size * 100 + e.layout.nodes)]
        assert {r.algo for r in e.ranges} <= algos, e.label
        assert e.ranges[0].min_bytes == 0 and e.ranges[-1].max_bytes is None
        for a, b in zip(e.ranges, e.ranges[1:]):
            assert b.min_bytes == a.max_bytes + 1 and a.algo != b.algo  # tiled and merged
    assert text.count("\n      - {min_bytes") == sum(len(e.ranges) for e in t.entries)


def test_example_choices_follow_the_rule(example: tuple[tune.Tuning, str, str]) -> None:
    """Recompute every choice from the raw records and check the file's range at that size names it."""
    t, _, _ = example
    ds = load([EXAMPLE])
    by_point: dict[tuple[Any, ...], list[Any]] = {}
    # Hot caches only: colltune tunes on them (the example also has cold allreduce points).
    coll = ds.results[ds.results["measured"] & ~ds.results["is_p2p"] & (ds.results["cache"] == "hot")]
    for p in coll.itertuples(index=False):
        by_point.setdefault((p.op, tune.layout_of(p), p.bytes), []).append(p)
    checked = 0
    for (op, layout, nbytes), pts in by_point.items():
        best = min(pts, key=lambda p: p.p50_us)
        tied = [p for p in pts if p.p50_us <= best.p95_us]
        want = min(tied, key=lambda p: (p.simplicity_rank, p.algo)).algo  # the traits' ranks (registry snapshot)
        assert t.lookup(op, "mpi", "cpu", layout, nbytes).algo == want, (op, layout, nbytes)
        checked += 1
    assert checked == 12 * 11  # 4 ops x 3 layouts x 11 sizes (16 B - 16 MiB, x4)


def test_example_table_on_stdout(example: tuple[tune.Tuning, str, str]) -> None:
    _, _, stdout = example
    ds = load([EXAMPLE])
    res = ds.results
    assert stdout.count("choice/best") == 12
    assert "allreduce mpi/cpu 2x2 (world size 4)" in stdout
    skipped, p2p = int(res["skipped"].sum()), int((res["is_p2p"] & ~res["skipped"]).sum())
    assert "colltune: 12 entries, " in stdout and f"left out: {skipped} skipped, {p2p} point-to-point" in stdout
    assert "entries are tuned on their cache hot results" in stdout  # the example's cold points left out
    # A tie resolved to the simpler algorithm: the row names the choice, then the faster best.
    coll = res[res["measured"] & ~res["is_p2p"] & (res["cache"] == "hot")]
    ties = 0
    for (op, nodes, rpn, nbytes), pts in coll.groupby(["op", "nodes", "ranks_per_node", "bytes"]):
        best = pts.loc[pts["p50_us"].idxmin()]
        want = pts[pts["p50_us"] <= best["p95_us"]].sort_values(["simplicity_rank", "algo"])["algo"].iloc[0]
        if want == best["algo"]:
            continue
        block = stdout[stdout.index(f"{op} mpi/cpu {nodes}x{rpn} "):]
        row = next(line for line in block.splitlines() if line.split()[:1] == [tune.format_bytes(int(nbytes))])
        assert row.split()[1:3] == [want, best["algo"]], row
        ties += 1
    assert ties > 0  # a sweep on this machine always has some


# --------------------------------------------------------------------------- bad input

def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ANALYSIS / "colltune"), *args], capture_output=True, text=True,
                          timeout=120)


def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "t.yaml"
    only_p2p = write_jsonl(tmp_path / "p2p.jsonl", [R.record(), *pingpong_sweep(R, [(0, 1)], [8, 64])])
    all_wrong = write_jsonl(tmp_path / "wrong.jsonl", [R.record(), result(R, "allreduce", "ring", 8, 1.0, wrong=1)])
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"schema": "collbench/1", "type": "result"}\n{}\n')
    cases = {
        str(tmp_path / "missing.jsonl"): "no such file or directory",
        str(only_p2p): "no usable collective results",
        str(all_wrong): "(left out: 1 wrong results)",
        str(broken): "broken.jsonl:1:",
    }
    for src, what in cases.items():
        proc = run_script(src, "-o", str(out))
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, proc.stderr
        assert len(lines) == 1 and lines[0].startswith("colltune: error: ") and what in lines[0], lines
        assert not out.exists()
    proc = run_script(str(only_p2p), "-o", str(out), "--op", "pingpong")
    assert proc.returncode == 2 and "colltune: error: argument --op: bad op list 'pingpong'" in proc.stderr


def test_unwritable_output_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [R.record(), result(R, "allreduce", "ring", 8, 1.0)])
    (tmp_path / "file").write_text("")
    assert colltune_main([str(src), "-o", str(tmp_path / "file" / "t.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("colltune: error: ") and "cannot write" in err[0]


def test_entry_script_runs_as_executable() -> None:
    script = ANALYSIS / "colltune"
    assert os.access(script, os.X_OK)
    assert script.read_text().startswith("#!/usr/bin/python3")
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "--margin" in proc.stdout and "--op" in proc.stdout


def test_the_documented_example_is_a_valid_tuning_file(tmp_path: Path) -> None:
    doc = (ROOT / "results" / "README.md").read_text()
    section = doc[doc.index("## Tuning files"):]
    block = section[section.index("```yaml\n") + len("```yaml\n"):section.index("\n```\n")]
    path = tmp_path / "doc.yaml"
    path.write_text(block + "\n")
    t = tune.load_tuning(path)
    assert [e.layout.ranks_per_node for e in t.entries] == [2, [3, 1]]
    assert t.lookup("allreduce", "mpi", "cpu", tune.Layout((3, 1)), 1 << 20).algo == "ring"


# --------------------------------------------------------------------------- the command that uses a file

def test_command_runs_the_files_choices_on_its_largest_layout(tmp_path: Path) -> None:
    head = "schema: collbench-tuning/1\nentries:\n"
    ring = "    ranges:\n      - {min_bytes: 0, max_bytes: null, algo: ring}\n"

    def entry(op: str, nodes: int, rpn: int, backend: str = "mpi", device: str = "cpu") -> str:
        return (f"  - op: {op}\n    backend: {backend}\n    device: {device}\n"
                f"    layout: {{nodes: {nodes}, ranks_per_node: {rpn}, world_size: {nodes * rpn}}}\n" + ring)

    path = tmp_path / "t.yaml"
    path.write_text(head + entry("broadcast", 1, 4) + entry("allreduce", 2, 2) + entry("allreduce", 1, 2))
    assert tune.run_command(path, "/opt/cb") == ["mpirun", "-np", "4", "--map-by", "ppr:2:node", "/opt/cb", "--op",
                                                 "broadcast,allreduce", "--algo", "auto", "--tuning", str(path)]
    path.write_text(head + entry("allreduce", 1, 2, "nccl", "cuda"))
    assert tune.run_command(path)[3:] == ["collbench", "--op", "allreduce", "--algo", "auto", "--tuning", str(path),
                                          "--backend", "nccl", "--device", "cuda"]
    p = run_script("--command", str(path), "--collbench", "/opt/my collbench")
    assert p.returncode == 0 and p.stdout == f"mpirun -np 2 '/opt/my collbench' --op allreduce --algo auto --tuning {path} " \
                                             "--backend nccl --device cuda\n"
    path.write_text(head)  # entries: null
    p = run_script("--command", str(path))
    assert p.returncode == 2 and p.stdout == "" and p.stderr.startswith(f"colltune: error: {path}:")
    assert run_script("--command", str(path), "r.jsonl").returncode == 2  # one thing at a time


def test_the_sweeps_tune_step_says_the_command_through_colltune(tmp_path: Path) -> None:
    """slurm/lib/analysis.sh's make_tuning (sbatch slurm/sweep.sh --tune) on a job's results: the tuning file,
    then its "use it:" line from colltune --command (no inline Python of its own)."""
    script = ROOT / "slurm" / "lib" / "analysis.sh"
    assert "<<" not in script.read_text()
    out = tmp_path / "job"
    write_jsonl(out / "results.jsonl", [R.record(), result(R, "allreduce", "ring", 64, 10.0),
                                       result(R, "allreduce", "library", 64, 20.0)])
    shell = ('say() { echo "$PROG: $*"; }; warn() { echo "$PROG: warning: $*" >&2; }; '
             f'source "{script}"; make_tuning')
    env = dict(os.environ, REPO=str(ROOT), OUT=str(out), BIN="/opt/cb", TUNE="1", PROG="sweep",
               COLLBENCH_PYTHON=sys.executable)
    p = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert f"sweep: use it: mpirun -np 2 /opt/cb --op allreduce --algo auto --tuning {out}/tuning.yaml\n" in p.stdout
    assert tune.load_tuning(out / "tuning.yaml").entries[0].ranges[0].algo == "ring"
