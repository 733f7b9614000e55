"""collcompare RESULTS --write-expect FILE (collbench_analysis/expect.py) on synthetic runs, and the
efficiency figures collplot adds (collbench_analysis/efficiency.py). That collbench accepts the
written file and a rerun passes it is tested end to end in tests/harness/expect_e2e.py."""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from cb_synth import RunCtx, pingpong_sweep, result, write_jsonl
from collbench_analysis import schema
from collbench_analysis.cli import collcompare_main, collplot_main


def _runs(root: Path) -> Path:
    """Two 1x4 runs (ring 10 % faster in the second) and one uneven 3+1 run."""
    for k, speed in enumerate((1.0, 1.1)):
        ctx = RunCtx(f"good{k}", 1, 4)
        recs = [ctx.record()]
        for nbytes in (8, 1024, 1 << 20, 16 << 20):
            recs.append(result(ctx, "allreduce", "ring", nbytes, (5 + nbytes / 2e3) / speed, efficiency=0.5))
            recs.append(result(ctx, "allreduce", "library", nbytes, 4 + nbytes / 3e3, efficiency=0.7))
        # Another redop at the same key: the file cannot tell them apart, the weaker (slower) one counts.
        recs.append(result(ctx, "allreduce", "library", 16 << 20, 2 * (4 + (16 << 20) / 3e3), redop="max"))
        recs.append(result(ctx, "allreduce", "tree", 1 << 20, None))                 # skipped: no reference
        recs.append(result(ctx, "allreduce", "naive", 1 << 20, 50.0, wrong=3))       # wrong: no reference
        recs.append(result(ctx, "allreduce", "library", 1 << 20, 300.0, in_place=True))
        recs += pingpong_sweep(ctx, [(0, 1)], [8])                                   # pingpong: not gated
        recs.append(ctx.end(len(recs) - 1))
        write_jsonl(root / f"good{k}.jsonl", recs)
    uneven = RunCtx("uneven", 2, 3)
    rec = uneven.record()
    rec.update(world_size=4, node_of_rank=[0, 0, 0, 1], host_of_rank=["n1", "n1", "n1", "n2"], uneven_layout=True)
    res = result(uneven, "broadcast", "library", 1 << 20, 100.0)
    res.update(world_size=4)
    write_jsonl(root / "uneven.jsonl", [rec, res, uneven.end(1)])
    return root


def test_write_expect_references_and_format(tmp_path: Path) -> None:
    runs = _runs(tmp_path / "runs")
    out = tmp_path / "gate" / "expect.yaml"
    assert collcompare_main([str(runs), "--write-expect", str(out), "--expect-tolerance", "25%"]) == 0
    text = out.read_text()
    doc = yaml.safe_load(text)
    assert doc["schema"] == "collbench-expect/1"
    assert doc["tolerance"] == "25%"
    assert len(doc["runs"]) == 3
    entries = doc["entries"]
    key = {(e["op"], e["algo"], str(e["layout"]), e["bytes"], e["in_place"]): e for e in entries}
    # Small messages: the p50 time (median of the two runs); large ones: busbw.
    ring8 = key[("allreduce", "ring", "1x4", 8, False)]
    assert set(ring8) >= {"max_time_us"} and "min_busbw_GBps" not in ring8
    t0, t1 = 5 + 8 / 2e3, (5 + 8 / 2e3) / 1.1
    assert abs(ring8["max_time_us"] - (t0 + t1) / 2) < 1e-4
    ring16 = key[("allreduce", "ring", "1x4", 16 << 20, False)]
    bw = [(16 << 20) / ((5 + (16 << 20) / 2e3) / s) / 1e3 * 1.5 for s in (1.0, 1.1)]
    assert abs(ring16["min_busbw_GBps"] - sum(bw) / 2) / ring16["min_busbw_GBps"] < 1e-5
    # The weaker of two variants the file cannot tell apart (redop max took twice as long).
    lib16 = key[("allreduce", "library", "1x4", 16 << 20, False)]
    slow = (16 << 20) / (2 * (4 + (16 << 20) / 3e3)) / 1e3 * 1.5
    assert abs(lib16["min_busbw_GBps"] - slow) / slow < 1e-5
    # Placement is kept apart; skipped, wrong and pingpong points give no entry.
    assert ("allreduce", "library", "1x4", 1 << 20, True) in key
    assert not any(e["algo"] in ("tree", "naive") for e in entries)
    assert not any(e["op"] == "pingpong" for e in entries)
    # An uneven layout as each node's rank count.
    assert key[("broadcast", "library", "[3, 1]", 1 << 20, False)]["min_busbw_GBps"] > 0
    # One entry per line, so collbench can name it by line.
    assert sum(1 for line in text.splitlines() if re.match(r"  - \{op: ", line)) == len(entries)


def test_write_expect_usage(tmp_path: Path, capsys) -> None:
    runs = _runs(tmp_path / "runs")
    out = tmp_path / "e.yaml"
    assert collcompare_main([str(runs), str(runs), "--write-expect", str(out)]) == 2
    assert collcompare_main([str(runs)]) == 2
    assert "or one with --write-expect FILE" in capsys.readouterr().err
    assert collcompare_main([str(tmp_path / "missing"), "--write-expect", str(out)]) == 2
    assert not out.exists()
    only_bad = tmp_path / "bad"
    ctx = RunCtx("bad", 1, 2)
    write_jsonl(only_bad / "r.jsonl", [ctx.record(), result(ctx, "allreduce", "ring", 8, None), ctx.end(1)])
    assert collcompare_main([str(only_bad), "--write-expect", str(out)]) == 2
    assert "no measured, verified collective point" in capsys.readouterr().err
    assert not out.exists()


def test_efficiency_figures_and_schema(tmp_path: Path) -> None:
    runs = _runs(tmp_path / "runs")
    run = yaml.safe_load((runs / "good0.jsonl").read_text().splitlines()[0])
    run.update(cpu_model="Test CPU", binding=[{"cpus": "0-1", "numa": "0"}] * 4,
               hardware=[{"host": "n1", "cpu_model": "Test CPU", "packages": 1, "numa_nodes": 1, "cores": 2, "pus": 2,
                          "caches": [{"level": 1, "type": "data", "size_bytes": 49152, "count": 2}], "hwloc": "2.9.0"}],
               links={"intra": {"GBps": 5.5, "src": 0, "dst": 1, "bytes": 1048576, "method": "bw"}, "inter": None})
    assert schema.first_error(run, strict=True) is None
    bad = yaml.safe_load(json.dumps(run))
    bad["links"]["intra"]["method"] = "latency"
    assert schema.first_error(bad, strict=True) is not None
    end = yaml.safe_load((runs / "good0.jsonl").read_text().splitlines()[-1])
    end["expect"] = {"file": "/x/expect.yaml", "checked": 9, "failed": 2}
    assert schema.first_error(end, strict=True) is None
    lines = (runs / "good0.jsonl").read_text().splitlines()
    (runs / "good0.jsonl").write_text("\n".join([json.dumps(run), *lines[1:-1], json.dumps(end)]) + "\n")
    out = tmp_path / "plots"
    assert collplot_main([str(runs), "-o", str(out), "-q"]) == 0
    pngs = sorted(p.name for p in out.glob("efficiency_*.png"))
    assert pngs == ["efficiency_allreduce_1x4_float32.png"]
    assert (out / pngs[0]).stat().st_size > 5000
    html = (out / "report.html").read_text()
    assert "Efficiency" in html and pngs[0] in html
    # The provenance table of the default report: hardware, binding, links, the gate's verdict.
    md = (out / "summary.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith(f"| {run['run_id']} |"))
    for text in ("0 n1", "Test CPU", "1 pkg, 1 NUMA, 2 cores, 2 PUs", "L1d 48K×2", "4 rank(s): cpus 0-1, NUMA 0",
                 "5.50 GB/s (0-1)", "2 of 9 below (expect.yaml)"):
        assert text in row, (text, row)
    assert "### Hardware, links and acceptance" in md
    # The same run without --expect says so: the default report shows every run's acceptance state.
    del end["expect"]
    (runs / "good0.jsonl").write_text("\n".join([json.dumps(run), *lines[1:-1], json.dumps(end)]) + "\n")
    from collbench_analysis import load, provenance
    ungated = provenance.table(load([str(runs / "good0.jsonl")]))
    assert ungated is not None and "--expect" in ungated.headers
    assert set(ungated.frame["--expect"]) == {"not gated"}
