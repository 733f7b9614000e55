"""Prose checks for collbench's docs: a reference, not a diary (no third-party packages).

A page states what is true now, once, in the present tense; when something was measured or
changed is git's to keep. The checks, on the text outside fenced code blocks and code spans:

- **No dated heading** in any checked page: a markdown heading holding a date (2026-11-28,
  2026/11/28, "Nov 28", "28 November", "Friday 28", "Fri, Nov 28"). A dated folder name in a
  code span (`results/gpu/2026-11-28/`) is data, not a date of the heading's.
- **No narrative of the project's own work**: "this stop", "last stop", "previous stop",
  "next stop", "stop N"; "tried on"; "not kept"; "issue N", "issue #N", "issues N and M", a bare
  "#N" and "collbench#N" (case-insensitive). Upstream references are allowed: `owner/repo#N`
  and `project#N` (open-mpi/ompi#11488, pmodels/mpich#6540, pytorch#92319, with a chain such as
  "open-mpi/ompi#11488, #11800"), "issue N" or "#N" where a link on the same line points at that
  number in another project (`https://…/issues/N`, `…/pull/N`, `…/discussions/N`), and "issue" as
  a verb ("each rank can issue 2 sends": the word before it is a subject or a modal).
  Checked pages: docs/**/*.md and every README.md but the run folders' under results/
  (results/<run>/README.md describes one measured run: its date is data).
- **README length**: every README.md in the repository is at most 200 lines (depth goes to
  docs/); bench/README.md, one row per benchmark target, at most 300.

Used by test_checkers.py; run directly for a report:

    /usr/bin/python3 tests/docs/prose_check.py        # exit 1 and one line per breach
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mdlinks import ROOT, _CODE_SPAN, _HEADING, _lines_outside_code, markdown_files  # noqa: E402

README_MAX_LINES = 200
LONGER_READMES = {"bench/README.md": 300}  # the stated target of a page that is one row per target

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_WEEKDAY = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?"
_DATE = re.compile(
    r"\b\d{4}[-/]\d{1,2}[-/]\d{1,2}\b"                                    # 2026-11-28, 2026/11/28
    rf"|\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b"                       # Nov 28, November 28th
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\b"                          # 28 Nov
    rf"|\b{_WEEKDAY}\b,?\s+(?:\d{{1,2}}\b|{_MONTH}\b|\d{{4}}-)",           # Friday 28, Fri, Nov 28
    re.I)

_NARRATIVE = [
    (re.compile(r"\b(?:this|last|previous|next)\s+stop\b", re.I), "a stop of the project's work"),
    (re.compile(r"\bstops?\s+#?\d+\b(?!\s*(?:s|ms|µs|us|ns|seconds?|minutes?|%|x|×))", re.I),
     "a stop of the project's work"),
    (re.compile(r"\btried\s+on\b", re.I), "\"tried on\": what was tried is git's"),
    (re.compile(r"\bnot\s+kept\b", re.I), "\"not kept\": what was dropped is git's"),
]
_ISSUE = re.compile(r"\b(?:(\w+)\s+)?(issues?)[\s-]*#?\d+(?:\s*(?:,|and|or|&)\s*#?\d+)*", re.I)
# "issue" as a verb ("each rank can issue 2 sends"): the word before it says so.
_VERB_BEFORE = {"can", "could", "may", "might", "must", "should", "will", "would", "to",
                "rank", "ranks", "it", "they", "we", "each", "both", "root", "peer", "peers", "caller", "thread"}
# An upstream reference: owner/repo#N or project#N, and the #N chained after it ("…#1, #2").
_UPSTREAM = re.compile(r"(?<![\w.-])([\w.-]+(?:/[\w.-]+)?)#\d+(?:\s*(?:,|and|or|&)\s*#\d+)*", re.I)
_BARE_NUMBER = re.compile(r"(?<![\w/&#\]])#(\d+)\b")
# A link to another project's issue, pull request or discussion: its number may be named beside it.
_LINKED_NUMBER = re.compile(r"https?://[^)\s]*?/([\w.-]+)/(?:issues|pull|discussions)/(\d+)\b")
_LINK_URL = re.compile(r"\]\([^)]*\)")


def _own(project: str) -> bool:
    return project.lower().rstrip("/").split("/")[-1] == "collbench"


def _own_issue_numbers(line: str) -> list[str]:
    """The collbench issue numbers a line's prose names (upstream references left out)."""
    linked = {n for repo, n in _LINKED_NUMBER.findall(line) if not _own(repo)}
    text = _LINK_URL.sub("]()", line)  # link targets are checked by mdlinks, not read as prose
    found = []
    for m in _UPSTREAM.finditer(text):
        if _own(m.group(1)):
            found += re.findall(r"#(\d+)", m.group(0))
    text = _UPSTREAM.sub(lambda m: m.group(0) if _own(m.group(1)) else " ", text)
    for m in _ISSUE.finditer(text):
        if (m.group(1) or "").lower() not in _VERB_BEFORE:
            found += re.findall(r"\d+", m.group(0)[m.start(2) - m.start():])
    found += _BARE_NUMBER.findall(_ISSUE.sub(" ", text))
    return [n for n in dict.fromkeys(found) if n not in linked]


def narrative_breaches(text: str) -> list[tuple[int, str]]:
    """(line, why) for every dated heading and every narrative phrase, outside code."""
    out = []
    for n, line in _lines_outside_code(text):
        prose = _CODE_SPAN.sub("``", line)
        m = _HEADING.match(prose)
        if m:
            heading = _LINK_URL.sub("]()", m.group(2))
            d = _DATE.search(heading)
            if d:
                out.append((n, f"dated heading ({d.group(0)!r}): a heading names a subject, git keeps the date"))
        for pattern, why in _NARRATIVE:
            p = pattern.search(prose)
            if p:
                out.append((n, f"{why} ({p.group(0)!r})"))
        numbers = _own_issue_numbers(prose)
        if numbers:
            out.append((n, f"collbench issue number in prose (#{', #'.join(numbers)}): state the fact, "
                           "the issue is in git's history"))
    return out


def length_breach(rel: str, text: str) -> tuple[int, str] | None:
    limit = LONGER_READMES.get(rel, README_MAX_LINES)
    lines = len(text.splitlines())
    if lines > limit:
        return limit + 1, f"{lines} lines, over this README's {limit}: depth goes to a docs/ page"
    return None


def is_readme(rel: str) -> bool:
    return rel.split("/")[-1] == "README.md"


def narrative_checked(rel: str) -> bool:
    """docs/ pages and READMEs; not a results/<run>/ folder's README (a record of that run)."""
    parts = rel.split("/")
    if parts[0] == "docs":
        return True
    if is_readme(rel):
        return not (parts[0] == "results" and len(parts) > 2)
    return False


def breaches(files=None, root: Path = ROOT) -> list[str]:
    root = root.resolve()
    problems = []
    for f in files if files is not None else markdown_files(root):
        f = f.resolve()
        rel = f.relative_to(root).as_posix()
        if not (is_readme(rel) or narrative_checked(rel)):
            continue
        text = f.read_text(encoding="utf-8")
        found = []
        if is_readme(rel):
            b = length_breach(rel, text)
            if b:
                found.append(b)
        if narrative_checked(rel):
            found += narrative_breaches(text)
        problems += [f"{rel}:{n}: {why}" for n, why in sorted(found)]
    return problems


def main() -> int:
    files = markdown_files()
    problems = breaches(files)
    for p in problems:
        print(p)
    checked = sum(1 for f in files if is_readme(f.relative_to(ROOT).as_posix())
                  or narrative_checked(f.relative_to(ROOT).as_posix()))
    print(f"prose_check: {len(problems)} breach(es) in {checked} page(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
