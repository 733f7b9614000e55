"""The Python writers of the tuning and expectation files against their JSON Schemas
(results/schema/collbench-tuning-1.json, collbench-expect-1.json): colltune's and collcompare
--write-expect's output, loaded with PyYAML as any reader would, is schema-valid, including the
uneven layouts, library:ALGO names and several entries they write. The schemas' op and dtype
lists are checked against the results schema's. (collbench's readers against the same schemas:
tests/harness/formats.py.)"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from cb_synth import RunCtx, result, write_jsonl
from collbench_analysis import schema
from collbench_analysis.cli import collcompare_main, colltune_main
from conftest import ROOT

SCHEMAS = ROOT / "results" / "schema"


def validator(name: str) -> jsonschema.Draft202012Validator:
    doc = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def errors(name: str, path: Path) -> list[str]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(name).iter_errors(data)]


def _results(root: Path) -> Path:
    """Two runs: 1x4 and the uneven 3+1, allreduce and broadcast, a library variant that wins sizes."""
    even = RunCtx("even", 1, 4)
    uneven = RunCtx("uneven", 2, 2, extra={"world_size": 4, "node_of_rank": [0, 0, 0, 1],
                                           "host_of_rank": ["n1", "n1", "n1", "n2"], "uneven_layout": True})
    recs: list[dict[str, Any]] = []
    for ctx in (even, uneven):
        recs.append(ctx.record())
        for n in (8, 1024, 1 << 16, 1 << 20):
            for op, algo, t in (("allreduce", "library", 10.0 + n / 1e3), ("allreduce", "ring", 12.0 + n / 2e3),
                                ("allreduce", "library:ring", 30.0), ("broadcast", "tree", 5.0 + n / 4e3),
                                ("broadcast", "library", 6.0 + n / 3e3)):
                rec = result(ctx, op, algo, n, t, in_place=n == 8 and algo == "ring")
                rec.update(world_size=4, ranks_per_node=ctx.ranks_per_node if ctx is even else 3)
                recs.append(rec)
        recs.append(ctx.end(20))
    return write_jsonl(root / "r.jsonl", recs)


def test_colltune_writes_schema_valid_tuning_files(tmp_path: Path) -> None:
    src = _results(tmp_path)
    for extra in ([], ["--tie", "median"], ["--margin", "5%", "--op", "allreduce"]):
        out = tmp_path / "tuning.yaml"
        assert colltune_main([str(src), "-o", str(out), *extra]) == 0
        assert errors("collbench-tuning-1.json", out) == [], out.read_text()
    doc = yaml.safe_load(out.read_text())
    assert {str(e["layout"]["ranks_per_node"]) for e in doc["entries"]} == {"4", "[3, 1]"}


def test_write_expect_writes_schema_valid_expectation_files(tmp_path: Path) -> None:
    src = _results(tmp_path)
    for extra in ([], ["--expect-tolerance", "5%", "--expect-metric", "time"], ["--expect-metric", "busbw"]):
        out = tmp_path / "expect.yaml"
        assert collcompare_main([str(src), "--write-expect", str(out), *extra]) == 0
        assert errors("collbench-expect-1.json", out) == [], out.read_text()
    doc = yaml.safe_load(out.read_text())
    assert any(e["layout"] == [3, 1] for e in doc["entries"]) and any(e["in_place"] for e in doc["entries"])


def test_the_schemas_name_the_results_schemas_ops_and_dtypes() -> None:
    tuning = json.loads((SCHEMAS / "collbench-tuning-1.json").read_text())
    expect = json.loads((SCHEMAS / "collbench-expect-1.json").read_text())
    collectives = [op for op, f in schema.ops().items() if f.kind == "collective"]
    assert tuning["$defs"]["entry"]["properties"]["op"]["enum"] == collectives
    assert expect["$defs"]["entry"]["properties"]["op"]["enum"] == list(schema.ops())
    dtypes = expect["$defs"]["entry"]["properties"]["dtype"]["enum"]
    assert dtypes[:len(schema.dtype_sizes())] == list(schema.dtype_sizes())  # then --dtype's aliases
