"""results/schema/collbench-1.json: accepts what collbench writes, rejects malformed records.

The records collbench really writes are covered twice: the example sweep in results/example
(here) and every harness end-to-end run (tests/harness/collbench_check.py validates its output
with the same schema, strictly).
"""
from __future__ import annotations

import copy
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest

from cb_synth import RunCtx, demo, pingpong_sweep, result
from collbench_analysis import schema
from collbench_analysis.load import LoadError, load
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "harness"))
import collbench_check  # noqa: E402

EXAMPLE = ROOT / "results" / "example" / "results.jsonl"


@lru_cache(maxsize=1)
def _example() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip())


def example_records() -> list[dict[str, Any]]:
    return copy.deepcopy(list(_example()))


def first(kind: str, pred: Callable[[dict[str, Any]], bool] = lambda r: True) -> dict[str, Any]:
    return copy.deepcopy(next(r for r in _example() if r["type"] == kind and pred(r)))


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema.document())
    assert schema.SCHEMA_FILE.name == "collbench-1.json" and schema.schema_id() == "collbench/1"


def test_example_sweep_conforms_strictly() -> None:
    recs = example_records()
    assert {r["type"] for r in recs} == {"run", "result", "end", "workload"}  # the default sweep has a DDP case
    assert any(r.get("op") == "pingpong" for r in recs) and any(r.get("op") == "allreduce" for r in recs)
    for i, rec in enumerate(recs, 1):
        assert schema.first_error(rec, strict=True) is None, f"line {i}: {schema.first_error(rec, strict=True)}"
    # The whole document dispatches on "type" the same way.
    validator = jsonschema.Draft202012Validator(schema.document())
    assert all(validator.is_valid(r) for r in recs)


def test_synthetic_records_conform_strictly(tmp_path: Path) -> None:
    for path in demo(tmp_path):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            assert schema.first_error(rec, strict=True) is None, (line[:120], schema.first_error(rec, strict=True))


def test_skipped_point_conforms() -> None:
    rec = result(RunCtx("s", 1, 3), "allreduce", "rabenseifner", 64, None)
    assert schema.first_error(rec, strict=True) is None
    collbench_check.check_result(rec, "skipped")


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda r: r.__setitem__(key, value)


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda r: r.pop(key)


COLLECTIVE = ("result", lambda r: r["op"] == "allreduce")
ROOTED = ("result", lambda r: r["op"] == "broadcast")
P2P = ("result", lambda r: r["op"] == "pingpong")
RUN = ("run", lambda r: True)
END = ("end", lambda r: True)

MALFORMED = {
    "missing bytes": (COLLECTIVE, _drop("bytes"), "field 'bytes' is missing"),
    "bytes is a string": (COLLECTIVE, _set("bytes", "lots"), "field 'bytes' must be an integer"),
    "bytes is a float": (COLLECTIVE, _set("bytes", 8.5), "field 'bytes' must be an integer"),
    "negative bytes": (COLLECTIVE, _set("bytes", -8), "field 'bytes' must be >= 0"),
    "unknown op": (COLLECTIVE, _set("op", "allreduce2"), "field 'op' must be one of"),
    "unknown dtype": (COLLECTIVE, _set("dtype", "float128"), "field 'dtype' must be one of"),
    "unknown mode": (COLLECTIVE, _set("mode", "burst"), "field 'mode' must be one of"),
    "result without run_id": (COLLECTIVE, _drop("run_id"), "field 'run_id' is missing"),
    "run_id not 16 hex digits": (COLLECTIVE, _set("run_id", "r1"), "field 'run_id' must match"),
    "in_place is a string": (COLLECTIVE, _set("in_place", "false"), "field 'in_place' must be true or false"),
    "world_size 0": (COLLECTIVE, _set("world_size", 0), "field 'world_size' must be >= 1"),
    "measured without time_us": (COLLECTIVE, _set("time_us", None), "field 'time_us' must be an object"),
    "time_us without p95": (COLLECTIVE, lambda r: r["time_us"].pop("p95"), "field 'time_us.p95' is missing"),
    "negative p50": (COLLECTIVE, lambda r: r["time_us"].update(p50=-1.0), "field 'time_us.p50' must be >= 0"),
    "measured without busbw": (COLLECTIVE, _set("busbw_GBps", None), "field 'busbw_GBps' must be a number"),
    "skipped with times": (COLLECTIVE, _set("skipped", True), "must be null"),
    "skipped without reason": (COLLECTIVE, lambda r: r.update(skipped=True, time_us=None, algbw_GBps=None,
                                                              busbw_GBps=None, samples=0, checked=False),
                               "field 'skip_reason' must be a string"),
    "samples_us empty": (COLLECTIVE, _set("samples_us", []), "samples_us"),
    "negative sample": (COLLECTIVE, _set("samples_us", [1.0, -2.0]), "field 'samples_us[1]' must be >= 0"),
    "reducing op without redop": (COLLECTIVE, _set("redop", None), "field 'redop' must be a string"),
    "non-reducing op with redop": (ROOTED, _set("redop", "sum"), "field 'redop' must be null"),
    "rooted op without root": (ROOTED, _set("root", None), "field 'root' must be an integer"),
    "unrooted op with root": (COLLECTIVE, _set("root", 0), "field 'root' must be null"),
    "pingpong without src": (P2P, _drop("src"), "field 'src' is missing"),
    "pingpong with unknown link": (P2P, _set("link", "remote"), "field 'link' must be one of"),
    "pingpong with unknown method": (P2P, _set("algo", "ring"), "field 'algo' must be one of"),
    "run without versions": (RUN, _drop("versions"), "field 'versions' is missing"),
    "run with a number in slurm": (RUN, lambda r: r.update(slurm={"job_id": 12}), "field 'slurm.job_id' must be a string"),
    "run with bad start_time": (RUN, _set("start_time", "yesterday"), "field 'start_time' must match"),
    "run with negative node": (RUN, lambda r: r["node_of_rank"].__setitem__(0, -1), "field 'node_of_rank[0]' must be >= 0"),
    "end with negative points": (END, _set("points", -1), "field 'points' must be >= 0"),
    "end without exit_status": (END, _drop("exit_status"), "field 'exit_status' is missing"),
    "unknown record type": (END, _set("type", "begin"), "field 'type' must be one of"),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_malformed_records_are_rejected(case: str) -> None:
    (kind, pred), spoil, message = MALFORMED[case]
    rec = first(kind, pred)
    assert schema.first_error(rec) is None
    spoil(rec)
    problem = schema.first_error(rec)
    assert problem is not None and message in problem, problem
    assert not jsonschema.Draft202012Validator(schema.document()).is_valid(rec)
    with pytest.raises(collbench_check.CheckError, match="where: "):
        (collbench_check.check_result if rec["type"] == "result" else collbench_check._conforms)(rec, "where")


def test_wrong_schema_version_is_rejected() -> None:
    rec = first(*COLLECTIVE)
    rec["schema"] = "collbench/2"
    assert not jsonschema.Draft202012Validator(schema.document()).is_valid(rec)
    assert "collbench/1" in str(schema.first_error(rec))


def test_unknown_fields_are_read_but_not_written() -> None:
    rec = first(*COLLECTIVE)
    rec["added_in_a_later_1_x"] = 1
    assert schema.first_error(rec) is None  # readers ignore fields they do not know
    assert "added_in_a_later_1_x" in str(schema.first_error(rec, strict=True))  # the writer declares every field
    p2p_field_on_collective = first(*COLLECTIVE)
    p2p_field_on_collective["src"] = 0
    assert "src" in str(schema.first_error(p2p_field_on_collective, strict=True))


def test_loader_names_file_line_and_field(tmp_path: Path) -> None:
    recs = example_records()[:3]
    recs[1]["op"] = "allreduce2"
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    with pytest.raises(LoadError, match=rf"{path.name}:2: field 'op' must be one of"):
        load([path])


def test_loader_reads_the_example_sweep() -> None:
    ds = load([EXAMPLE])
    assert len(ds.runs) == 3 and ds.runs["finished"].all()
    p2p = ds.measured[ds.measured["is_p2p"]]
    assert len(p2p) and (~ds.measured["is_p2p"]).any() and p2p["link"].isin(["intra", "inter"]).all()


# ------------------------------------------------------------- rules only code can check

def test_cross_field_rules_live_in_the_checker() -> None:
    good = first("result", lambda r: r["op"] == "allreduce" and r["world_size"] == 4)
    collbench_check.check_result(good, "ok")
    for spoil, message in [
        (lambda r: r.update(busbw_GBps=r["algbw_GBps"]), "busbw"),  # allreduce on 4 ranks: factor 1.5
        (lambda r: r.update(algbw_GBps=r["algbw_GBps"] * 2, busbw_GBps=r["busbw_GBps"] * 2), "algbw"),
        (lambda r: r.update(count=r["count"] + 1), "count"),
        (lambda r: r["time_us"].update(p95=r["time_us"]["max"] * 2), "not ordered"),
    ]:
        rec = copy.deepcopy(good)
        spoil(rec)
        assert schema.first_error(rec, strict=True) is None  # the schema cannot see these
        with pytest.raises(collbench_check.CheckError, match=message):
            collbench_check.check_result(rec, "x")


def test_n_chunk_sizes_and_pairs_come_from_the_schema_facts() -> None:
    ctx = RunCtx("c", 1, 3)
    ok = result(ctx, "allgather", "ring", 96, 2.0)  # 3 chunks of 8 float32
    collbench_check.check_result(ok, "ok")
    with pytest.raises(collbench_check.CheckError, match="chunks"):
        collbench_check.check_result(result(ctx, "allgather", "ring", 100, 2.0), "x")
    collbench_check.check_result(result(ctx, "allreduce", "ring", 100, 2.0), "one chunk")
    (pp,) = [r for r in pingpong_sweep(ctx, [(0, 2)], [8]) if r["algo"] == "latency"]
    collbench_check.check_result(pp, "pair")
    with pytest.raises(collbench_check.CheckError, match="pair"):
        collbench_check.check_result({**pp, "dst": 3}, "x")


def test_op_facts_cover_every_op_the_schema_names() -> None:
    assert list(schema.ops()) == schema.document()["$defs"]["op"]["enum"]
    assert schema.p2p_ops() == {"pingpong"}
    assert schema.ops()["allreduce"].busbw_factor(4) == pytest.approx(1.5)
    assert schema.ops()["alltoall"].size_chunks(5) == 5 and schema.ops()["reduce"].size_chunks(5) == 1
    assert {"src", "dst", "root"} <= set(schema.point_identity())
