"""Markdown link and anchor checking for collbench's docs (no third-party packages).

What a reader clicks on GitHub must land somewhere: every relative link of every markdown file
in the repository resolves to a file or folder, and every `#anchor` to a heading of its target,
slugged as GitHub slugs headings. Used by test_links.py; run directly for a report:

    /usr/bin/python3 tests/docs/mdlinks.py            # exit 1 and one line per broken link
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]

# Files another change is still writing: a link to one is accepted while it does not exist (it is
# checked like any other link once it does). Keep this list short and empty it when they land.
PENDING: set[str] = set()

_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(\S+)")
_HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*?(?:href|src)\s*=\s*\"([^\"]*)\"", re.I)
_HTML_ID = re.compile(r"<a\s[^>]*?(?:name|id)\s*=\s*\"([^\"]*)\"", re.I)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def markdown_files(root: Path = ROOT) -> list[Path]:
    """Every markdown file git knows or would add (tracked + untracked, not ignored)."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "*.md"],
                             cwd=root, capture_output=True, check=True).stdout.decode()
        files = sorted({root / p for p in out.split("\0") if p})
        return [f for f in files if f.is_file()]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (a tarball): walk it
        skip = {".git", "build", "node_modules"}
        found = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in skip and not x.startswith("build")]
            found += [Path(d) / n for n in names if n.endswith(".md")]
        return sorted(found)


def _lines_outside_code(text: str):
    """(line number, line) for lines outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
                continue
            if mark.startswith(fence):
                fence = None
                continue
        if fence is None:
            yield n, line


def heading_text(raw: str) -> str:
    """A heading's rendered text: code spans keep their content, links their text, emphasis goes."""
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    s = re.sub(r"<[^>]+>", "", s)
    return s


def slug(raw_heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters, marks, numbers,
    connector punctuation such as `_`, spaces and `-` kept), spaces to hyphens."""
    text = heading_text(raw_heading).strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in " -" or cat[0] in "LMN" or cat == "Pc":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(path: Path, _cache: dict = {}) -> set[str]:
    """Every anchor a markdown file offers: heading slugs (duplicates numbered -1, -2 …) and
    explicit <a name|id="…">."""
    if path not in _cache:
        seen: dict[str, int] = {}
        out: set[str] = set()
        for _, line in _lines_outside_code(path.read_text(encoding="utf-8")):
            m = _HEADING.match(line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                seen[base] = k + 1
                out.add(base if k == 0 else f"{base}-{k}")
            out.update(_HTML_ID.findall(line))
        _cache[path] = out
    return _cache[path]


def links(path: Path):
    """(line, target) of every link in a markdown file, outside code blocks and code spans."""
    for n, line in _lines_outside_code(path.read_text(encoding="utf-8")):
        bare = _CODE_SPAN.sub("", line)
        for m in _INLINE_LINK.finditer(bare):
            yield n, m.group(1).strip("<>")
        m = _REF_DEF.match(bare)
        if m:
            yield n, m.group(1).strip("<>")
        for m in _HTML_LINK.finditer(bare):
            yield n, m.group(1)


def check_target(src: Path, target: str, root: Path = ROOT) -> str | None:
    """None when the link from src resolves, else why not."""
    root = root.resolve()
    if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
        return None  # empty (a placeholder) or an absolute URL: not ours to check offline
    path_part, _, anchor = target.partition("#")
    path_part, anchor = unquote(path_part), unquote(anchor)
    if path_part.startswith("/"):
        dest = (root / path_part.lstrip("/")).resolve()
    else:
        dest = (src.parent / path_part).resolve() if path_part else src.resolve()
    try:
        rel = dest.relative_to(root).as_posix()
    except ValueError:
        return f"{target}: points outside the repository"
    if not dest.exists():
        if rel in PENDING:
            return None
        return f"{target}: no such file ({rel})"
    if anchor and dest.suffix == ".md":
        if anchor not in anchors(dest):
            return f"{target}: no heading with anchor #{anchor} in {rel}"
    return None


def broken_links(files=None, root: Path = ROOT) -> list[str]:
    root = root.resolve()
    problems = []
    for f in files if files is not None else markdown_files(root):
        f = f.resolve()
        for n, target in links(f):
            why = check_target(f, target, root)
            if why:
                problems.append(f"{f.relative_to(root)}:{n}: {why}")
    return problems


# --------------------------------------------------------------------------- docs named in code

# A repository path to a markdown page, as code and --help text write it: `results/README.md`,
# `bench/README` (the .md left out), optionally followed by a quoted section name:
# results/README.md "Efficiency", analysis/README.md 'Tuning', docs/measurement.md ("Verification").
_CODE_REF = re.compile(
    r"(?<![\w./-])((?:[\w.-]+/)+(?:[\w.-]+\.md|README)|README\.md)(?![\w/-])"
    r"(?:\s*,?\s*\(?\\?[\"']([A-Za-z`-][^\"'\\\n]{1,79})\\?[\"'])?")
SOURCE_DIRS = ("harness", "analysis", "scripts", "bench", "slurm", "collectives", "cmake", "results/schema", "tests",
               ".ci")
SOURCE_EXT = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".py", ".sh", ".txt", ".cmake", ".in", ".json", ".yaml", ".toml",
              ""}


def source_files(root: Path = ROOT) -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--",
                              *SOURCE_DIRS], cwd=root, capture_output=True, check=True).stdout.decode()
        files = [root / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk the folders
        files = [p for d in SOURCE_DIRS if (root / d).is_dir() for p in (root / d).rglob("*")]
    own = root / "tests" / "docs"  # this checker's own examples
    return sorted(f for f in files if f.is_file() and f.suffix in SOURCE_EXT and "fixtures" not in f.parts
                  and "corpus" not in f.parts and own not in f.parents)


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[`*_]", "", heading_text(s))).strip().lower()


def headings(path: Path) -> list[str]:
    return [_norm(m.group(2)) for _, line in _lines_outside_code(path.read_text(encoding="utf-8"))
            if (m := _HEADING.match(line))]


def stale_code_refs(files=None, root: Path = ROOT) -> list[str]:
    """Doc pages named in sources (comments, messages, --help) that do not exist, or whose quoted
    section is no heading of that page (a section matches a heading it begins, in any case)."""
    root = root.resolve()
    top = {p.name for p in root.iterdir()}
    problems = []
    for f in files if files is not None else source_files(root):
        f = f.resolve()
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for m in _CODE_REF.finditer(line):
                ref, section = m.group(1), m.group(2)
                first = ref.split("/")[0]
                if "/" in ref and first not in top:
                    continue  # someone else's path (nccl-tests doc/PERFORMANCE.md, a results folder's README.md)
                if "/" not in ref:
                    continue  # a bare README.md: a generated folder's own, not a page of this repository
                page = root / (ref if ref.endswith(".md") else ref + ".md")
                where = f"{f.relative_to(root)}:{n}"
                if not page.is_file():
                    if page.relative_to(root).as_posix() not in PENDING:
                        problems.append(f"{where}: names {ref}, which does not exist")
                    continue
                if section and not section.strip().startswith(("-", "$", "%")):
                    want = _norm(section)
                    if not any(h.startswith(want) for h in headings(page)):
                        problems.append(f"{where}: names section \"{section}\" of {ref}, which has no such heading")
    return problems


def main() -> int:
    problems = broken_links() + stale_code_refs()
    for p in problems:
        print(p)
    print(f"mdlinks: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
