"""bench/targets.py's verdict logic, without running collbench (pure Python, well under a second):
a row's median / min-max / met or not met in both directions and its note, which records count
(a skipped or wrong point, or none at all, fails the run), picking a point, the busbw ratio,
size names, and exit status 1 when a run fails. Here beside the analysis tests: the same
pytest runner, no CMake of its own."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("targets", ROOT / "bench" / "targets.py")
targets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(targets)


def rec(op="allreduce", algo="ring", nbytes=1 << 20, busbw=1.0, p50=10.0, mode="per_iter", **kw):
    r = {"type": "result", "op": op, "algo": algo, "bytes": nbytes, "busbw_GBps": busbw, "mode": mode,
         "time_us": {"p50": p50}, "skipped": False, "wrong": 0}
    r.update(kw)
    return r


@pytest.mark.parametrize(
    "values, threshold, higher, verdict",
    [
        ([1.2, 1.4, 1.3], 1.3, True, "met"),        # median on the threshold: met
        ([1.2, 1.4, 1.29], 1.3, True, "NOT met"),   # median just below (one rep above does not help)
        ([0.9, 2.0, 1.0], 1.0, True, "met"),        # an outlier does not decide it: the median does
        ([0.7, 0.6, 0.8], 0.7, False, "met"),       # lower is better: median <= threshold
        ([0.71, 0.6, 0.8], 0.7, False, "NOT met"),
    ],
)
def test_row_verdict_is_the_median_against_the_threshold(values, threshold, higher, verdict):
    t = targets.Target("x", threshold, higher_is_better=higher)
    for v in values:
        t.add(v, "cmd")
    name, ratio, thr, got, command = t.row()
    assert got == verdict
    med = sorted(values)[1]
    assert ratio == f"{med:.2f} ({min(values):.2f}-{max(values):.2f})"
    assert thr == (">= " if higher else "<= ") + f"{threshold:.2f}"
    assert (name, command) == ("x", "cmd")


def test_a_note_row_says_so_and_keeps_its_verdict():
    t = targets.Target("n", 1.0, note=True)
    t.add(0.5, "a")
    t.add(0.7, "b")  # the command is the last repetition's
    assert t.row()[3] == "NOT met (note)"
    assert t.row()[4] == "b"
    t.add(2.0, "c")
    t.add(2.0, "c")
    assert t.row()[3] == "met (note)"  # median of 0.5 0.7 2 2 = 1.35


def test_checked_results_keeps_results_only_and_refuses_skips_wrongs_and_nothing():
    recs = [{"type": "run"}, rec(), rec(algo="library"), {"type": "end"}]
    assert [r["algo"] for r in targets.checked_results(recs, "cmd")] == ["ring", "library"]
    with pytest.raises(targets.RunFailed, match="skipped point"):
        targets.checked_results([rec(), rec(skipped=True, skip_reason="why")], "cmd")
    with pytest.raises(targets.RunFailed, match="3 wrong elements"):
        targets.checked_results([rec(wrong=3)], "cmd")
    with pytest.raises(targets.RunFailed, match="no result records"):
        targets.checked_results([{"type": "run"}, {"type": "end"}], "cmd")


def test_pick_and_busbw_ratio():
    recs = [rec(busbw=3.0), rec(algo="library", busbw=2.0), rec(algo="library", busbw=9.0, mode="batch"),
            rec(nbytes=8, busbw=1.0)]
    assert targets.busbw_ratio(recs, "allreduce", "ring", 1 << 20) == pytest.approx(1.5)
    assert targets.pick(recs, "allreduce", "library", 1 << 20, mode="batch")["busbw_GBps"] == 9.0
    with pytest.raises(targets.RunFailed, match="no result for allreduce/ring at 4 B"):
        targets.pick(recs, "allreduce", "ring", 4)


def test_size_names():
    assert [targets.size_name(b) for b in (8, 1024, 1536, 1 << 20, 16 << 20, (1 << 20) + 1024)] == \
        ["8 B", "1 KiB", "1536 B", "1 MiB", "16 MiB", "1025 KiB"]


def test_a_failed_run_exits_1(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "collbench"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)

    def failing_run(*a, **k):
        raise targets.RunFailed("exit 3: mpirun ...")

    monkeypatch.setattr(targets, "run", failing_run)
    monkeypatch.setattr(sys, "argv", ["targets.py", "--build", str(tmp_path), "--reps", "1", "--keep", str(tmp_path / "k")])
    assert targets.main() == 1
    assert "run failed: exit 3" in capsys.readouterr().err
