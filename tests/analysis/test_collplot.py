"""collplot end to end: every expected figure exists, is a real PNG, and the report links it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ANALYSIS, MODELS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def expected_pngs() -> set[str]:
    names: set[str] = set()
    for op, models in MODELS.items():
        for layout in ("1x4", "2x2"):
            names |= {f"busbw_{op}_{layout}.png", f"latency_{op}_{layout}.png", f"ratio_{op}_{layout}.png"}
        names |= {f"scaling_{op}_{algo}_mpi.png" for algo in models}
    for layout in ("1x4", "2x2"):
        names |= {f"p2p_{layout}.png", f"p2p_heatmap_{layout}.png"}
    return names


def test_every_expected_png_is_valid(plot_out: Path) -> None:
    import matplotlib.image as mpimg

    written = {p.name for p in plot_out.glob("*.png")}
    assert expected_pngs() <= written, f"missing: {sorted(expected_pngs() - written)}"
    for name in sorted(written):
        data = (plot_out / name).read_bytes()
        assert data[:8] == PNG_MAGIC, name
        img = mpimg.imread(plot_out / name)
        assert img.ndim == 3 and img.shape[0] > 300 and img.shape[1] > 500, (name, img.shape)


def test_report_references_every_figure(plot_out: Path) -> None:
    html = (plot_out / "report.html").read_text()
    md = (plot_out / "summary.md").read_text()
    for name in (p.name for p in plot_out.glob("*.png")):
        assert f"href='{name}'" in html, name
        assert f"({name})" in md, name
    assert html.count("data:image/png;base64,") == len(list(plot_out.glob("*.png")))
    for title in ("Best algorithm per (op, layout, size)", "Peak bus bandwidth", "Small-message latency",
                  "Point-to-point: within vs across nodes", "α–β model", "Crossovers", "Runs"):
        assert title in html and title in md, title
    assert "Open MPI v4.1.4" in html and "collbench --op all" in html  # run metadata
    assert "NotSupported: demo" in html  # skipped points are surfaced


def test_no_library_means_no_ratio_plot(tmp_path: Path) -> None:
    from cb_synth import RunCtx, alpha_beta_sweep, write_jsonl
    from collbench_analysis.cli import collplot_main

    ctx = RunCtx("r", 1, 2)
    write_jsonl(tmp_path / "a.jsonl", [ctx.record(), *alpha_beta_sweep(ctx, "allgather", {"ring": (5, 1e-3)},
                                                                      [8, 64, 512, 4096, 32768])])
    out = tmp_path / "out"
    assert collplot_main([str(tmp_path / "a.jsonl"), "-o", str(out), "-q"]) == 0
    names = {p.name for p in out.glob("*.png")}
    assert names == {"answers_allgather.png", "busbw_allgather_1x2.png", "latency_allgather_1x2.png"}


def test_model_flag_prints_tables(sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from collbench_analysis.cli import collplot_main

    src = next(sweep_dir.rglob("sweep_1x4.jsonl"))
    assert collplot_main([str(src), "-o", str(tmp_path), "--model", "--sizes", "1K,1M"]) == 0
    out = capsys.readouterr().out
    assert "α–β model" in out and "Crossovers" in out and "ring (mpi)" in out


def test_entry_script_runs_as_executable(sweep_dir: Path, tmp_path: Path) -> None:
    script = ANALYSIS / "collplot"
    assert os.access(script, os.X_OK)
    assert script.read_text().startswith("#!/usr/bin/python3")
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "--sizes" in proc.stdout


def test_mixed_dtypes_split_figures(tmp_path: Path) -> None:
    from cb_synth import RunCtx, alpha_beta_sweep, write_jsonl
    from collbench_analysis.cli import collplot_main

    ctx = RunCtx("r", 1, 2)
    recs = [ctx.record()]
    for dtype in ("float32", "float64"):
        recs += alpha_beta_sweep(ctx, "allreduce", {"ring": (5, 1e-3), "library": (4, 1e-3)}, [8, 64, 512], dtype=dtype)
    write_jsonl(tmp_path / "a.jsonl", recs)
    out = tmp_path / "out"
    assert collplot_main([str(tmp_path / "a.jsonl"), "-o", str(out), "-q"]) == 0
    names = {p.name for p in out.glob("busbw_*.png")}
    assert names == {"busbw_allreduce_1x2_float32.png", "busbw_allreduce_1x2_float64.png"}
    assert "float64" in (out / "summary.md").read_text()


@pytest.mark.parametrize("kind", ["pingpong_only", "single_point", "zero_bytes"])
def test_sparse_inputs_do_not_crash(tmp_path: Path, kind: str) -> None:
    from cb_synth import RunCtx, pingpong_sweep, result, write_jsonl
    from collbench_analysis.cli import collplot_main

    ctx = RunCtx("r", 2, 1)
    recs: list[dict] = [ctx.record()]
    if kind == "pingpong_only":
        recs += pingpong_sweep(ctx, [(0, 1)], [8, 4096])
    elif kind == "single_point":
        recs.append(result(ctx, "allreduce", "ring", 1024, 12.0))
    else:
        recs += [result(ctx, "allreduce", "ring", 0, 3.0), result(ctx, "allreduce", "ring", 8, 4.0)]
    write_jsonl(tmp_path / "a.jsonl", recs)
    out = tmp_path / "out"
    assert collplot_main([str(tmp_path / "a.jsonl"), "-o", str(out), "-q", "--model"]) == 0
    assert (out / "report.html").stat().st_size > 1000 and list(out.glob("*.png"))
