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
    assert len(ds.points) == 6 and ds.runs[R1.run_id].finished and ds.runs[R1.run_id].hosts == ["n1"]
    assert {p.layout for p in ds.points} == {"1x2"}


def test_folder_is_searched_recursively(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a" / "b" / "x.jsonl", good_records())
    (tmp_path / "notes.txt").write_text("not results")
    assert len(load([tmp_path]).points) == 6


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
    assert len(ds.points) == 5 and not ds.runs[R1.run_id].finished
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
    assert len(ds.points) == 2 and len(ds.measured) == 1 and ds.skipped[0].skip_reason


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
    assert sorted((p.layout, p.world_size, p.time.p50) for p in ds.points) == [("2x3", 6, 10.0), ("3+1", 4, 20.0)]
    assert sorted(r.layout for r in ds.runs.values()) == ["2x3", "3+1"]
    assert sorted(["2x3", "3+1", "2x2", "1x2"], key=layout_sort_key) == ["1x2", "2x2", "3+1", "2x3"]
