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
    assert prof.copy_us == pytest.approx(500.0)  # a profile: DDP's copies, O · 4/8
    assert prof.step_us == pytest.approx((5.0 + 16.0 + 0.5 + 1.0) * 1e3)
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


# --------------------------------------------------------------------------- cores, copies; PyTorch's DDP measured

@pytest.mark.parametrize("device, cpus, rpn, threads, share", [
    ("cpu", 2, 2, 1, 0.0),     # this machine: 2 ranks on 2 cores, no core left for Gloo's worker
    ("cpu", 3, 2, 1, 0.5),     # one free core for two ranks
    ("cpu", 16, 2, 1, 1.0),    # free cores: the one-stream overlap model as it was
    ("cpu", 16, 4, 4, 0.0),    # threads count: 4 ranks x 4 threads fill 16 cores
    ("cpu", None, 2, 1, 1.0),  # unknown CPU count (older records): as before
    ("cuda", 2, 2, 1, 1.0),    # a device computes elsewhere
])
def test_overlap_share_is_free_cores_per_rank(device: str, cpus: int | None, rpn: int, threads: int,
                                              share: float) -> None:
    from collbench_analysis.ddp import overlap_share

    assert overlap_share(device, cpus, rpn, threads) == pytest.approx(share)


def test_no_free_core_serialises_the_sync_and_copies_add() -> None:
    from collbench_analysis.ddp import Compute, overlap

    prof = Compute(4.0, 10.0, 2.0, "profile:p.yaml", (2.5, 2.5, 5.0))
    # Schedule as in test_comm_hidden_but_the_last_buckets_tail: alone it leaves 0.5 ms after backward.
    free = overlap([1000, 1000, 2000], [300.0, 400.0, 500.0], prof, share=1.0)
    assert free.exposed_us == pytest.approx(500.0)
    assert free.copy_us == pytest.approx(1000.0)  # O · 4/8: DDP's 4 passes at SGD-momentum's 8-pass rate
    assert free.step_us == pytest.approx((4.0 + 10.0 + 1.0 + 0.5 + 2.0) * 1e3)
    none = overlap([1000, 1000, 2000], [300.0, 400.0, 500.0], prof, share=0.0)
    assert none.exposed_us == pytest.approx(1200.0) == none.sync_us  # nothing hides under backward
    assert none.step_us == pytest.approx((4.0 + 10.0 + 1.0 + 1.2 + 2.0) * 1e3)
    half = overlap([1000, 1000, 2000], [300.0, 400.0, 500.0], prof, share=0.5)
    assert half.exposed_us == pytest.approx(0.5 * 500.0 + 0.5 * 1200.0)
    # --compute-ms: the optimizer is unknown, so no copies are charged.
    assert overlap([1, 1], [1.0, 1.0], Compute(1.0, 1.0, 8.0)).copy_us == 0.0


def test_run_records_cpus_drive_the_share(tmp_path: Path) -> None:
    from collbench_analysis.ddp import load_workloads, workload_overlap, workload_projection

    ctx = RunCtx("w", 1, 2, extra={"online_cpus": 2})
    rec = workload(ctx, "library", [8, 8, 8], [2000.0, 2000.0, 2000.0], compute=_profile([10.0, 1.0, 1.0]))
    (w,) = load_workloads([write_jsonl(tmp_path / "w.jsonl", [ctx.record(), rec])])
    assert w.online_cpus == 2
    ov = workload_overlap(w)
    assert ov.share == 0.0 and ov.exposed_us == pytest.approx(6000.0)
    # F 5 + B 12 + copies 0.5 + sync 6 + O 1 = 24.5 ms; T1 = 2·17 + 1 = 35 ms.
    assert ov.step_us == pytest.approx(24500.0)
    p = workload_projection(w)
    assert p is not None and p.tn_ms == pytest.approx(24.5) and p.t1_ms == pytest.approx(35.0)


def measured(model: str = "toy", step: float = 25.0, noop: float = 19.0, no_sync: float = 17.0,
             single: float = 34.0, run_ids: Sequence[str] = (), **extra: Any) -> dict[str, Any]:
    """One ddp_measured record as bench/ddp_torch.py writes it (results/README.md)."""
    def st(p50: float) -> dict[str, Any]:
        return {"p50": p50, "p5": p50 * 0.95, "p95": p50 * 1.1, "min": p50 * 0.9, "max": p50 * 1.2, "n": 8}

    rec = {"type": "ddp_measured", "schema": SCHEMA, "model": model, "model_spec": "m.py:Toy", "input": "2,8",
           "world_size": 2, "nodes": 1, "ranks_per_node": 2, "backend": "mpi", "device": "cpu", "threads_per_rank": 1,
           "bucket_cap_mb": 25.0, "rebuilt_bucket_sizes": [8, 8, 8], "steps": 8, "discarded": 2,
           "step_ms": st(step), "noop_hook_step_ms": st(noop), "no_sync_step_ms": st(no_sync),
           "single_step_ms": st(single), "speedup": single / step, "collbench_run_ids": list(run_ids),
           "torch": "1.13.1", "cpu_model": "Test CPU", "online_cpus": 2,
           "start_time": "2026-11-27T10:00:00Z", "end_time": "2026-11-27T10:01:00Z"}
    rec.update(extra)
    return rec


@pytest.fixture
def measured_dir(tmp_path: Path) -> Path:
    """collbench's library + ring records of model toy on 1x2 (2 online CPUs, a profile) and two
    PyTorch repetitions measured beside the first run, in their own file as the bench writes them."""
    root = tmp_path / "in"
    ctx = RunCtx("ab12cd34ab12cd34", 1, 2, extra={"online_cpus": 2})
    other = RunCtx("ffffffffffffffff", 1, 2, extra={"online_cpus": 2})
    prof = _profile([10.0, 1.0, 1.0])
    write_jsonl(root / "results.jsonl", [
        ctx.record(), workload(ctx, "library", [8, 8, 8], [2000.0] * 3, compute=prof),
        workload(ctx, "ring", [8, 8, 8], [1000.0] * 3, compute=prof), ctx.end(0),
        # Not named by the measured records: must not be the one compared.
        other.record(), workload(other, "library", [8, 8, 8], [9000.0] * 3, compute=prof), other.end(0)])
    write_jsonl(root / "ddp_measured.jsonl", [measured(step=25.0, run_ids=[ctx.run_id]),
                                              measured(step=27.0, run_ids=[ctx.run_id])])
    return root


def test_measured_table_by_hand(measured_dir: Path) -> None:
    from collbench_analysis.ddp import measured_of, measured_tables, workloads_of
    from collbench_analysis.load import load

    ds = load([measured_dir])
    ms = measured_of(ds)
    assert [m.step_ms for m in ms] == [25.0, 27.0] and ms[0].layout == "1x2"
    head, parts = measured_tables(ms, workloads_of(ds))
    # Measured: median of 25 and 27 = 26 ms. Predicted: 24.5 ms (test_run_records_cpus_drive_the_share)
    # -> -6 %; one process 34 ms measured, 35 ms projected; speed-ups 34/26 and 35/24.5.
    assert head.rows == [["toy", "1x2", "2", "26", "25–27", "24.5", "-6%", "34", "35", "1.31×", "1.43×"]]
    assert "2 online CPUs shared by the node's 2 ranks" in head.note and "Test CPU" in head.note
    # no_sync 17 vs profile 18; copies 19−17 = 2 vs 0.5; exposed 26−19 = 7 vs 6; sync 6; φ 0.
    assert parts.rows == [["toy", "1x2", "17", "18", "2", "0.5", "7", "6", "6", "0"]]


def test_report_shows_predicted_vs_measured_and_algorithms(measured_dir: Path, tmp_path: Path) -> None:
    from collbench_analysis.cli import collplot_main

    out = tmp_path / "out"
    assert collplot_main([str(measured_dir), "-o", str(out), "-q"]) == 0
    for text in ((out / "report.html").read_text(), (out / "summary.md").read_text()):
        assert "DDP step: predicted vs measured (PyTorch DDP)" in text
        assert text.count("2 online CPUs shared by") == 1  # the machine caveat, once
        assert "DDP step by algorithm" in text
    rows = [" ".join(line.split()) for line in (out / "summary.md").read_text().splitlines()]
    # Modelled steps, φ = 0: ring 5 + 12 + 0.5 + 3 + 1 = 21.5 ms; the library's latest record (the other run,
    # 9 ms buckets) 5 + 12 + 0.5 + 27 + 1 = 45.5 ms: ring ÷ library = 0.47.
    assert "| toy | 1x2 | 45.5 | 21.5 (0.47) | ring |" in rows


def test_bad_measured_record_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from collbench_analysis.cli import collplot_main

    rec = measured()
    del rec["step_ms"]
    path = write_jsonl(tmp_path / "ddp_measured.jsonl", [rec])
    assert collplot_main([str(path), "-o", str(tmp_path / "o"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ddp_measured.jsonl:1" in err[0] and "step_ms" in err[0]
