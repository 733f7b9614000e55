"""report.py: the answers that lead report.html and summary.md, on data whose times are known exactly,
and a caption saying what to read under every figure."""
from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from cb_synth import RunCtx, result, write_jsonl
from collbench_analysis import report
from collbench_analysis.cli import collplot_main
from collbench_analysis.load import load
from test_ddp import workload

# p50 (µs) per layout, size, algorithm: spread 0, so these are the times every table reads.
TIMES = {
    (1, 4): {1024: {"library": 10.0, "ring": 8.0, "tree": 12.0}, 1 << 20: {"library": 100.0, "ring": 120.0, "tree": 150.0}},
    (2, 2): {1024: {"library": 30.0, "ring": 40.0, "tree": 20.0}, 1 << 20: {"library": 500.0, "ring": 250.0, "tree": 600.0}},
}
BUCKETS = [1 << 20, 8 << 20, 16 << 20]


def _pingpong(ctx: RunCtx, src: int, dst: int, link: str, lat: float, bw: float) -> list[dict[str, Any]]:
    common: dict[str, Any] = dict(redop=None, dtype="uint8", src=src, dst=dst, link=link, spread=0.0)
    return [result(ctx, "pingpong", "latency", 8, lat, **common),
            result(ctx, "pingpong", "bw", 1 << 20, (1 << 20) / bw / 1e3, algbw_GBps=bw, busbw_GBps=bw, **common)]


def _dataset(root: Path, p2p: bool = True, ddp: bool = True) -> Path:
    for (nodes, rpn), by_size in TIMES.items():
        ctx = RunCtx(f"ans{nodes}x{rpn}", nodes, rpn)
        recs = [ctx.record()]
        recs += [result(ctx, "allreduce", a, n, t, spread=0.0) for n, times in by_size.items() for a, t in times.items()]
        if p2p and nodes == 2:  # ranks 0,1 on node 0; 2,3 on node 1
            recs += _pingpong(ctx, 0, 1, "intra", 2.0, 10.0)
            recs += _pingpong(ctx, 0, 2, "inter", 10.0, 1.0) + _pingpong(ctx, 1, 3, "inter", 12.0, 3.0)
        if ddp and nodes == 1:
            recs += [workload(ctx, "ring", BUCKETS, [200.0, 1000.0, 2000.0], (30.0, 60.0, 5.0)),
                     workload(ctx, "library", BUCKETS, [250.0, 1800.0, 3500.0], (30.0, 60.0, 5.0))]
        write_jsonl(root / f"r{nodes}x{rpn}.jsonl", recs + [ctx.end(len(recs) - 1)])
    return root


def _answers(root: Path) -> dict[str, Any]:
    from collbench_analysis import ddp

    ds = load([root])
    tables = report.build_tables(ds, ddp.workloads_of(ds))
    return {t.title: t for t in tables.answers}


def test_answers_have_the_known_winners_ratios_and_step_time(tmp_path: Path) -> None:
    got = _answers(_dataset(tmp_path / "in"))
    assert list(got) == ["Best algorithm per size and layout", "Custom vs library at a glance",
                         "Within vs across nodes (point-to-point)", "DDP step time"]

    best = got["Best algorithm per size and layout"]
    assert best.headers == ["op", "size", "1x4", "2x2"]
    assert best.rows == [["allreduce", "1K", "ring", "tree"], ["allreduce", "1M", "library", "ring"]]

    # speed-up = library p50 / custom p50: 1x4 ring 10/8 = 1.25 at 1K, 100/120 = 0.833 at 1M (median 1.04),
    # tree 0.833 and 0.667; 2x2 ring 0.75 and 2 (median 1.38), tree 1.5 and 0.833 (median 1.17).
    glance = got["Custom vs library at a glance"]
    assert glance.headers == ["op", "layout", "a custom algorithm is faster at", "best custom overall",
                              "its speed-up (median, range)", "largest speed-up"]
    assert glance.rows == [["allreduce", "1x4", "1 of 2 sizes", "ring", "1.04× (0.833–1.25×)", "1.25× (ring at 1K)"],
                           ["allreduce", "2x2", "2 of 2 sizes", "ring", "1.38× (0.75–2×)", "2× (ring at 1M)"]]

    # intra: one pair, 2 µs and 10 GB/s; inter: two pairs, medians 11 µs and 2 GB/s
    p2p = got["Within vs across nodes (point-to-point)"]
    assert p2p.rows == [["2x2", "8B", "2", "11", "5.50×", "1M", "10", "2", "5.00×"]]

    # ring syncs in 3.2 ms, the library in 5.55 ms. Modelled ring step: buckets ready at 2.4, 21.6, 60 ms of
    # B = 60 ms, the last ends at 62 ms: 30 + 62 + 5 = 97 ms; speed-up (4·90 + 5) / 97 = 3.76.
    step = got["DDP step time"]
    assert step.rows == [["toy", "1x4", "ring", "3.2", "5.55", "1.73×", "97", "3.76×"]]


def test_report_leads_with_the_answers(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert collplot_main([str(_dataset(tmp_path / "in")), "-o", str(out), "-q"]) == 0
    page = (out / "report.html").read_text()
    md = (out / "summary.md").read_text()
    order = [page.index(s) for s in ("id='answers'", "<h3>Best algorithm per size and layout</h3>",
                                     "<h3>Custom vs library at a glance</h3>",
                                     "<h3>Within vs across nodes (point-to-point)</h3>", "<h3>DDP step time</h3>",
                                     "id='tables'", "<figure")]
    assert order == sorted(order), order
    order = [md.index(s) for s in ("## Answers", "### Best algorithm per size and layout",
                                   "### Custom vs library at a glance", "### Within vs across nodes (point-to-point)",
                                   "### DDP step time", "## Summary tables", "![")]
    assert order == sorted(order), order
    assert "<a href='#answers'>Answers</a>" in page and page.count("<section class='answers'>") == 1


def test_every_figure_has_a_caption_saying_what_to_read(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert collplot_main([str(_dataset(tmp_path / "in")), "-o", str(out), "-q"]) == 0
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert {"busbw_allreduce_1x4.png", "ratio_allreduce_2x2.png", "p2p_2x2.png", "p2p_heatmap_2x2.png",
            "scaling_allreduce_ring_mpi.png", "ddp_sync_toy.png", "ddp_speedup_toy.png"} <= set(pngs)
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", (out / "report.html").read_text(), re.S)
    assert len(captions) == len(pngs)
    for cap in captions:
        text = re.sub(r"<a .*?</a>", "", cap).strip()
        assert "\n" not in text and re.search(r"\. Read: [^.]+", text), text
    md_captions = [line for line in (out / "summary.md").read_text().splitlines() if line.startswith("*") and ". Read: " in line]
    assert len(md_captions) == len(pngs)


def test_answers_without_p2p_or_ddp_leave_those_out(tmp_path: Path) -> None:
    got = _answers(_dataset(tmp_path / "in", p2p=False, ddp=False))
    assert list(got) == ["Best algorithm per size and layout", "Custom vs library at a glance"]


@pytest.mark.parametrize("algos", [{"ring": 5.0}, {"library": 5.0}])
def test_custom_vs_library_needs_both(tmp_path: Path, algos: dict[str, float]) -> None:
    ctx = RunCtx("one", 1, 2)
    path = write_jsonl(tmp_path / "a.jsonl", [ctx.record(), *(result(ctx, "allreduce", a, 64, t) for a, t in algos.items())])
    got = _answers(path.parent)
    assert list(got) == ["Best algorithm per size and layout"]
    assert got["Best algorithm per size and layout"].rows == [["allreduce", "64B", next(iter(algos))]]


def test_library_internals_are_not_custom_wins(tmp_path: Path) -> None:
    """library:ALGO (Open MPI's own ring forced) and han beat the library here, our ring does not: the
    answer says no custom algorithm is faster and shows the library's internals apart; the ratio figure
    draws them dotted, labelled as library internals; the node-aware table's best flat is ours."""
    times = {1024: {"library": 10.0, "ring": 12.0, "library:ring": 5.0, "han": 8.0, "hier_ring": 6.0},
             1 << 20: {"library": 100.0, "ring": 110.0, "library:ring": 90.0, "han": 120.0, "hier_ring": 95.0}}
    ctx = RunCtx("internals", 2, 2)
    recs = [ctx.record()]
    for n, by_algo in times.items():
        for a, t in by_algo.items():
            cfg = {} if a == "library" else None if a in ("ring", "hier_ring") else {"coll_tuned_allreduce_algorithm": "ring"}
            recs.append(result(ctx, "allreduce", a, n, t, spread=0.0, library_config=cfg))
    root = tmp_path / "in"
    write_jsonl(root / "r.jsonl", recs + [ctx.end(len(recs) - 1)])
    ds = load([root])
    assert ds.results.loc[ds.results["algo"] == "library:ring", "library_config"].iloc[0] == {
        "coll_tuned_allreduce_algorithm": "ring"}
    glance = _answers(root)["Custom vs library at a glance"]
    # custom: ring 10/12 = 0.833, 100/110 = 0.909; hier_ring 10/6 = 1.67, 100/95 = 1.05 (median 1.36).
    # internals: library:ring 2 and 1.11 (median 1.56), han 1.25 and 0.833 (median 1.04).
    assert glance.headers == ["op", "layout", "a custom algorithm is faster at", "best custom overall",
                              "its speed-up (median, range)", "largest speed-up",
                              "library internals (best, median; faster at)"]
    assert glance.rows == [["allreduce", "2x2", "2 of 2 sizes", "hier_ring", "1.36× (1.05–1.67×)",
                            "1.67× (hier_ring at 1K)", "library:ring 1.56× (2 of 2 sizes)"]]
    # Without hier_ring, our only algorithm loses everywhere: 0 wins, although library:ring and han win.
    write_jsonl(root / "r.jsonl", [r for r in recs if r.get("algo") != "hier_ring"] + [ctx.end(len(recs) - 3)])
    glance = _answers(root)["Custom vs library at a glance"]
    assert glance.rows[0][2:4] == ["0 of 2 sizes", "ring"], glance.rows
    # Node-aware vs flat: the best flat algorithm is our ring, never library:ring.
    write_jsonl(root / "r.jsonl", recs + [ctx.end(len(recs) - 1)])
    rows = report.node_aware_rows(load([root]))
    assert list(rows["flat"]) == ["ring", "ring"] and list(rows["han"]) == [8.0, 120.0]
    out = tmp_path / "out"
    assert collplot_main([str(root), "-o", str(out), "-q"]) == 0
    page = html.unescape((out / "report.html").read_text())
    after = page[page.index("ratio_allreduce_2x2.png"):]
    assert "Dotted: the library's own algorithms forced" in after[:after.index("</figcaption>")]
