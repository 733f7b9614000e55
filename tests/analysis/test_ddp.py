"""DDP workload records: loading, the overlap model on hand-computed cases, figures, the report section."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pytest

from cb_synth import SCHEMA, RunCtx, alpha_beta_sweep, write_jsonl

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
LINK = "emulated: veth through a Linux bridge, tbf 1gbit"


def workload(ctx: RunCtx, algo: str, bucket_bytes: Sequence[int], bucket_us: Sequence[float],
             compute: tuple[float, float, float] | dict[str, Any] | None = None, model: str = "toy", **extra: Any) -> dict[str, Any]:
    """One workload record as the C++ side writes it (the contract in docs/ddp.md).

    ``compute``: ``(F, B, O)`` as ``--compute-ms`` writes it (no ``source``, like older records),
    or the ``compute`` object itself (e.g. a per-layer profile's).
    """
    step = sum(bucket_us)
    rec: dict[str, Any] = {
        "type": "workload", "schema": SCHEMA, "run_id": ctx.run_id, "workload": "ddp", "op": "allreduce",
        "algo": algo, "backend": ctx.backend, "device": ctx.device, "world_size": ctx.world_size,
        "nodes": ctx.nodes, "ranks_per_node": ctx.ranks_per_node, "model": model, "model_source": "builtin",
        "param_count": sum(bucket_bytes) // 4, "param_tensors": 2 * len(bucket_bytes), "grad_dtype": "float32",
        "redop": "sum", "grad_bytes": sum(bucket_bytes), "bucket_cap_mb": 25.0, "first_bucket_cap_mb": 1.0,
        "grad_order": "reverse_registration",
        "buckets": [{"index": k, "tensors": 2, "count": b // 4, "bytes": b, "first": f"l{k}.bias",
                     "last": f"l{k}.weight"} for k, b in enumerate(bucket_bytes)],
        "mode": "per_iter", "sync": "clock", "sync_fallback": None, "late": 0, "iters": 20, "warmup": 3,
        "step_us": {"p5": step * 0.95, "p50": step, "p95": step * 1.1, "mean": step * 1.01, "min": step * 0.9,
                    "max": step * 1.2, "stddev": step * 0.03},
        "bucket_p50_us": list(bucket_us),
        "compute": (None if compute is None else dict(compute) if isinstance(compute, dict)
                    else dict(zip(("forward_ms", "backward_ms", "optimizer_ms"), compute))),
        "checked": True, "wrong": 0, "skipped": False, "skip_reason": None,
    }
    rec.update(extra)
    return rec


# --------------------------------------------------------------------------- overlap model

def test_no_compute_exposes_the_sum() -> None:
    from collbench_analysis.ddp import overlap

    ov = overlap([100, 300, 600], [400.0, 700.0, 900.0], None)
    assert ov.start_us == (0.0, 400.0, 1100.0) and ov.end_us == (400.0, 1100.0, 2000.0)
    assert ov.exposed_us == pytest.approx(2000.0) == ov.sync_us
    assert ov.step_us is None


def test_comm_hidden_but_the_last_buckets_tail() -> None:
    from collbench_analysis.ddp import Compute, overlap

    # B = 10 ms over 1+1+2 (bytes ratio): ready at 2.5, 5, 10 ms; buckets take 0.3, 0.4, 0.5 ms.
    ov = overlap([1000, 1000, 2000], [300.0, 400.0, 500.0], Compute(4.0, 10.0, 1.0))
    assert ov.ready_us == pytest.approx((2500.0, 5000.0, 10000.0))
    assert ov.start_us == pytest.approx((2500.0, 5000.0, 10000.0))  # each waits for its gradients only
    assert ov.end_us == pytest.approx((2800.0, 5400.0, 10500.0))
    assert ov.exposed_us == pytest.approx(500.0)  # only the last bucket, ready when backward ends
    assert [ov.exposed_part_us(k) for k in range(3)] == pytest.approx([0.0, 0.0, 500.0])
    assert ov.step_us == pytest.approx((4.0 + 10.0 + 0.5 + 1.0) * 1e3)


def test_comm_longer_than_backward() -> None:
    from collbench_analysis.ddp import Compute, overlap

    # B = 2 ms, ready at 0.5, 1, 2 ms; buckets take 1.0, 1.5, 0.8 ms: the stream is the bottleneck.
    ov = overlap([1000, 1000, 2000], [1000.0, 1500.0, 800.0], Compute(1.0, 2.0, 0.5))
    assert ov.start_us == pytest.approx((500.0, 1500.0, 3000.0))
    assert ov.end_us == pytest.approx((1500.0, 3000.0, 3800.0))
    assert ov.exposed_us == pytest.approx(3800.0 - 2000.0)  # end_last − B, exactly
    assert [ov.exposed_part_us(k) for k in range(3)] == pytest.approx([0.0, 1000.0, 800.0])
    assert ov.step_us == pytest.approx(1000.0 + 3800.0 + 500.0)


def test_speedup_formula_hand_example() -> None:
    from collbench_analysis.ddp import Compute, project

    p = project(4, Compute(10.0, 20.0, 2.0), exposed_ms=5.0)
    assert p.t1_ms == pytest.approx(122.0) and p.tn_ms == pytest.approx(37.0)
    assert p.speedup == pytest.approx(122.0 / 37.0) and p.speedup == pytest.approx(3.297, abs=1e-3)
    assert p.efficiency == pytest.approx(122.0 / 37.0 / 4)


def test_ready_times_proportional_to_bytes() -> None:
    from collbench_analysis.ddp import ready_times_us

    assert ready_times_us([1, 3], 8.0) == pytest.approx([2.0, 8.0])
    assert ready_times_us([0, 0], 8.0) == pytest.approx([4.0, 8.0])  # no sizes: even spread


def test_profile_ready_times_differ_from_the_bytes_rule() -> None:
    from collbench_analysis.ddp import Compute, overlap

    # 3 buckets of equal bytes, B = 12 ms, each all-reduce 2 ms.
    bytes_, times = [4096, 4096, 4096], [2000.0, 2000.0, 2000.0]
    prof = overlap(bytes_, times, Compute(5.0, 12.0, 1.0, "profile:layers.csv", (10.0, 1.0, 1.0)))
    assert prof.ready_us == pytest.approx((10000.0, 11000.0, 12000.0))
    assert prof.start_us == pytest.approx((10000.0, 12000.0, 14000.0))  # bucket 0 late: the stream queues
    assert prof.end_us == pytest.approx((12000.0, 14000.0, 16000.0))
    assert prof.exposed_us == pytest.approx(4000.0)
    assert prof.step_us == pytest.approx((5.0 + 16.0 + 1.0) * 1e3)
    # The same record without the profile: backward spread by bytes (equal here).
    flat = overlap(bytes_, times, Compute(5.0, 12.0, 1.0))
    assert flat.ready_us == pytest.approx((4000.0, 8000.0, 12000.0))
    assert flat.start_us == pytest.approx((4000.0, 8000.0, 12000.0))
    assert flat.end_us == pytest.approx((6000.0, 10000.0, 14000.0))
    assert flat.exposed_us == pytest.approx(2000.0)


# --------------------------------------------------------------------------- loading, figures, report

@pytest.fixture
def ddp_dir(tmp_path: Path) -> Path:
    """Two layouts (1x4, 2x2 with a declared link), ring + library, compute given; plus a collective sweep."""
    root = tmp_path / "in"
    buckets = [1 << 20, 8 << 20, 16 << 20]
    for k, (nodes, rpn) in enumerate(((1, 4), (2, 2))):
        ctx = RunCtx(f"ddp{k}", nodes, rpn, extra={"inter_node_link": LINK} if nodes > 1 else {})
        slow = 1.0 if nodes == 1 else 3.0
        recs = [ctx.record(),
                workload(ctx, "ring", buckets, [300 * slow, 2000 * slow, 4000 * slow], (30.0, 60.0, 5.0)),
                workload(ctx, "library", buckets, [250 * slow, 1800 * slow, 3500 * slow], (30.0, 60.0, 5.0))]
        write_jsonl(root / f"ddp_{nodes}x{rpn}.jsonl", recs + [ctx.end(0)])
    ctx = RunCtx("coll", 1, 4)
    write_jsonl(root / "sweep.jsonl", [ctx.record(), *alpha_beta_sweep(ctx, "allreduce", {"ring": (5, 1e-3)},
                                                                        [8, 1024, 65536])])
    return root


def test_load_workloads_joins_run_records(ddp_dir: Path) -> None:
    from collbench_analysis.ddp import workloads_of
    from collbench_analysis.load import load

    ds = load([ddp_dir])  # the one loader keeps the workload records beside the results
    assert ds.workloads == 4 and len(ds.results) == 3
    ws = workloads_of(ds)
    assert sorted((w.layout, w.algo) for w in ws) == [("1x4", "library"), ("1x4", "ring"),
                                                       ("2x2", "library"), ("2x2", "ring")]
    assert {w.inter_node_link for w in ws if w.nodes > 1} == {LINK}
    assert all(w.inter_node_link is None for w in ws if w.nodes == 1)
    w = ws[0]
    assert len(w.buckets) == 3 and w.buckets[2].bytes == 16 << 20 and w.compute is not None
    assert w.step is not None and w.step.p95 == pytest.approx(w.step.p50 * 1.1)
    assert w.step.stdev == pytest.approx(w.step.p50 * 0.03)  # the record's "stddev"


def test_step_stats_in_result_shape_also_read() -> None:
    from collbench_analysis.ddp import parse_workload

    rec = workload(RunCtx("w", 1, 2), "ring", [8, 8], [1.0, 2.0])
    rec["step_us"] = {"min": 2.0, "p5": 2.5, "p50": 3.0, "mean": 3.1, "p95": 3.5, "p99": 3.9, "max": 4.0, "stdev": 0.2}
    w = parse_workload(rec, "w.jsonl:2")
    assert w.step is not None and (w.step.stdev, w.step.p99) == (0.2, 3.9)


def test_workload_only_file_loads(tmp_path: Path) -> None:
    from collbench_analysis.load import load

    ctx = RunCtx("w", 1, 2)
    path = write_jsonl(tmp_path / "w.jsonl", [ctx.record(), workload(ctx, "ring", [8, 8], [1.0, 2.0])])
    assert load([path]).workloads == 1


def test_missing_field_names_file_and_line(tmp_path: Path) -> None:
    from collbench_analysis.ddp import load_workloads
    from collbench_analysis.load import LoadError

    ctx = RunCtx("w", 1, 2)
    rec = workload(ctx, "ring", [8, 8], [1.0, 2.0])
    del rec["bucket_p50_us"]
    path = write_jsonl(tmp_path / "w.jsonl", [ctx.record(), rec])
    with pytest.raises(LoadError, match=r"w\.jsonl:2: .*'bucket_p50_us' is missing"):
        load_workloads([path])


def test_figures_are_pngs(ddp_dir: Path, tmp_path: Path) -> None:
    from collbench_analysis.ddp import MODEL_LABEL, TIMELINE_LABEL, load_workloads, make_figures
    from collbench_analysis.load import discover

    out = tmp_path / "figs"
    figs = make_figures(load_workloads(discover([ddp_dir])), out)
    names = {f.filename for f in figs}
    assert names == {"ddp_sync_toy.png", "ddp_timeline_toy_2x2_library.png", "ddp_speedup_toy.png"}
    for name in names:
        data = (out / name).read_bytes()
        assert len(data) > 1000 and data[:8] == PNG_MAGIC, name
    caps = {f.filename: f for f in figs}
    assert TIMELINE_LABEL in caps["ddp_timeline_toy_2x2_library.png"].caption
    assert MODEL_LABEL in caps["ddp_speedup_toy.png"].caption
    assert all(LINK in f.note for f in figs)  # every figure shows a 2x2 (multi-node) record


def test_no_compute_means_no_speedup_figure(tmp_path: Path) -> None:
    from collbench_analysis.ddp import load_workloads, make_figures, tables

    ctx = RunCtx("w", 1, 2)
    path = write_jsonl(tmp_path / "w.jsonl", [ctx.record(), workload(ctx, "ring", [8, 8], [1.0, 2.0])])
    ws = load_workloads([path])
    figs = make_figures(ws, tmp_path / "o")
    assert {f.filename for f in figs} == {"ddp_sync_toy.png", "ddp_timeline_toy_1x2_ring.png"}
    (t,) = tables(ws)
    assert "exposed comm (ms)" not in t.headers and "speed-up" not in t.headers


def test_report_has_ddp_section(ddp_dir: Path, tmp_path: Path) -> None:
    from collbench_analysis.cli import collplot_main

    out = tmp_path / "out"
    assert collplot_main([str(ddp_dir), "-o", str(out), "-q"]) == 0
    html = (out / "report.html").read_text()
    md = (out / "summary.md").read_text()
    for text in (html, md):
        assert "DDP gradient synchronisation" in text
        assert "step sync p50 (ms)" in text and "speed-up" in text and "efficiency" in text
        assert "model from measured communication times" in text
        for name in ("ddp_sync_toy.png", "ddp_timeline_toy_2x2_library.png", "ddp_speedup_toy.png"):
            assert name in text
    # A row by hand: 1x4 ring, buckets 1+8+16 MiB over B = 60 ms: ready 2.4, 21.6, 60 ms; times 0.3, 2, 4 ms
    # -> the last ends at 64 ms: exposed 4 ms, step 30+64+5 = 99 ms, speed-up 4·90+5 / 99 = 3.69, 92 %.
    rows = [" ".join(line.split()) for line in md.splitlines()]  # Markdown pads cells to the column width
    assert "| 1x4 | ring | 3 | 25 | 6.3 | 6.93 | 4 | 99 | 3.69× | 92% |" in rows
    assert (out / "busbw_allreduce_1x4.png").exists()  # the collective figures are still drawn


def test_report_without_workloads_has_no_section(tmp_path: Path) -> None:
    from collbench_analysis.cli import collplot_main

    ctx = RunCtx("r", 1, 2)
    path = write_jsonl(tmp_path / "a.jsonl", [ctx.record(), *alpha_beta_sweep(ctx, "allreduce", {"ring": (5, 1e-3)},
                                                                                [8, 64, 512])])
    out = tmp_path / "out"
    assert collplot_main([str(path), "-o", str(out), "-q"]) == 0
    assert "DDP" not in (out / "report.html").read_text() and "DDP" not in (out / "summary.md").read_text()
    assert not list(out.glob("ddp_*.png"))


def test_skipped_and_wrong_records_are_flagged_not_plotted(tmp_path: Path) -> None:
    from collbench_analysis.ddp import load_workloads, make_figures, tables

    ctx = RunCtx("w", 1, 2)
    skipped = workload(ctx, "tree", [8, 8], [1.0, 2.0], skipped=True, skip_reason="NotSupported: demo",
                       step_us=None, bucket_p50_us=None)
    wrong = workload(ctx, "ring", [8, 8], [1.0, 2.0], wrong=3)
    path = write_jsonl(tmp_path / "w.jsonl", [ctx.record(), skipped, wrong])
    ws = load_workloads([path])
    assert [w.measured for w in ws] == [False, True]
    assert {f.filename for f in make_figures(ws, tmp_path / "o")} == {"ddp_sync_toy.png",
                                                                      "ddp_timeline_toy_1x2_ring.png"}
    (t,) = tables(ws)
    notes = {row[1]: row[-1] for row in t.rows}
    assert notes == {"ring": "WRONG RESULTS (3)", "tree": "skipped: NotSupported: demo"}
    assert t.row_classes == ["bad", ""]


def _profile(bucket_backward_ms: list[float], path: str = "prof/resnet.csv") -> dict[str, Any]:
    return {"forward_ms": 5.0, "backward_ms": sum(bucket_backward_ms), "optimizer_ms": 1.0,
            "source": f"profile:{path}", "bucket_backward_ms": bucket_backward_ms}


def test_profile_record_loads_and_drives_the_model(tmp_path: Path) -> None:
    from collbench_analysis.ddp import load_workloads, make_figures, tables, workload_overlap

    ctx = RunCtx("w", 1, 2)
    rec = workload(ctx, "ring", [8, 8, 8], [2000.0, 2000.0, 2000.0], compute=_profile([10.0, 1.0, 1.0]))
    path = write_jsonl(tmp_path / "w.jsonl", [ctx.record(), rec])
    (w,) = load_workloads([path])
    assert w.compute is not None and w.compute.profile == "prof/resnet.csv"
    assert w.compute.bucket_backward_ms == (10.0, 1.0, 1.0)
    ov = workload_overlap(w)
    assert ov.end_us == pytest.approx((12000.0, 14000.0, 16000.0)) and ov.exposed_us == pytest.approx(4000.0)
    (t,) = tables([w])
    assert "compute: per-layer profile prof/resnet.csv" in t.note and "--compute-ms" not in t.note
    assert t.rows[0][t.headers.index("exposed comm (ms)")] == "4"
    timeline = [f for f in make_figures([w], tmp_path / "o") if f.filename.startswith("ddp_timeline_")]
    assert len(timeline) == 1 and "compute: per-layer profile prof/resnet.csv" in timeline[0].caption


@pytest.mark.parametrize("values, message", [
    ([10.0, 2.0], r"2 compute\.bucket_backward_ms values for 3 buckets"),
    ([10.0, 1.0, 1.0, 0.5], r"4 compute\.bucket_backward_ms values for 3 buckets"),
    ([10.0, -1.0, 3.0], r"compute\.bucket_backward_ms\[1\] = -1\.0"),
])
def test_bad_bucket_backward_ms_names_file_and_line(tmp_path: Path, values: list[float], message: str) -> None:
    from collbench_analysis.ddp import load_workloads
    from collbench_analysis.load import LoadError

    ctx = RunCtx("w", 1, 2)
    good = workload(ctx, "tree", [8, 8, 8], [1.0, 2.0, 3.0], compute=_profile([1.0, 1.0, 1.0]))
    bad = workload(ctx, "ring", [8, 8, 8], [1.0, 2.0, 3.0], compute=_profile(values))
    path = write_jsonl(tmp_path / "w.jsonl", [ctx.record(), good, bad])
    with pytest.raises(LoadError, match=r"w\.jsonl:3: workload record: " + message):
        load_workloads([path])


def test_record_without_source_or_profile_behaves_as_before(tmp_path: Path) -> None:
    from collbench_analysis.ddp import load_workloads, make_figures, tables, workload_overlap

    ctx = RunCtx("w", 1, 2)
    old = workload(ctx, "ring", [1000, 1000, 2000], [300.0, 400.0, 500.0], (4.0, 10.0, 1.0))
    assert set(old["compute"]) == {"forward_ms", "backward_ms", "optimizer_ms"}
    explicit = workload(ctx, "tree", [1000, 1000, 2000], [300.0, 400.0, 500.0],
                        compute={"forward_ms": 4.0, "backward_ms": 10.0, "optimizer_ms": 1.0,
                                 "source": "--compute-ms"})
    path = write_jsonl(tmp_path / "w.jsonl", [ctx.record(), old, explicit])
    ws = load_workloads([path])
    for w in ws:
        assert w.compute is not None and w.compute.source == "--compute-ms" and w.compute.profile is None
        assert w.compute.bucket_backward_ms is None
        ov = workload_overlap(w)  # the bytes rule, as in test_comm_hidden_but_the_last_buckets_tail
        assert ov.ready_us == pytest.approx((2500.0, 5000.0, 10000.0))
        assert ov.end_us == pytest.approx((2800.0, 5400.0, 10500.0)) and ov.exposed_us == pytest.approx(500.0)
    (t,) = tables(ws)
    assert "compute from --compute-ms" in t.note and "profile" not in t.note
    caps = " ".join(f.caption for f in make_figures(ws, tmp_path / "o"))
    assert "spread over buckets by bytes" in caps and "profile" not in caps
