"""report.html as a reader sees it: collplot's report opened in headless Chromium.

collplot runs on part of the example run (results/example: layouts 1x4 and 2x2, allreduce and
pingpong — every kind of section, a few seconds of figures); report_browser.py must find no
broken image, link or anchor and no console error, warning or JS error, and write a full-page
screenshot next to the report. A copy with planted faults must be rejected, each fault named.
With COLLBENCH_REPORT_OUT set (ctest sets it under the build tree) the report and its
screenshot stay there to be looked at.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from report_browser import Browser, main as report_browser_main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLE = ROOT / "results" / "example" / "results.jsonl"
LAYOUTS = {(1, 4), (2, 2)}  # one node and two: the within- vs across-node sections appear
OPS = {"allreduce", "pingpong"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from collbench_analysis.cli import collplot_main

    base = Path(os.environ["COLLBENCH_REPORT_OUT"]) if os.environ.get("COLLBENCH_REPORT_OUT") else tmp_path_factory.mktemp("report")
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    runs, kept = set(), []
    lines = EXAMPLE.read_text().splitlines()
    for line in lines:
        r = json.loads(line)
        if r["type"] == "run" and (r["nodes"], r["ranks_per_node"]) in LAYOUTS:
            runs.add(r["run_id"])
    for line in lines:
        r = json.loads(line)
        if r["run_id"] in runs and (r["type"] != "result" or r["op"] in OPS):
            kept.append(line)
    assert len(runs) == 2 and sum('"type":"result"' in x for x in kept) > 100, (runs, len(kept))
    (base / "results.jsonl").write_text("\n".join(kept) + "\n")
    plots = base / "plots"
    assert collplot_main([str(base / "results.jsonl"), "-o", str(plots), "-q"]) == 0
    assert (plots / "report.html").is_file()
    return plots / "report.html"


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def figures(folder: Path) -> list[Path]:
    return [p for p in folder.glob("*.png") if p.name != "report.png"]


def check_png(path: Path, min_width: int) -> tuple[int, int]:
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == PNG_MAGIC, path
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[1] >= min_width and img.shape[0] > 2000, img.shape  # the whole page
    assert img[..., :3].std() > 0.05, "screenshot is blank"  # figures and tables, not a white page
    return img.shape[1], img.shape[0]


def test_report_opens_clean_and_is_screenshotted(browser: Browser, report: Path) -> None:
    shot = report.with_name("report.png")
    out = browser.check(report, shot)
    assert out.ok, "\n".join(out.problems)
    figs = figures(report.parent)
    assert len(figs) >= 8, [p.name for p in figs]
    assert out.images >= len(figs), (out.images, len(figs))  # every figure is shown and loaded
    assert out.local_links >= len(figs) and out.anchors >= 1, out.summary()
    assert check_png(shot, 1280) == out.shot_size
    print(out.summary())


PLANTED = {
    "<img src='planted_missing.png' alt='planted missing'>": "broken image: src planted_missing.png",
    "<img src='data:image/png;base64,iVBORw0KGgoAAAAplanted' alt='planted corrupt'>": 'alt "planted corrupt"',
    "<a href='planted_dead.html'>dead</a>": "planted_dead.html does not exist",
    "<a href='#planted-nowhere'>nowhere</a>": "no element with id 'planted-nowhere'",
    "<script>console.error('planted console error')</script>": '"planted console error"',
    "<script>console.warn('planted console warning')</script>": '"planted console warning"',
    "<script>undefinedPlantedFunction()</script>": "JS error: Uncaught ReferenceError: undefinedPlantedFunction",
    "<script>Promise.reject(new Error('planted rejection'))</script>": "planted rejection",
}


def test_planted_faults_are_each_rejected(browser: Browser, report: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(report.parent, bad)
    html = (bad / "report.html").read_text()
    assert "</body>" in html
    (bad / "report.html").write_text(html.replace("</body>", "\n".join(PLANTED) + "\n</body>"))
    out = browser.check(bad / "report.html", bad / "report.png")
    assert not out.ok
    text = "\n".join(out.problems)
    missed = [fault for fault, line in PLANTED.items() if line not in text]
    assert not missed, f"not reported: {missed}\n{text}"
    # Only the planted faults: every problem line names one of them.
    assert all("planted" in p for p in out.problems), text


def test_command_line(report: Path, tmp_path: Path) -> None:
    # What the README's screenshot command runs: exit 0, the PNG next to the report.
    copy = tmp_path / "cli"
    shutil.copytree(report.parent, copy, ignore=shutil.ignore_patterns("report.png"))
    p = subprocess.run([sys.executable, str(HERE / "report_browser.py"), str(copy / "report.html"), "--scale", "0.5"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert " OK in headless Chromium" in p.stdout and p.stderr == "", p.stdout + p.stderr
    check_png(copy / "report.png", 640)


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report_browser_main([str(tmp_path / "none.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such report" in err[0], err
    assert report_browser_main([str(tmp_path / "none.html"), "--scale", "0"]) == 2
