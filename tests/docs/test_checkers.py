"""The doc checks can fail: each is run on planted faults (a broken link, a missing anchor, a stale
section named in code, an undocumented or bogus option) and must name them, and on the fixed
version must pass."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mdlinks  # noqa: E402
import options_check  # noqa: E402


def test_github_slugs() -> None:
    assert mdlinks.slug("Library internals (`library:ALGO`)") == "library-internals-libraryalgo"
    assert mdlinks.slug("`workload` record (`--workload ddp`)") == "workload-record---workload-ddp"
    assert mdlinks.slug("Stragglers (`collbench_analysis/stragglers.py`)") == "stragglers-collbench_analysisstragglerspy"
    assert mdlinks.slug("Zero-copy in a node (`shm`)") == "zero-copy-in-a-node-shm"
    assert mdlinks.slug("vader's fast box: bandwidth below 128 B") == "vaders-fast-box-bandwidth-below-128-b"
    assert mdlinks.slug("A [linked](x.md) heading") == "a-linked-heading"


def _tree(tmp: Path) -> Path:
    (tmp / "docs").mkdir()
    (tmp / "docs" / "page.md").write_text("# Page: same, other\n\n## Same\n\n## Same\n\n```\n## not a heading\n```\n")
    (tmp / "src").mkdir()
    return tmp


def test_links_and_anchors(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    good = root / "good.md"
    good.write_text("[a](docs/page.md) [b](docs/page.md#same-1) [c](#top) [d](https://example.com/x.md#y)\n"
                    "# Top\n`[e](nowhere.md)` and\n```\n[f](nowhere.md)\n```\n[g](docs/)\n")
    assert mdlinks.broken_links([good], root) == []
    bad = root / "bad.md"
    bad.write_text("[a](docs/missing.md)\n[b](docs/page.md#not-a-heading)\n[c](#nope)\n![i](img.png)\n"
                   "[d](docs/page.md#same-2)\n")
    problems = mdlinks.broken_links([bad], root)
    assert len(problems) == 5, problems
    assert "bad.md:1:" in problems[0] and "no such file" in problems[0]
    assert "bad.md:2:" in problems[1] and "#not-a-heading" in problems[1]
    assert "bad.md:5:" in problems[4]


def test_pending_file_is_accepted_only_while_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path)
    src = root / "a.md"
    pending = "tests/README.md"  # the list is empty once the files it waits for have landed
    monkeypatch.setattr(mdlinks, "PENDING", {pending})
    assert mdlinks.check_target(src, pending, root) is None
    (root / pending).parent.mkdir(parents=True, exist_ok=True)
    (root / pending).write_text("# Budget\n")
    assert mdlinks.check_target(src, pending + "#budget", root) is None
    assert mdlinks.check_target(src, pending + "#nope", root) is not None


def test_doc_sections_named_in_code(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    code = root / "src" / "a.cpp"
    code.write_text('// see docs/page.md "Same"; docs/page.md (\'same\'); nccl-tests doc/PERFORMANCE.md\n'
                    'throw Error("accepted: a file (docs/page.md \\"Same\\")");\n')
    assert mdlinks.stale_code_refs([code], root) == []
    code.write_text('// see docs/page.md "Gone"\n// docs/moved.md\n'
                    'throw Error("accepted: a file (docs/page.md \\"Not here\\")");\n// docs/page.md "other"\n')
    problems = mdlinks.stale_code_refs([code], root)
    assert len(problems) == 4, problems
    assert "\"Gone\"" in problems[0] and "does not exist" in problems[1] and "Not here" in problems[2]


HELP = """collbench: measure
Usage: collbench [OPTIONS]

Options:
  -h,--help                   Print this help message and exit

Selection:
  --op OP[,OP...]|all         ops to run
  -b,--min-bytes SIZE         smallest size
  --a-very-long-option-name-that-wraps VALUE
                              its description on the next line

SIZE: bytes with an optional K suffix
  -> op -> stop; --resume is mentioned here, not defined
"""


def test_options_both_ways() -> None:
    assert options_check.help_options(HELP) == {"-h", "--help", "--op", "-b", "--min-bytes",
                                                "--a-very-long-option-name-that-wraps"}
    table = ("| option | meaning |\n|---|---|\n| `-h, --help` | help |\n| `--op OP` | ops |\n"
             "| `-b, --min-bytes SIZE` | size; `--not-in-first-column` |\n"
             "| `--a-very-long-option-name-that-wraps V` | x |\n")
    readme = "# x\n\n## Main options\n\n| option | meaning |\n|---|---|\n| `--op` \\| `-b` | x |\n\n## Next\n"
    assert options_check.mismatches(HELP, table, readme) == []
    missing = table.replace("| `--op OP` | ops |\n", "")
    assert options_check.mismatches(HELP, missing, readme) == [
        "docs/options.md: --op is in collbench --help but not in the table"]
    bogus = table + "| `--bogus N` | planted |\n"
    assert options_check.mismatches(HELP, bogus, readme) == [
        "docs/options.md:7: --bogus is not an option of collbench --help"]
    bad_readme = readme.replace("`-b`", "`--nope`")
    assert options_check.mismatches(HELP, table, bad_readme) == [
        "README.md:7: --nope (Main options) is not an option of collbench --help"]


# --------------------------------------------------------------------------- prose: a reference, not a diary

import prose_check  # noqa: E402

PLANTED = """# Page

## Results of 2026-11-28
## Run on Nov 28
### Friday 28: the Xeon VM
This stop measured the shm targets.
The work of issue 54 moved the tables; see also Issue #38 and issues 12 and 13.
Tried on the Xeon VM and not kept: streaming stores.
Stop 51's run took 1485 s, the last stop 1516 s.
The split is collbench#54, and #38 before it.
Its own tracker is no upstream: [issue 7](https://github.com/collbench/collbench/issues/7).
"""

CLEAN = """# Page

## The run in `results/gpu/2026-11-28/`
## May the ranks differ? Friday's cron job
Open MPI's coll/han breaks in-place reduce past one segment (open-mpi/ompi#11488, #11800);
MPICH crashes from 2 KiB (pmodels/mpich#6540) and torchrun's `--tee` (pytorch#92319, fixed in 2.0).
Upstream reports: [NCCL issue 1234](https://github.com/NVIDIA/nccl/issues/1234), [#567](https://github.com/x/y/pull/567).
| target | latest | date, CPU |
|---|---|---|
| 6 | 2.10 | 2026-11-28, Xeon (Emerald Rapids) |
Open MPI v4.1.4, repo rev: v4.1.4, May 26, 2022. Stop the cluster with slurm/cluster/stop.sh;
barrier → call → stop; all ranks stop at the next point; `stop:rank=1` freezes rank 1 and the
watchdogs stop 2 s later. HTML &#38; entities, `issue 54` in code and a [link](page.md#issue-54-notes)
are not prose. Results are kept, not dropped. Each rank can issue 2 sends; the root issues 4.

```
## 2026-11-28: this stop, issue 54, tried on the VM and not kept
```
"""


def _prose_tree(tmp: Path) -> Path:
    (tmp / "docs").mkdir()
    (tmp / "bench").mkdir()
    (tmp / "results" / "gpu" / "2026-11-28").mkdir(parents=True)
    return tmp


def test_prose_check_names_planted_narrative(tmp_path: Path) -> None:
    root = _prose_tree(tmp_path)
    page = root / "docs" / "page.md"
    page.write_text(PLANTED)
    problems = prose_check.breaches([page], root)
    where = [p.split(": ", 1)[0] for p in problems]
    assert where == ["docs/page.md:3", "docs/page.md:4", "docs/page.md:5", "docs/page.md:6", "docs/page.md:7",
                     "docs/page.md:8", "docs/page.md:8", "docs/page.md:9", "docs/page.md:9", "docs/page.md:10",
                     "docs/page.md:11"], problems
    assert "dated heading" in problems[0] and "'2026-11-28'" in problems[0]
    assert "'Nov 28'" in problems[1] and "'Friday 28'" in problems[2]
    assert "'This stop'" in problems[3]
    assert "(#54, #38, #12, #13)" in problems[4]
    assert "(#54, #38)" in problems[9] and "(#7)" in problems[10]


def test_prose_check_allows_upstream_references_data_and_code(tmp_path: Path) -> None:
    root = _prose_tree(tmp_path)
    page = root / "docs" / "page.md"
    page.write_text(CLEAN)
    assert prose_check.breaches([page], root) == []
    # A dated heading in a run folder's README is that run's record, not narrative.
    run = root / "results" / "gpu" / "2026-11-28" / "README.md"
    run.write_text("# GPU check, 2026-11-28\n\nThis stop's run.\n")
    assert prose_check.breaches([run], root) == []
    # Pages outside docs/ that are not READMEs are not checked at all.
    notes = root / "bench" / "notes.md"
    notes.write_text(PLANTED)
    assert prose_check.breaches([notes], root) == []


def test_prose_check_readme_length(tmp_path: Path) -> None:
    root = _prose_tree(tmp_path)
    readme, bench, page = root / "README.md", root / "bench" / "README.md", root / "docs" / "long.md"
    readme.write_text("# x\n" + "line\n" * 199)  # 200 lines
    bench.write_text("# bench\n" + "| row |\n" * 299)  # 300 lines: its stated target
    page.write_text("# Long page\n" + "text\n" * 499)  # docs pages carry the depth: no limit
    run = root / "results" / "gpu" / "2026-11-28" / "README.md"
    run.write_text("# run\n" + "x\n" * 200)  # 201 lines: the length rule holds for every README
    assert prose_check.breaches([readme, bench, page], root) == []
    problems = prose_check.breaches([run], root)
    assert len(problems) == 1 and problems[0].startswith("results/gpu/2026-11-28/README.md:201: 201 lines")
    readme.write_text(readme.read_text() + "one more\n")
    bench.write_text(bench.read_text() + "| one more |\n")
    problems = prose_check.breaches([readme, bench], root)
    assert problems == ["README.md:201: 201 lines, over this README's 200: depth goes to a docs/ page",
                        "bench/README.md:301: 301 lines, over this README's 300: depth goes to a docs/ page"]
