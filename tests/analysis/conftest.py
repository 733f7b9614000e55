"""Shared fixtures: put analysis/ on sys.path and build small synthetic datasets."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ANALYSIS = ROOT / "analysis"
for p in (str(ANALYSIS), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from cb_synth import RunCtx, alpha_beta_sweep, pingpong_sweep, result, sizes_pow2, write_jsonl  # noqa: E402

SIZES = sizes_pow2(8, 1 << 20, 4)  # 8B … 1M, 8 sizes: enough for every plot, fast to draw
MODELS = {
    "allreduce": {"library": (20.0, 4e-4), "ring": (40.0, 3e-4), "recursive_doubling": (10.0, 8e-4)},
    "broadcast": {"library": (8.0, 2e-4), "binomial": (6.0, 5e-4)},
}


@pytest.fixture(scope="session")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two layouts (1x4, 2x2), two ops, library + custom algos, all-pairs pingpong, one skip."""
    root = tmp_path_factory.mktemp("sweep")
    for k, (nodes, rpn) in enumerate(((1, 4), (2, 2))):
        ctx = RunCtx(f"run{k}", nodes, rpn)
        scale = 1.0 if nodes == 1 else 3.0
        recs = [ctx.record()]
        for op, models in MODELS.items():
            scaled = {a: (al * scale, be * scale) for a, (al, be) in models.items()}
            recs += alpha_beta_sweep(ctx, op, scaled, SIZES, jitter=0.02, seed=k)
        recs += pingpong_sweep(ctx, [(s, d) for s in range(4) for d in range(s + 1, 4)], [8, 1024, 1 << 20])
        recs.append(result(ctx, "allreduce", "butterfly", 1024, None, skip_reason="NotSupported: demo"))
        recs.append(ctx.end(len(recs) - 1, skipped_points=1))
        write_jsonl(root / "sub" / f"sweep_{nodes}x{rpn}.jsonl", recs)
    return root


@pytest.fixture(scope="session")
def plot_out(sweep_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """collplot run once per session (figures are the slow part)."""
    from collbench_analysis.cli import collplot_main

    out = tmp_path_factory.mktemp("plots")
    assert collplot_main([str(sweep_dir), "-o", str(out), "--title", "test report", "-q"]) == 0
    return out
