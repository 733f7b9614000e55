"""Issue 19: the declared inter-node link on every multi-node figure and in the report, and the
"Node-aware vs flat" table's times and ratios on a dataset whose times are known exactly."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from cb_synth import RunCtx, alpha_beta_sweep, pingpong_sweep, result, traits, write_jsonl
from collbench_analysis import plots, report
from collbench_analysis.cli import collcompare_main, collplot_main
from collbench_analysis.load import describe_links, inter_node_links, link_note, load

LINK = "emulated: TCP over veth through a Linux bridge, rate tbf 1gbit"
OTHER = "emulated: TCP over veth, rate tbf 100mbit"
SIZES = [1024, 1 << 20]


def _sweep(ctx: RunCtx, algos: dict[str, tuple[float, float]], op: str = "allreduce") -> list[dict[str, Any]]:
    return alpha_beta_sweep(ctx, op, algos, SIZES)


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Every figure collplot/collcompare saves, by file name: the texts drawn on the figure itself."""
    texts: dict[str, list[str]] = {}
    original = plots._save

    def save(fig: Any, outdir: Path, name: str) -> str:
        texts[name] = [t.get_text() for t in fig.texts]
        return original(fig, outdir, name)

    monkeypatch.setattr(plots, "_save", save)
    return texts


def _flat(text: str) -> str:
    """A footnote is wrapped to the figure's width: compare without the line breaks."""
    return " ".join(text.split())


# --------------------------------------------------------------------------- loading


def test_run_record_link_is_loaded_and_old_records_still_load(tmp_path: Path) -> None:
    new = RunCtx("new", 2, 2, extra={"inter_node_link": LINK})
    unset = RunCtx("unset", 2, 2, extra={"inter_node_link": None})
    old = RunCtx("old", 2, 1)  # written before the field existed: no key at all
    assert "inter_node_link" not in old.record()
    recs = [new.record(), unset.record(), old.record()]
    recs += [result(c, "allreduce", "ring", 1024, 10.0) for c in (new, unset, old)]
    ds = load([write_jsonl(tmp_path / "a.jsonl", recs)])
    assert ds.runs.loc[new.run_id, "inter_node_link"] == LINK
    assert ds.runs.loc[unset.run_id, "inter_node_link"] is None
    assert ds.runs.loc[old.run_id, "inter_node_link"] is None
    assert inter_node_links(ds.results) == [LINK, None]
    assert link_note(inter_node_links(ds.results)) == f"inter-node link: {LINK} | not declared (runs differ)"


def test_link_of_single_node_points_and_undeclared_runs_makes_no_note(tmp_path: Path) -> None:
    single = RunCtx("single", 1, 4, extra={"inter_node_link": LINK})
    multi_old = RunCtx("multi_old", 2, 2)
    recs = [single.record(), multi_old.record(), result(single, "allreduce", "ring", 8, 1.0),
            result(multi_old, "allreduce", "ring", 8, 1.0)]
    ds = load([write_jsonl(tmp_path / "a.jsonl", recs)])
    assert inter_node_links(ds.results[ds.results["nodes"] == 1]) == []
    assert inter_node_links(ds.results) == [None]
    assert link_note(inter_node_links(ds.results)) == ""
    assert describe_links([OTHER, LINK]) == f"{OTHER} | {LINK} (runs differ)"


# --------------------------------------------------------------------------- figures and report


def test_multi_node_figures_and_report_carry_the_link(tmp_path: Path, captured: dict[str, list[str]]) -> None:
    single = RunCtx("single", 1, 2, extra={"inter_node_link": LINK})  # the launcher set it, but no link was crossed
    multi = RunCtx("multi", 2, 2, extra={"inter_node_link": LINK})
    algos = {"library": (20.0, 1e-3), "ring": (30.0, 1e-3)}
    write_jsonl(tmp_path / "in" / "single.jsonl", [single.record(), *_sweep(single, algos)])
    write_jsonl(tmp_path / "in" / "multi.jsonl",
                [multi.record(), *_sweep(multi, algos), *pingpong_sweep(multi, [(0, 1), (0, 2), (1, 3)], SIZES)])
    out = tmp_path / "out"
    assert collplot_main([str(tmp_path / "in"), "-o", str(out), "-q"]) == 0

    note = f"inter-node link: {LINK}"
    # scaling and the answers chart: 1x2 and 2x2 together
    multi_figs = {n for n in captured if "2x2" in n or n.startswith(("scaling_", "answers_"))}
    single_figs = {n for n in captured if "1x2" in n}
    # Two sizes, one of them small, one custom algorithm: no latency figure (it would repeat the busbw one) and
    # no ratio figure (ring over the library at two sizes: the best table's "vs library" column).
    assert multi_figs >= {"busbw_allreduce_2x2.png", "answers_allreduce.png", "p2p_2x2.png", "p2p_heatmap_2x2.png",
                          "scaling_allreduce_ring_mpi.png"}
    assert single_figs == {"busbw_allreduce_1x2.png"}
    for name in multi_figs:
        assert [t for t in captured[name] if _flat(t) == note], (name, captured[name])
    for name in single_figs:
        assert not any("inter-node link" in t for t in captured[name]), (name, captured[name])

    page = (out / "report.html").read_text()
    md = (out / "summary.md").read_text()
    for text in (page, md):
        assert f"inter-node link, 2x2: {LINK}" in text  # the overview, per multi-node layout
        assert "inter-node link, 1x2" not in text
        assert text.count(f"{note}.") == len(multi_figs)  # each multi-node figure's caption, and no other
    assert "<th>inter-node link</th>" in page  # the runs table: the multi-node run's link, "—" for the other
    runs_row = next(line for line in md.splitlines() if line.startswith(f"| {multi.run_id}"))
    assert f"| {LINK} |" in runs_row
    single_row = next(line for line in md.splitlines() if line.startswith(f"| {single.run_id}"))
    assert LINK not in single_row


def test_single_node_dataset_has_no_link_anywhere(tmp_path: Path, captured: dict[str, list[str]]) -> None:
    ctx = RunCtx("single", 1, 4, extra={"inter_node_link": LINK})
    path = write_jsonl(tmp_path / "a.jsonl", [ctx.record(), *_sweep(ctx, {"library": (2.0, 1e-4), "ring": (3.0, 1e-4)})])
    out = tmp_path / "out"
    assert collplot_main([str(path), "-o", str(out), "-q"]) == 0
    assert captured and not any("inter-node link" in t for texts in captured.values() for t in texts)
    for name in ("report.html", "summary.md"):
        text = (out / name).read_text()
        assert LINK not in text and "inter-node link" not in text, name


def test_runs_that_disagree_list_every_link(tmp_path: Path, captured: dict[str, list[str]]) -> None:
    a = RunCtx("a", 2, 1, extra={"inter_node_link": LINK})
    b = RunCtx("b", 2, 1, extra={"inter_node_link": OTHER})
    c = RunCtx("c", 2, 1)  # an older record
    recs = [a.record(), b.record(), c.record(), *_sweep(a, {"library": (20.0, 1e-3)}),
            *_sweep(b, {"ring": (30.0, 1e-3)}), *_sweep(c, {"tree": (25.0, 1e-3)}, op="broadcast"),
            *_sweep(a, {"library": (20.0, 1e-3)}, op="broadcast")]
    out = tmp_path / "out"
    assert collplot_main([str(write_jsonl(tmp_path / "a.jsonl", recs)), "-o", str(out), "-q"]) == 0
    both = f"inter-node link: {LINK} | {OTHER} (runs differ)"  # declared ones sorted, so the order is stable
    assert [t for t in captured["busbw_allreduce_2x1.png"] if _flat(t) == both]
    with_old = f"inter-node link: {LINK} | not declared (runs differ)"
    assert [t for t in captured["busbw_broadcast_2x1.png"] if _flat(t) == with_old]
    md = (out / "summary.md").read_text()
    assert f"- inter-node link, 2x1: {LINK} | {OTHER} | not declared (runs differ)" in md


def test_long_link_text_is_wrapped_but_complete(tmp_path: Path, captured: dict[str, list[str]]) -> None:
    long_link = "emulated: " + ", ".join(f"hop {i} veth through bridge br{i} with tbf rate {i}00mbit" for i in range(8))
    ctx = RunCtx("m", 2, 1, extra={"inter_node_link": long_link})
    path = write_jsonl(tmp_path / "a.jsonl", [ctx.record(), *_sweep(ctx, {"ring": (3.0, 1e-4)})])
    assert collplot_main([str(path), "-o", str(tmp_path / "out"), "-q"]) == 0
    (foot,) = [t for t in captured["busbw_allreduce_2x1.png"] if "inter-node link" in t]
    assert "\n" in foot and _flat(foot) == f"inter-node link: {long_link}"


def test_compare_figure_carries_the_link(tmp_path: Path, captured: dict[str, list[str]]) -> None:
    sides = []
    for side in ("before", "after"):
        ctx = RunCtx(side, 2, 2, extra={"inter_node_link": LINK})
        sides.append(write_jsonl(tmp_path / f"{side}.jsonl",
                                 [ctx.record(), *_sweep(ctx, {"library": (20.0, 1e-3), "ring": (30.0, 1e-3)})]))
    assert collcompare_main([str(sides[0]), str(sides[1]), "-o", str(tmp_path / "cmp")]) == 0
    assert [t for t in captured["compare_allreduce.png"] if _flat(t) == f"inter-node link: {LINK}"]


# --------------------------------------------------------------------------- node-aware vs flat

# Known p50 times (µs) per (op, size): α = the time, β = 0, so p50 is exactly this at every size.
TIMES_2X2 = {
    "allreduce": {1024: {"hier_ring": 10.0, "hier_leader": 12.0, "ring": 20.0, "rabenseifner": 15.0,
                         "library": 30.0, "han": 11.0, "auto": 1.0},
                  1 << 20: {"hier_ring": 800.0, "hier_leader": 500.0, "ring": 600.0, "rabenseifner": 900.0,
                            "library": 400.0, "han": 1000.0, "auto": 1.0}},
    "broadcast": {1024: {"hier": 5.0, "tree": 8.0, "naive": 9.0, "library": 6.0},
                  1 << 20: {"hier": 100.0, "tree": 300.0, "naive": 250.0, "library": 200.0}},
    "reduce": {1024: {"tree": 4.0, "library": 3.0}},  # no node-aware algorithm: no row
}


def _node_aware_dataset(tmp_path: Path) -> Path:
    multi = RunCtx("multi", 2, 2, extra={"inter_node_link": LINK})
    single = RunCtx("single", 1, 4, extra={"inter_node_link": LINK})
    recs: list[dict[str, Any]] = [multi.record(), single.record()]
    for op, by_size in TIMES_2X2.items():
        for size, times in by_size.items():
            recs += [result(multi, op, algo, size, t, spread=0.0) for algo, t in times.items()]
    recs += [result(single, "allreduce", a, 1024, t) for a, t in (("hier_ring", 3.0), ("ring", 2.0), ("library", 1.0))]
    recs.append(result(multi, "allreduce", "hier_ring", 4096, None, skip_reason="NotSupported: demo"))  # skipped: no row
    return write_jsonl(tmp_path / "na.jsonl", recs)


def test_node_aware_rows_have_the_known_times_and_ratios(tmp_path: Path) -> None:
    rows = report.node_aware_rows(load([_node_aware_dataset(tmp_path)]))
    got = {(r.op, r.layout, r.bytes): r for r in rows.itertuples(index=False)}
    assert list(got) == [("allreduce", "2x2", 1024), ("allreduce", "2x2", 1 << 20),
                         ("broadcast", "2x2", 1024), ("broadcast", "2x2", 1 << 20)]  # no 1x4, no reduce, no skip

    small = got[("allreduce", "2x2", 1024)]
    assert small.hier == (("hier_ring", 10.0), ("hier_leader", 12.0))
    assert (small.flat, small.flat_p50) == ("rabenseifner", 15.0)  # auto (1 µs) is not a flat candidate
    assert (small.library, small.lib_aware, small.lib_aware_p50) == (30.0, "han", 11.0)
    assert small.flat_ratio == pytest.approx(1.5) and small.library_ratio == pytest.approx(3.0)
    assert small.lib_aware_ratio == pytest.approx(1.1)

    large = got[("allreduce", "2x2", 1 << 20)]  # hier_leader is the best node-aware one here; hier loses
    assert large.hier == (("hier_leader", 500.0), ("hier_ring", 800.0)) and (large.flat, large.flat_p50) == ("ring", 600.0)
    assert large.flat_ratio == pytest.approx(1.2) and large.library_ratio == pytest.approx(0.8)
    assert large.lib_aware_ratio == pytest.approx(2.0)

    bcast = got[("broadcast", "2x2", 1 << 20)]
    assert bcast.hier == (("hier", 100.0),) and (bcast.flat, bcast.flat_p50) == ("naive", 250.0)
    assert bcast.flat_ratio == pytest.approx(2.5) and bcast.library_ratio == pytest.approx(2.0)
    assert math.isnan(bcast.lib_aware_p50) and math.isnan(bcast.lib_aware_ratio)  # han not measured for broadcast


def test_node_aware_table_in_both_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert collplot_main([str(_node_aware_dataset(tmp_path)), "-o", str(out), "-q"]) == 0
    t = report.node_aware_table(load([tmp_path / "na.jsonl"]))
    assert t.headers == ["op", "layout", "size", "node-aware p50 (µs)", "best flat", "flat p50 (µs)",
                         "library p50 (µs)", "han p50 (µs)", "flat ÷ hier", "library ÷ hier", "han ÷ hier"]
    assert t.rows == [
        ["allreduce", "2x2", "1K", "hier_ring 10, hier_leader 12", "rabenseifner", "15", "30", "11",
         "1.50×", "3.00×", "1.10×"],
        ["allreduce", "2x2", "1M", "hier_leader 500, hier_ring 800", "ring", "600", "400", "1,000",
         "1.20×", "0.80×", "2.00×"],
        ["broadcast", "2x2", "1K", "hier 5", "tree", "8", "6", "—", "1.60×", "1.20×", "—"],
        ["broadcast", "2x2", "1M", "hier 100", "naive", "250", "200", "—", "2.50×", "2.00×", "—"],
    ]
    assert t.note.endswith(f"inter-node link: {LINK}.")
    md = (out / "summary.md").read_text()
    page = (out / "report.html").read_text()
    assert "### Node-aware vs flat" in md and "<h3>Node-aware vs flat</h3>" in page
    rows = [" ".join(line.split()) for line in md.splitlines()]  # Markdown pads cells to the column width
    assert "| allreduce | 2x2 | 1K | hier_ring 10, hier_leader 12 | rabenseifner | 15 | 30 | 11 | 1.50× | 3.00× | 1.10× |" in rows
    assert "<td>0.80×</td>" in page


def test_node_aware_table_drops_han_and_is_skipped_without_hier(tmp_path: Path) -> None:
    ctx = RunCtx("m", 2, 2)
    recs = [ctx.record(), result(ctx, "allgather", "hier", 4096, 8.0), result(ctx, "allgather", "ring", 4096, 6.0),
            result(ctx, "allgather", "library", 4096, 4.0)]
    t = report.node_aware_table(load([write_jsonl(tmp_path / "a.jsonl", recs)]))
    assert "han p50 (µs)" not in t.headers and "han ÷ hier" not in t.headers
    assert t.rows == [["allgather", "2x2", "4K", "hier 8", "ring", "6", "4", "0.75×", "0.50×"]]
    assert "inter-node link" not in t.note  # nothing declared

    out = tmp_path / "out"
    flat_only = write_jsonl(tmp_path / "b" / "b.jsonl", [ctx.record(), *recs[2:]])
    assert collplot_main([str(flat_only), "-o", str(out), "-q"]) == 0
    assert "Node-aware vs flat" not in (out / "summary.md").read_text()
    assert "Node-aware vs flat" not in (out / "report.html").read_text()


def test_the_traits_not_the_names_decide_what_is_node_aware(tmp_path: Path) -> None:
    """A node-aware algorithm not named hier*, a hier-named one that is flat, a peer-memory one and one
    without traits: the run record's traits (the registry's) place them, the names do not."""
    ctx = RunCtx("traits", 2, 2, algorithms={
        ("allreduce", "topo_tree"): traits(node_aware=True, simplicity_rank=130),
        ("allreduce", "hier_flat"): traits(simplicity_rank=140),
        ("allreduce", "zz_peer"): traits(peer_memory=True, simplicity_rank=95),
        ("allreduce", "lib_aware"): traits(node_aware=True, library=True, simplicity_rank=10)})
    times = {"topo_tree": 10.0, "hier_flat": 12.0, "zz_peer": 1.0, "ring": 20.0, "library": 30.0, "lib_aware": 15.0,
             "mystery": 2.0}  # mystery: in no run record nor the snapshot
    recs = [ctx.record(), *(result(ctx, "allreduce", a, 1024, t, spread=0.0) for a, t in times.items())]
    warned: list[str] = []
    ds = load([write_jsonl(tmp_path / "t.jsonl", recs)], warn=warned.append)
    (row,) = report.node_aware_rows(ds).itertuples(index=False)
    assert row.hier == (("topo_tree", 10.0),)
    assert (row.flat, row.flat_p50) == ("hier_flat", 12.0)  # not zz_peer (peer memory), not mystery (no traits)
    assert (row.lib_aware, row.lib_aware_p50, row.library) == ("lib_aware", 15.0, 30.0)
    assert len(warned) == 1 and "allreduce/mystery (mpi)" in warned[0]
    t = report.node_aware_table(ds)
    assert "lib_aware p50 (µs)" in t.headers and "lib_aware ÷ hier" in t.headers
    assert t.rows[0][3:6] == ["topo_tree 10", "hier_flat", "12"]
    # The same names in a record written before run records carried traits: the registry snapshot knows
    # none of them, so nothing is node-aware and there is no table.
    old = RunCtx("traits", 2, 2, legacy=True)
    ds_old = load([write_jsonl(tmp_path / "old.jsonl", [old.record(), *recs[1:]])], warn=lambda _: None)
    assert report.node_aware_rows(ds_old).empty
