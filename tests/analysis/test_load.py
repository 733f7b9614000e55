"""Input validation: clear one-line messages naming file:line, and the right exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cb_synth import RunCtx, alpha_beta_sweep, result, write_jsonl
from collbench_analysis.cli import collcompare_main, collplot_main
from collbench_analysis.load import LoadError, format_bytes, layout_sort_key, load, parse_size
from conftest import ANALYSIS


R1 = RunCtx("r1", 1, 2)


def good_records() -> list[dict]:
    ctx = R1
    return [ctx.record(), *alpha_beta_sweep(ctx, "allreduce", {"ring": (5, 1e-3), "library": (4, 1e-3)}, [8, 64, 512]),
            ctx.end(6)]


def run_collplot(tmp_path: Path, *inputs: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, str(ANALYSIS / "collplot"), *inputs, "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr


def test_loads_good_file_with_unknown_fields(tmp_path: Path) -> None:
    recs = good_records()
    recs[1]["future_field"] = {"x": 1}
    recs[0]["another"] = [1, 2]
    ds = load([write_jsonl(tmp_path / "a.jsonl", recs)])
    assert len(ds.results) == 6 and ds.runs.loc[R1.run_id, "finished"] and ds.runs.loc[R1.run_id, "hosts"] == ["n1"]
    assert set(ds.results["layout"]) == {"1x2"}


def test_folder_is_searched_recursively(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a" / "b" / "x.jsonl", good_records())
    (tmp_path / "notes.txt").write_text("not results")
    assert len(load([tmp_path]).results) == 6


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert collplot_main([str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "nope.jsonl: no such file or directory" in err and err.count("\n") == 1


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(LoadError, match=r"e\.jsonl: empty file"):
        load([tmp_path / "e.jsonl"])


def test_run_without_results(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [RunCtx("r", 1, 2).record()])
    with pytest.raises(LoadError, match="no result records"):
        load([path])


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no \\*.jsonl files"):
        load([tmp_path])


@pytest.mark.parametrize("schema", ["collbench/2", None])
def test_wrong_or_missing_schema(tmp_path: Path, schema: str | None) -> None:
    recs = good_records()
    if schema is None:
        del recs[2]["schema"]
    else:
        recs[2]["schema"] = schema
    path = write_jsonl(tmp_path / "s.jsonl", recs)
    with pytest.raises(LoadError) as err:
        load([path])
    msg = str(err.value)
    assert f"{path}:3:" in msg and "unsupported schema" in msg and "collbench/1" in msg
    assert "\n" not in msg


def test_truncated_last_line_warns_but_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = good_records()[:-1]  # killed: no end record, last result half-written
    path = write_jsonl(tmp_path / "t.jsonl", recs, truncate_last=True)
    ds = load([path])
    assert len(ds.results) == 5 and not ds.runs.loc[R1.run_id, "finished"]
    err = capsys.readouterr().err
    assert f"{path}:7: truncated last line" in err
    code, stderr = run_collplot(tmp_path, str(path))
    assert code == 0 and "truncated last line" in stderr
    assert "no end record" in (tmp_path / "out" / "report.html").read_text()


def test_garbage_middle_line_is_an_error(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in good_records()]
    lines.insert(3, "{this is not json")
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LoadError, match=rf"{path.name}:4: not valid JSON"):
        load([path])
    code, stderr = run_collplot(tmp_path, str(path))
    assert code == 2 and f"{path}:4: not valid JSON" in stderr and "Traceback" not in stderr


def test_bad_field_type_names_field(tmp_path: Path) -> None:
    recs = good_records()
    recs[1]["bytes"] = "lots"
    with pytest.raises(LoadError, match=r":2: field 'bytes' must be an integer"):
        load([write_jsonl(tmp_path / "f.jsonl", recs)])


def test_unmeasured_point_needs_time(tmp_path: Path) -> None:
    recs = good_records()
    recs[1]["time_us"] = None
    with pytest.raises(LoadError, match=r":2: field 'time_us'"):
        load([write_jsonl(tmp_path / "f.jsonl", recs)])


def test_skipped_points_are_kept_but_not_measured(tmp_path: Path) -> None:
    ctx = RunCtx("r", 1, 3)
    recs = [ctx.record(), result(ctx, "allreduce", "rabenseifner", 64, None), result(ctx, "allreduce", "ring", 64, 3.0)]
    ds = load([write_jsonl(tmp_path / "s.jsonl", recs)])
    assert len(ds.results) == 2 and len(ds.measured) == 1 and ds.skipped["skip_reason"].iloc[0]


def test_collcompare_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", good_records())
    assert collcompare_main([str(good), str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err


def test_size_helpers() -> None:
    assert [parse_size(s) for s in ("8", "64K", "16M", "1G", "4KiB", "1.5K")] == [8, 65536, 16 << 20, 1 << 30, 4096, 1536]
    assert [format_bytes(n) for n in (8, 1024, 1536, 1 << 20, 1 << 30)] == ["8B", "1K", "1.5K", "1M", "1G"]
    with pytest.raises(ValueError):
        parse_size("lots")


def test_uneven_layouts_are_named_by_each_nodes_count(tmp_path: Path) -> None:
    """3 ranks on one node and 1 on another is "3+1", never "2x3" (the even 2x3 of 6 ranks)."""
    even = RunCtx("even23", 2, 3)
    uneven = RunCtx("uneven31", 2, 2)  # world size 4; the records say the most on a node, 3
    uneven.extra = {"node_of_rank": [0, 0, 0, 1], "ranks_per_node": 3, "uneven_layout": True,
                    "host_of_rank": ["n1", "n1", "n1", "n2"]}
    path = write_jsonl(tmp_path / "r.jsonl", [
        even.record(), result(even, "allreduce", "ring", 64, 10.0),
        uneven.record(), result(uneven, "allreduce", "ring", 64, 20.0, ranks_per_node=3)])
    ds = load([path])
    got = ds.results[["layout", "world_size", "p50_us"]].sort_values("layout").values.tolist()
    assert got == [["2x3", 6, 10.0], ["3+1", 4, 20.0]]
    assert sorted(ds.runs["layout"]) == ["2x3", "3+1"]
    assert sorted(["2x3", "3+1", "2x2", "1x2"], key=layout_sort_key) == ["1x2", "2x2", "3+1", "2x3"]


# --------------------------------------------------------------------------- the frame contract

def test_load_returns_one_row_per_result_with_flat_times_and_run_metadata(tmp_path: Path) -> None:
    """docs/analysis.md "Library use": the columns a user can rely on."""
    import pandas as pd

    import collbench_analysis

    link = "emulated: veth, tbf 1gbit"
    multi = RunCtx("multi", 2, 2, extra={"inter_node_link": link})
    recs = [*good_records(), multi.record(), result(multi, "allreduce", "ring", 4096, 40.0),
            result(multi, "allreduce", "ring", 8192, None), result(multi, "pingpong", "latency", 8, 2.0, src=0, dst=2,
                                                                   link="inter")]
    path = write_jsonl(tmp_path / "a.jsonl", recs)
    ds = collbench_analysis.load([path])  # the package-level entry point
    r = ds.results
    assert isinstance(r, pd.DataFrame) and isinstance(ds.runs, pd.DataFrame)
    assert len(r) == sum(1 for x in recs if x["type"] == "result") == 9
    # time_us.* flattened to <stat>_us, as floats; a skipped point has NaN times
    for stat in ("min", "p5", "p50", "mean", "p95", "p99", "max", "stdev"):
        assert r[f"{stat}_us"].dtype == float, stat
    ring = r[(r["run_id"] == multi.run_id) & (r["bytes"] == 4096)].iloc[0]
    rec = recs[-3]
    assert ring["p50_us"] == 40.0 and ring["p5_us"] == rec["time_us"]["p5"] and ring["p95_us"] == rec["time_us"]["p95"]
    assert ring["busbw_GBps"] == pytest.approx(rec["busbw_GBps"]) and ring["layout"] == "2x2"
    assert (ring["lo_us"], ring["hi_us"]) == (rec["time_us"]["p5"], rec["time_us"]["p95"]) and ring["measured"]
    skipped = r[r["skipped"]].iloc[0]
    assert pd.isna(skipped["p50_us"]) and not skipped["measured"] and skipped["bytes"] == 8192
    # run metadata joined by run_id
    assert ring["inter_node_link"] == link and ring["hosts"] == ["n1", "n2"] and ring["git_commit"] == "abc1234"
    assert ring["node_of_rank"] == [0, 0, 1, 1]
    single = r[r["run_id"] == R1.run_id]
    assert single["inter_node_link"].isna().all() and (single["end_time"] == "2026-11-22T07:45:00Z").all()
    # optional fields stay None (not NaN) where the record has none; p2p fields where it has them
    assert ring["src"] is None and ring["redop"] == "sum"
    pp = r[r["op"] == "pingpong"].iloc[0]
    assert (pp["src"], pp["dst"], pp["link"], pp["is_p2p"]) == (0, 2, "inter", True)
    assert list(ds.runs.index) == [R1.run_id, multi.run_id] and ds.runs.loc[multi.run_id, "layout"] == "2x2"


def test_readme_example_runs(tmp_path: Path) -> None:
    """The three-line example in docs/analysis.md runs as written on the example results."""
    readme = (ANALYSIS.parent / "docs" / "analysis.md").read_text()
    start = readme.index("```python\n", readme.index("## Library use")) + len("```python\n")
    code = readme[start:readme.index("```", start)]
    assert len(code.strip().splitlines()) == 3
    env: dict = {}
    import os

    cwd = os.getcwd()
    os.chdir(ANALYSIS.parent)
    try:
        exec(compile(code, "docs/analysis.md", "exec"), env)
    finally:
        os.chdir(cwd)
    table = env["table"]
    assert table.shape[0] >= 10 and "ring" in table.columns and (table.fillna(0) >= 0).all().all()


def test_latest_keeps_the_last_loaded_point(tmp_path: Path) -> None:
    from collbench_analysis.load import latest

    ctx = RunCtx("r", 1, 2)
    recs = [ctx.record(), result(ctx, "allreduce", "ring", 64, 3.0), result(ctx, "allreduce", "ring", 64, 5.0),
            result(ctx, "allreduce", "ring", 64, 4.0, dtype="float64")]
    r = latest(load([write_jsonl(tmp_path / "d.jsonl", recs)]).results)
    assert sorted(zip(r["dtype"], r["p50_us"])) == [("float32", 5.0), ("float64", 4.0)]
