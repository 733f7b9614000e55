"""Several backends in one results file (docs/analysis.md "Several backends in one results file").

A job folder may hold an mpi sweep and a gloo sweep on the same layouts. collplot then puts them side by side
(one table row, one figure line per ``algo (backend)``; answers taken across both, ties by ranking.py's rule;
the tables "Backends side by side"), while a single-backend file reads as it always did. colltune keeps one
entry per backend (``--algo auto`` runs within one), and collcompare compares within a backend and says so.

Synthetic data (cb_synth) where the numbers are known; the real mixed file fixtures/backends/mpi_gloo.jsonl.gz
(fixtures/capture_backends.sh: an mpi and a gloo run of collbench on this machine) for the records as the
binary writes them.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from cb_synth import RunCtx, result, traits, write_jsonl
from collbench_analysis import compare, efficiency, plots, report, tune
from collbench_analysis.cli import collcompare_main, collplot_main, colltune_main
from collbench_analysis.load import load, parse_size
from collbench_analysis.palette import color_of, color_on_backend
from collbench_analysis.ranking import choose, pool

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "backends" / "mpi_gloo.jsonl.gz"
K, M = 1 << 10, 1 << 20
SIZES = (8, K, 64 * K, M)
# p50 (µs) per (backend, op, algo) at SIZES; every point's p5/p95 is ±5 % (cb_synth's spread).
# allreduce: Gloo's library is 3.1x MPI's everywhere but at 8 B, where it is within MPI's spread (a tie
# across backends); ring (mpi) beats library (mpi) from 64K on. broadcast: no gloo library (as the
# binary of this commit: only collbench's own algorithms run on Gloo), ring on both.
P50 = {
    ("mpi", "allreduce", "library"): (2.0, 3.0, 20.0, 110.0),
    ("mpi", "allreduce", "ring"): (4.0, 5.0, 18.0, 90.0),
    ("gloo", "allreduce", "library"): (2.05, 9.3, 62.0, 341.0),
    ("gloo", "allreduce", "ring"): (20.0, 25.0, 40.0, 279.0),
    ("mpi", "broadcast", "library"): (1.0, 2.0, 10.0, 100.0),
    ("mpi", "broadcast", "ring"): (2.0, 3.0, 12.0, 80.0),
    ("gloo", "broadcast", "ring"): (50.0, 60.0, 100.0, 400.0),
}
GLOO_VERSIONS = {"collbench": "0.1.0", "mpi": None, "nccl": None, "cuda": None, "cuda_driver": None, "gpu": None,
                 "device_transfer": None, "gloo": "Gloo 0.5.0 (tcp transport)",
                 "gloo_device": "127.0.0.1 (route to 127.0.0.1)", "launcher": "spawn"}


def _records(backend: str) -> list[dict]:
    if backend == "mpi":
        ctx = RunCtx("mpi-run", 1, 2)
    else:  # the gloo run record lists its library (the registry snapshot predates the gloo backend)
        ctx = RunCtx("gloo-run", 1, 2, backend="gloo", extra={"versions": GLOO_VERSIONS},
                     algorithms={(op, "library"): traits(library=True, simplicity_rank=0)
                                 for op in ("allreduce", "broadcast")})
    recs = [ctx.record()]
    recs += [result(ctx, op, algo, n, t) for (b, op, algo), times in P50.items() if b == backend
             for n, t in zip(SIZES, times)]
    return recs + [ctx.end(len(recs) - 1)]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("backends")
    mpi, gloo = _records("mpi"), _records("gloo")
    return {"mixed": write_jsonl(root / "mixed" / "results.jsonl", mpi + gloo),
            "mpi": write_jsonl(root / "mpi" / "results.jsonl", mpi),
            "gloo": write_jsonl(root / "gloo" / "results.jsonl", gloo)}


def _table(tables: report.Tables, title: str) -> pd.DataFrame:
    return next(t for t in [*tables.answers, *tables.summary] if t.title == title).frame


def _titles(tables: report.Tables) -> list[str]:
    return [t.title for t in [*tables.answers, *tables.summary]]


def _row(frame: pd.DataFrame, **where: str) -> pd.Series:
    hit = frame
    for k, v in where.items():
        hit = hit[hit[k] == v]
    assert len(hit) == 1, (where, hit)
    return hit.iloc[0]


# --------------------------------------------------------------------------- collplot: the tables

def test_mixed_answers_are_taken_across_backends_and_name_them(files: dict[str, Path]) -> None:
    c = report.collectives(load([files["mixed"]]))
    tables = report.build_tables(load([files["mixed"]]))
    grid = _table(tables, report.BEST_GRID)
    # 8 B: library (gloo) is within library (mpi)'s spread: a tie across backends, given by ranking.py's rule
    # (the simplest, equal ranks by name) and shown as one.
    assert _row(grid, op="allreduce", size="8B")["1x2"] == "library (gloo) ≈ library (mpi) (within noise)"
    assert _row(grid, op="allreduce", size="1K")["1x2"] == "library (mpi)"
    assert _row(grid, op="allreduce", size="1M")["1x2"] == "ring (mpi)"
    best = _table(tables, "Best algorithm per (op, layout, size)")
    r = _row(best, op="allreduce", size="1M")
    assert (r["answer"], r["fastest"], r["runner-up"]) == ("ring (mpi)", "ring (mpi)", "library (mpi)")
    # every series of both backends in one table (not one table per backend)
    peaks = _table(tables, "Peak bus bandwidth per (op, algo, layout)")
    assert set(peaks.loc[peaks["op"] == "allreduce", "algorithm"]) == {"library (mpi)", "ring (mpi)",
                                                                      "library (gloo)", "ring (gloo)"}
    # the answers agree with ranking.choose over every backend's series at that size
    at = c[(c["op"] == "allreduce") & (c["bytes"] == 8)]
    ch = choose(8, pool(at, name="series"))
    assert (ch.choice.algo, ch.tied) == ("library (gloo)", ("library (gloo)", "library (mpi)"))


def test_backends_tables_say_by_how_much(files: dict[str, Path]) -> None:
    tables = report.build_tables(load([files["mixed"]]))
    assert _titles(tables)[:2] == [report.BEST_GRID, report.BACKENDS_GLANCE]
    glance = _table(tables, report.BACKENDS_GLANCE)
    assert list(glance.columns) == ["op", "layout", "compared", "the answer (all backends) is on",
                                    "fastest vs fastest", "library vs library"]
    a = _row(glance, op="allreduce")
    assert a["compared"] == "gloo vs mpi"
    assert a["the answer (all backends) is on"] == "mpi at 3, tie at 1 of 4 sizes"
    assert a["library vs library"] == ("slower at 3, tie at 1 of 4 sizes; at 1M 3.1× slower; "
                                       "median 3.1× slower (p50 ratio 1.0–3.1)")
    assert a["fastest vs fastest"].startswith("slower at 3, tie at 1 of 4 sizes; at 1M 3.1× slower;")
    b = _row(glance, op="broadcast")
    assert b["the answer (all backends) is on"] == "mpi at 4 of 4 sizes"
    assert b["library vs library"] == "—"  # no gloo library measured
    assert b["fastest vs fastest"] == ("slower at 4 of 4 sizes; at 1M 5.0× slower; "
                                       "median 20× slower (p50 ratio 5.0–50)")

    per = _table(tables, "Backends side by side per (op, layout, size)")
    assert list(per.columns) == ["op", "layout", "size", "answer (all backends)", "mpi: fastest", "mpi p50 (µs)",
                                 "gloo: fastest", "gloo p50 (µs)", "fastest: gloo vs mpi", "library: gloo vs mpi"]
    assert len(per) == 2 * len(SIZES)
    r = _row(per, op="allreduce", size="1M")
    assert r[["answer (all backends)", "mpi: fastest", "gloo: fastest", "fastest: gloo vs mpi",
              "library: gloo vs mpi"]].tolist() == ["ring (mpi)", "ring", "ring", "3.1× slower", "3.1× slower"]
    r = _row(per, op="allreduce", size="8B")
    assert r["library: gloo vs mpi"] == "≈ 1.0× slower"  # within library (mpi)'s spread: a tie
    assert r["fastest: gloo vs mpi"] == "≈ 1.0× slower"  # both backends' fastest are their libraries there
    assert _row(per, op="broadcast", size="8B")["library: gloo vs mpi"] == "—"


def test_single_backend_reads_as_before(files: dict[str, Path]) -> None:
    """The mpi run alone: no backend in the answers' names, no backends tables, the same tables and labels
    as the report had before several backends were put side by side."""
    ds = load([files["mpi"]])
    tables = report.build_tables(ds)
    assert _titles(tables) == [report.BEST_GRID, "Custom vs library at a glance",
                               "Best algorithm per (op, layout, size)", "Peak bus bandwidth per (op, algo, layout)",
                               "Small-message latency (smallest measured size)"]
    grid = _table(tables, report.BEST_GRID)
    assert grid["1x2"].tolist() == ["library", "library", "ring", "ring", "library", "library", "library", "ring"]
    best = _table(tables, "Best algorithm per (op, layout, size)")
    r = _row(best, op="allreduce", size="1M")
    # as before: the answer names the algorithm, the fastest and runner-up columns the series
    assert (r["answer"], r["fastest"], r["runner-up"], r["vs library"]) == ("ring", "ring (mpi)", "library (mpi)",
                                                                          "1.22×")
    assert "backend" not in _table(tables, "Custom vs library at a glance").columns
    cells = report.answer_cells(report.collectives(ds))
    assert set(cells["algo"]) == {"library", "ring"}
    assert all(cells["color"] == cells["algo"].map(color_of))
    groups = plots.collective_groups(ds.results)
    assert {lab for _, g in groups for lab in g["label"]} == {"library", "ring"}


def test_the_figures_hold_both_backends(files: dict[str, Path]) -> None:
    mixed, single = load([files["mixed"]]), load([files["mpi"]])
    keys = lambda ds: [k.slug for k, _ in plots.collective_groups(ds.results)]  # noqa: E731
    assert keys(mixed) == keys(single) == ["allreduce_1x2", "broadcast_1x2"]  # one figure each, both backends in it
    (_, g), _ = plots.collective_groups(mixed.results)
    assert set(g["label"]) == {"library (mpi)", "ring (mpi)", "library (gloo)", "ring (gloo)"}
    style = plots.Style.for_frame(mixed.results)
    assert style.linestyles == {"mpi": "-", "gloo": "--"}  # the reference backend keeps solid lines
    cells = report.answer_cells(report.collectives(mixed))
    at = cells[cells["op"] == "allreduce"].set_index("bytes")
    assert at.loc[M, ["algo", "color", "text"]].tolist() == ["ring (mpi)", color_of("ring"), "1.2×"]
    assert at.loc[8, ["algo", "tie", "text"]].tolist() == ["library (gloo)", True, "lib"]
    assert at.loc[8, "color"] == color_on_backend("library", 1) == "#909090"  # the library's near-black, paler


def test_report_html_puts_them_side_by_side(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "plots"
    assert collplot_main([str(files["mixed"]), "-o", str(out), "-q"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    for text in ("<h3>Backends side by side</h3>", "Backends side by side per (op, layout, size)",
                 "<td>gloo vs mpi</td>", "library (gloo) ≈ library (mpi) (within noise)", "<td>ring (gloo)</td>",
                 "3.1× slower", "Gloo 0.5.0 (tcp transport)"):
        assert text in page, text
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "| allreduce | 1x2      |     1M | ring (mpi)" in md
    assert sorted(p.name for p in out.glob("busbw_*.png")) == ["busbw_allreduce_1x2.png", "busbw_broadcast_1x2.png"]


# --------------------------------------------------------------------------- the real mixed file

@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("real") / "mpi_gloo.jsonl"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    return path


def test_real_mixed_file(real: Path) -> None:
    """collbench's own mpi and gloo runs (fixtures/capture_backends.sh): every (op, size) answered across both
    backends by ranking.choose, each 'gloo vs mpi' cell the ratio of the two backends' fastest p50s."""
    ds = load([real])
    assert set(ds.runs["backend"]) == {"mpi", "gloo"}
    assert {v.get("launcher") for v in ds.runs["versions"]} == {"mpi", "spawn"}
    c = report.collectives(ds)
    tables = report.build_tables(ds)
    per = _table(tables, "Backends side by side per (op, layout, size)")
    ops = sorted(set(c["op"]))
    assert len(per) == len(ops) * c["bytes"].nunique()
    assert list(_table(tables, report.BACKENDS_GLANCE)["compared"]) == ["gloo vs mpi"] * len(ops)
    for r in per.itertuples(index=False):
        at = c[(c["op"] == r.op) & (c["bytes"] == parse_size(r.size))]
        ch = choose(int(at["bytes"].iloc[0]), pool(at, name="series"))
        assert r[3] == report.answer_text(ch.choice.algo, ch.tied), r
        fastest = {b: g["p50_us"].min() for b, g in at.groupby("backend")}
        assert r[8].lstrip("≈ ") == report.times_text(fastest["gloo"] / fastest["mpi"]), r
    assert any("(gloo)" in s for s in _table(tables, "Peak bus bandwidth per (op, algo, layout)")["algorithm"])
    # the efficiency figures' points: one per backend's point, ring (mpi) and ring (gloo) never pooled
    eff = efficiency.efficiency_frame(ds.results)
    assert len(eff) == len(c) and set(eff["backend"]) == {"mpi", "gloo"}


# --------------------------------------------------------------------------- colltune

def test_colltune_keeps_one_backend_per_entry(files: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    ds = load([files["mixed"]])
    t = tune.tune(ds, generated="2026-11-27T00:00:00Z")
    assert sorted((e.op, e.backend) for e in t.entries) == [("allreduce", "gloo"), ("allreduce", "mpi"),
                                                             ("broadcast", "gloo"), ("broadcast", "mpi")]
    for e in t.entries:  # every candidate of an entry is one of its own backend's points
        own = {(algo, SIZES[i]): p50 for (b, op, algo), times in P50.items() if (b, op) == (e.backend, e.op)
               for i, p50 in enumerate(times)}
        for ch in e.choices:
            assert set(ch.tied) <= {a for a, _ in own}
            assert ch.best.p50 == pytest.approx(own[(ch.best.algo, ch.bytes)])
    # 8 B of allreduce: across backends library (gloo) ties library (mpi); each entry has its own library
    mpi = t.entry("allreduce", "mpi", "cpu", tune.Layout((2,)))
    gloo = t.entry("allreduce", "gloo", "cpu", tune.Layout((2,)))
    assert (mpi.choices[0].choice.algo, mpi.choices[0].choice.p50) == ("library", 2.0)
    assert (gloo.choices[0].choice.algo, gloo.choices[0].choice.p50) == ("library", 2.05)
    assert [r.algo for r in gloo.ranges] == ["library", "ring"] and [r.algo for r in mpi.ranges] == ["library", "ring"]

    path = tmp_path / "tuning.yaml"
    assert colltune_main([str(files["mixed"]), "-o", str(path)]) == 0
    back = tune.load_tuning(path)
    assert [(e.op, e.backend) for e in back.entries] == [(e.op, e.backend) for e in t.entries]
    # one command runs one backend's entries: mpi's by default, another's with --backend
    assert tune.run_command(path)[3:] == ["collbench", "--op", "broadcast,allreduce", "--algo", "auto", "--tuning",
                                          str(path)]
    assert tune.run_command(path, backend="gloo")[-4:] == ["--backend", "gloo", "--device", "cpu"]
    capsys.readouterr()
    assert colltune_main(["--command", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "--backend" not in out and f"colltune --command {path} --backend gloo" in err
    assert colltune_main(["--command", str(path), "--backend", "nccl"]) == 2
    assert "no entry of backend 'nccl' (it has: mpi, gloo)" in capsys.readouterr().err


# --------------------------------------------------------------------------- collcompare

def test_collcompare_compares_within_a_backend(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    mpi, gloo, mixed = (load([files[k]]).results for k in ("mpi", "gloo", "mixed"))
    # no backend in common: nothing to compare, said as an error (exit 2), pointing at collplot
    assert collcompare_main([str(files["mpi"]), str(files["gloo"])]) == 2
    err = capsys.readouterr().err
    assert "no backend in common" in err and "collplot BEFORE AFTER" in err
    # mpi before, mpi and gloo after: mpi's points compared, gloo's added, and the header says why
    res = compare.compare(mpi, mixed)
    verdicts = {(d.point.backend, d.verdict) for d in res.diffs}
    assert {v for b, v in verdicts if b == "gloo"} == {compare.Verdict.ADDED}
    assert {v for b, v in verdicts if b == "mpi"} == {compare.Verdict.CONTROL, compare.Verdict.UNCHANGED}
    assert any(line.startswith("backends: before mpi; after mpi, gloo: points are compared within one backend")
               for line in compare.header_lines(res, "a", "b"))
    # mixed on both sides: one run per backend is one run per side (not two replicate runs), so a gloo point
    # without a gloo control (broadcast has no gloo library) is inconclusive, not judged raw
    res = compare.compare(mixed, mixed)
    assert res.runs == (1, 1)
    bcast = [d for d in res.diffs if d.point.backend == "gloo" and d.point.op == "broadcast"]
    assert {d.verdict for d in bcast} == {compare.Verdict.INCONCLUSIVE}
    assert not any(line.startswith("backends:") for line in compare.header_lines(res, "a", "b"))
    assert collcompare_main([str(files["mixed"]), str(files["mixed"])]) == 0
