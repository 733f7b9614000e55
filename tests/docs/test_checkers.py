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
