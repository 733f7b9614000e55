"""collcompare: noise-aware verdicts on constructed before/after data, outputs and exit codes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cb_synth import RunCtx, result, write_jsonl
from collbench_analysis.cli import collcompare_main
from collbench_analysis.compare import Verdict, compare
from collbench_analysis.load import load
from conftest import ANALYSIS

CTX = RunCtx("r", 2, 2)


def rec(algo: str, nbytes: int, p50: float | None, spread: float = 0.02, **kw: object) -> dict:
    return result(CTX, "allreduce", algo, nbytes, p50, spread=spread, **kw)


def write_pair(tmp_path: Path, before: list[dict], after: list[dict]) -> tuple[Path, Path]:
    return (write_jsonl(tmp_path / "before.jsonl", [CTX.record(), *before]),
            write_jsonl(tmp_path / "after.jsonl", [CTX.record(), *after]))


BEFORE = [
    rec("ring", 1024, 100.0),                 # → 130: +30 %, tight spread       → regressed
    rec("ring", 4096, 100.0),                 # → 70: −30 %                      → improved
    rec("ring", 16384, 100.0),                # → 105: +5 % < threshold          → same
    rec("ring", 65536, 100.0, spread=0.5),    # → 125: +25 % but ±50 % noise     → same (within noise)
    rec("naive", 1024, 50.0),                 # only before                      → removed
    rec("tree", 1024, 40.0),                  # skipped after                    → skipped
]
AFTER = [
    rec("ring", 1024, 130.0),
    rec("ring", 4096, 70.0),
    rec("ring", 16384, 105.0),
    rec("ring", 65536, 125.0, spread=0.5),
    rec("butterfly", 1024, 30.0),             # only after                       → added
    rec("tree", 1024, None, skip_reason="NotSupported: odd"),
]


def verdicts(tmp_path: Path, before: list[dict], after: list[dict], threshold: float = 0.10) -> dict[tuple[str, int], Verdict]:
    b, a = write_pair(tmp_path, before, after)
    diffs = compare(load([b]).points, load([a]).points, threshold)
    return {(d.point.algo, d.point.bytes): d.verdict for d in diffs}


def test_verdicts(tmp_path: Path) -> None:
    assert verdicts(tmp_path, BEFORE, AFTER) == {
        ("ring", 1024): Verdict.REGRESSED,
        ("ring", 4096): Verdict.IMPROVED,
        ("ring", 16384): Verdict.SAME,
        ("ring", 65536): Verdict.SAME,
        ("naive", 1024): Verdict.REMOVED,
        ("butterfly", 1024): Verdict.ADDED,
        ("tree", 1024): Verdict.SKIPPED,
    }


def test_threshold_option_changes_verdict(tmp_path: Path) -> None:
    assert verdicts(tmp_path, BEFORE, AFTER, threshold=0.5)[("ring", 1024)] is Verdict.SAME
    assert verdicts(tmp_path, BEFORE, AFTER, threshold=0.04)[("ring", 16384)] is Verdict.REGRESSED


def test_wrong_results_count_as_regression(tmp_path: Path) -> None:
    v = verdicts(tmp_path, [rec("ring", 8, 10.0)], [rec("ring", 8, 10.0, wrong=3)])
    assert v[("ring", 8)] is Verdict.REGRESSED


def test_match_key_separates_dtype_and_pairs(tmp_path: Path) -> None:
    before = [rec("ring", 64, 10.0, dtype="float32"), rec("ring", 64, 10.0, dtype="float64")]
    after = [rec("ring", 64, 10.0, dtype="float32"), rec("ring", 64, 20.0, dtype="float64")]
    b, a = write_pair(tmp_path, before, after)
    diffs = compare(load([b]).points, load([a]).points)
    assert {d.point.dtype: d.verdict for d in diffs} == {"float32": Verdict.SAME, "float64": Verdict.REGRESSED}
    pp = [result(CTX, "pingpong", "latency", 8, 1.0, src=0, dst=s, link="inter", redop=None) for s in (1, 2)]
    pp_after = [dict(pp[0]), result(CTX, "pingpong", "latency", 8, 2.0, src=0, dst=2, link="inter", redop=None)]
    b, a = write_pair(tmp_path, pp, pp_after)
    diffs = compare(load([b]).points, load([a]).points)
    assert {d.point.dst: d.verdict for d in diffs} == {1: Verdict.SAME, 2: Verdict.REGRESSED}


def test_cli_exit_1_on_regression_and_writes_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b, a = write_pair(tmp_path, BEFORE, AFTER)
    out = tmp_path / "cmp"
    assert collcompare_main([str(b), str(a), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    header = next(l for l in lines if l.startswith("point"))
    assert "verdict" in header and "change" in header
    row = next(l for l in lines if "ring" in l and "regressed" in l)
    assert "+30.0%" in row
    assert "REGRESSION" in captured.err
    md = (out / "compare.md").read_text()
    assert "## Regressions" in md and "| regressed |" in md and "compare_allreduce.png" in md
    assert (out / "compare_allreduce.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_exit_0_without_regression(tmp_path: Path) -> None:
    b, a = write_pair(tmp_path, BEFORE[1:], AFTER[1:])
    assert collcompare_main([str(b), str(a)]) == 0
    assert collcompare_main([str(b), str(b)]) == 0


def test_cli_subprocess_exit_codes(tmp_path: Path) -> None:
    b, a = write_pair(tmp_path, BEFORE, AFTER)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"run","schema":"collbench/0","run_id":"x"}\n')
    script = str(ANALYSIS / "collcompare")
    codes = [subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=120)
             for args in ([str(b), str(a)], [str(a), str(a)], [str(b), str(bad)])]
    assert [c.returncode for c in codes] == [1, 0, 2]
    assert "unsupported schema 'collbench/0'" in codes[2].stderr and "Traceback" not in codes[2].stderr
