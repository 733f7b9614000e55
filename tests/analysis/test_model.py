"""α–β fits recover known parameters; crossovers appear where they were constructed."""
from __future__ import annotations

import pytest

import pandas as pd

from cb_synth import RunCtx, alpha_beta_sweep, sizes_pow2
from collbench_analysis.load import _result_row, results_frame, runs_frame
from collbench_analysis.model import fit_alpha_beta, fit_models, measured_crossovers, predicted_crossovers


def points(records: list[dict]) -> pd.DataFrame:
    """The results frame of ``records`` (validated, as load() builds it; no run records)."""
    return results_frame([_result_row(r, f"mem:{i}") for i, r in enumerate(records, 1)], runs_frame([]))


def pairs(crossovers: pd.DataFrame) -> list[tuple[str, str]]:
    return list(zip(crossovers["before"], crossovers["after"]))


@pytest.mark.parametrize("alpha,beta", [(5.0, 1e-3), (50.0, 1e-4), (0.3, 1 / 8e3), (120.0, 2.5e-5)])
def test_fit_recovers_alpha_beta(alpha: float, beta: float) -> None:
    sizes = sizes_pow2(8, 64 << 20)
    fit = fit_alpha_beta(sizes, [alpha + n * beta for n in sizes])
    assert fit is not None
    assert fit.alpha_us == pytest.approx(alpha, rel=0.01)
    assert fit.beta_us_per_byte == pytest.approx(beta, rel=0.01)
    assert fit.gbps == pytest.approx(1e-3 / beta, rel=0.01)
    assert fit.r2 > 0.999 and not fit.through_origin


def test_fit_with_noise_stays_close() -> None:
    ctx = RunCtx("r", 2, 2)
    pts = points(alpha_beta_sweep(ctx, "allreduce", {"ring": (30.0, 2e-4)}, sizes_pow2(8, 16 << 20), jitter=0.02))
    models = fit_models(pts)
    assert len(models) == 1
    row = models.iloc[0]
    assert row.alpha_us == pytest.approx(30.0, rel=0.05)
    assert row.beta_us_per_byte == pytest.approx(2e-4, rel=0.05)
    assert row.gbps == pytest.approx(1e-3 / row.beta_us_per_byte)
    assert row.layout == "2x2" and row.algo == "ring" and row.series == "ring (mpi)" and row.n_points == 22


def test_negative_alpha_refits_through_origin() -> None:
    sizes = [1000, 2000, 4000, 8000]
    fit = fit_alpha_beta(sizes, [n * 1e-3 - 0.5 for n in sizes])  # free fit gives α = −0.5
    assert fit is not None and fit.through_origin
    assert fit.alpha_us == 0.0 and fit.beta_us_per_byte > 0


def test_too_few_sizes_gives_no_fit() -> None:
    assert fit_alpha_beta([64, 64], [1.0, 1.1]) is None


def test_crossover_found_where_constructed() -> None:
    # A: α=5, β=1e-3; B: α=50, β=1e-4 → equal at n* = 45 / 9e-4 = 50 000 bytes (between 32K and 64K)
    ctx = RunCtx("r", 1, 4)
    pts = points(alpha_beta_sweep(ctx, "allreduce", {"lowlat": (5.0, 1e-3), "highbw": (50.0, 1e-4)},
                                  sizes_pow2(8, 16 << 20)))
    measured = measured_crossovers(pts)
    assert pairs(measured) == [("lowlat (mpi)", "highbw (mpi)")]
    m = measured.iloc[0]
    assert (m.lo_bytes, m.hi_bytes) == (32768, 65536) and m.at_bytes == pytest.approx((32768 * 65536) ** 0.5)
    predicted = predicted_crossovers(fit_models(pts))
    assert pairs(predicted) == [("lowlat (mpi)", "highbw (mpi)")]
    assert predicted.iloc[0].at_bytes == pytest.approx(50_000, rel=0.01)


def test_three_way_crossovers_and_dominated_algo() -> None:
    # small: α=2, β=4e-3 ; mid: α=20, β=1e-3 (wins 6K..180K) ; big: α=200, β=0 … use β tiny
    models = {"small": (2.0, 4e-3), "mid": (20.0, 1e-3), "big": (200.0, 1e-5), "never": (300.0, 5e-3)}
    ctx = RunCtx("r", 2, 4)
    pts = points(alpha_beta_sweep(ctx, "broadcast", models, sizes_pow2(8, 64 << 20)))
    predicted = predicted_crossovers(fit_models(pts))
    assert pairs(predicted) == [("small (mpi)", "mid (mpi)"), ("mid (mpi)", "big (mpi)")]
    assert predicted.iloc[0].at_bytes == pytest.approx(18 / 3e-3, rel=0.01)
    assert predicted.iloc[1].at_bytes == pytest.approx(180 / 9.9e-4, rel=0.01)
    measured = measured_crossovers(pts)
    assert pairs(measured) == [("small (mpi)", "mid (mpi)"), ("mid (mpi)", "big (mpi)")]
    assert measured.iloc[0].lo_bytes < 6000 < measured.iloc[0].hi_bytes


def test_tied_algorithms_do_not_flip_flop() -> None:
    ctx = RunCtx("r", 1, 4)
    recs = (alpha_beta_sweep(ctx, "allreduce", {"a": (10.0, 1e-3)}, sizes_pow2(8, 1 << 20), jitter=0.02, seed=1)
            + alpha_beta_sweep(ctx, "allreduce", {"b": (10.0, 1e-3)}, sizes_pow2(8, 1 << 20), jitter=0.02, seed=2))
    assert measured_crossovers(points(recs)).empty
