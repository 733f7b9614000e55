"""Two MPIs in one results folder: the report's "Open MPI vs MPICH" section (docs/analysis.md "Several MPIs").

The real file fixtures/mpis/openmpi_mpich.jsonl.gz (fixtures/capture_mpis.sh: a run of an Open MPI build and
one of an MPICH build of collbench, np 2, on this shared machine: fixture numbers, not measurements) for
the records as the binaries write them; its numbers are checked against the records themselves, read
here with json, not through the analysis. One MPI alone: no section, nothing said.
"""
from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

import pytest

from cb_synth import RunCtx, result, write_jsonl
from collbench_analysis import mpis, report, tune
from collbench_analysis.cli import collcompare_main, extra_figures
from collbench_analysis.load import Dataset, format_bytes, load

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mpis" / "openmpi_mpich.jsonl.gz"
SECTION = "Open MPI vs MPICH"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mpis") / "openmpi_mpich.jsonl"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    return path


@pytest.fixture(scope="module")
def ds(real: Path) -> Dataset:
    return load([real])


@pytest.fixture(scope="module")
def tables(ds: Dataset) -> report.Tables:
    return report.build_tables(ds)


def _records(path: Path) -> tuple[dict[str, str], list[dict]]:
    """run_id -> the MPI its run record names (first word(s) of versions.mpi), and the measured results."""
    recs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    mpi = {r["run_id"]: "MPICH" if r["versions"]["mpi"].startswith("MPICH ") else
           "Open MPI" if r["versions"]["mpi"].startswith("Open MPI ") else r["versions"]["mpi"]
           for r in recs if r["type"] == "run"}
    return mpi, [r for r in recs if r["type"] == "result" and not r["skipped"]]


def test_the_real_file_holds_both_mpis(real: Path, ds: Dataset) -> None:
    mpi, results = _records(real)
    assert sorted(mpi.values()) == ["MPICH", "Open MPI"]
    assert {r["backend"] for r in results} == {"mpi"}  # both write backend mpi: only the run record tells them apart
    assert set(ds.results["backend"]) == set(ds.results["mpi"]) == {"Open MPI", "MPICH"}


def test_section_numbers_are_the_records(real: Path, tables: report.Tables) -> None:
    """Every row of the per-size table: both p50s are the records' time_us.p50 of that point under each MPI,
    the ratio their quotient, and the verdict a tie exactly when the slower p50 is at most the faster one's p95."""
    mpi, results = _records(real)
    point = {}
    for r in results:
        point.setdefault((mpi[r["run_id"]], r["op"], r["algo"], r["bytes"]), []).append(r["time_us"])
    assert [t.title for t in tables.extra[SECTION]] == [f"{SECTION} at a glance", f"{SECTION} per (op, layout, size)"]
    per = tables.extra[SECTION][1].frame
    expected = {(op, algo, b) for (_, op, algo, b) in point}
    assert len(per) == len(expected) and set(per["layout"]) == {"1x2"}
    for r in per.to_dict("records"):
        b = next(b for (op, algo, b) in expected if (op, algo) == (r["op"], r["entry"]) and format_bytes(b) == r["size"])
        o, m = (point[(name, r["op"], r["entry"], b)] for name in ("Open MPI", "MPICH"))
        assert len(o) == len(m) == 1, "one run per MPI: the p50 shown is the record's own"
        o, m = o[0], m[0]
        assert float(r["Open MPI p50 (µs)"]) == pytest.approx(o["p50"], rel=6e-3), r
        assert float(r["MPICH p50 (µs)"]) == pytest.approx(m["p50"], rel=6e-3), r
        assert float(r["MPICH ÷ Open MPI"]) == pytest.approx(m["p50"] / o["p50"], rel=6e-3), r
        fast, slow = (o, m) if o["p50"] <= m["p50"] else (m, o)
        assert r["MPICH vs Open MPI"].startswith("≈") == (slow["p50"] <= fast["p95"]), r
        assert ("slower" in r["MPICH vs Open MPI"]) == (m["p50"] > o["p50"]), r
    glance = tables.extra[SECTION][0].frame
    lib = glance[(glance["op"] == "allreduce") & (glance["entry"] == "library")].iloc[0]
    ratios = sorted(point[("MPICH", "allreduce", "library", b)][0]["p50"] / point[("Open MPI", "allreduce", "library", b)][0]["p50"]
                    for (_, op, algo, b) in point if (op, algo) == ("allreduce", "library"))
    assert lib["compared"] == "MPICH vs Open MPI"
    assert f"median {report.times_text(statistics.median(ratios))}" in lib["over the sizes both measured"]


def test_report_html_has_the_section(ds: Dataset, tables: report.Tables, tmp_path: Path) -> None:
    """The section's tables and figures in report.html and summary.md (collplot's own figures left out:
    drawing them all doubled this file's time; the section's are collplot's extra_figures)."""
    out = tmp_path / "plots"
    figures = extra_figures(ds, out)
    page = report.write_html(out / "report.html", "t", ds, tables, figures).read_text(encoding="utf-8")
    for text in (f"<h2 id='fig-open-mpi-vs-mpich'>{SECTION}</h2>", f"{SECTION} per (op, layout, size)",
                 "<td>MPICH vs Open MPI</td>", "mpis_allreduce_1x2.png", "ring (MPICH)"):
        assert text in page, text
    assert sorted(p.name for p in out.glob("mpis_*.png")) == [f"mpis_{op}_1x2.png" for op in
                                                              ("allgather", "allreduce", "broadcast")]
    assert f"## {SECTION}" in report.write_markdown(out / "summary.md", "t", ds, tables, figures).read_text(
        encoding="utf-8")


def test_one_mpi_says_nothing(tmp_path: Path) -> None:
    ctx = RunCtx("ompi", 1, 2)
    path = write_jsonl(tmp_path / "r.jsonl", [ctx.record(), *(result(ctx, "allreduce", a, n, t) for a, t in
                                                              (("library", 2.0), ("ring", 3.0)) for n in (8, 1024))])
    ds = load([path])
    assert set(ds.results["backend"]) == {"mpi"}  # one MPI: named as always
    c = report.collectives(ds)
    assert mpis.versus(c).empty and mpis.tables(c) == [] and mpis.make_figures(ds, tmp_path / "out") == []
    tables = report.build_tables(ds)
    assert not tables.extra and not any("MPICH" in t.title or "Open MPI" in t.title for t in tables.all())
    page = report.write_html(tmp_path / "report.html", "t", ds, tables, extra_figures(ds, tmp_path)).read_text(
        encoding="utf-8")
    assert "MPICH" not in page and "Open MPI vs" not in page


def test_tools_that_need_one_mpi_say_so(real: Path, ds: Dataset, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """colltune refuses a two-MPI folder; collcompare of one MPI's run against the other's compares nothing
    and points at collplot's section (a regression test of one MPI's code is not an MPI comparison)."""
    with pytest.raises(tune.TuneError, match=r"several MPIs \(Open MPI, MPICH\)"):
        tune.tune(ds)
    recs = [json.loads(line) for line in real.read_text(encoding="utf-8").splitlines() if line.strip()]
    run_mpi = {r["run_id"]: r["versions"]["mpi"].split()[0] for r in recs if r["type"] == "run"}
    sides = {name: write_jsonl(tmp_path / f"{name}.jsonl", [r for r in recs if run_mpi[r["run_id"]] == name])
             for name in ("Open", "MPICH")}
    capsys.readouterr()
    assert collcompare_main([str(sides["Open"]), str(sides["MPICH"])]) == 2
    err = capsys.readouterr().err
    assert "before holds Open MPI results and after MPICH" in err and f"section '{SECTION}'" in err
