"""The docs' option tables against `collbench --help-all` (every option), both ways.

Every option `--help-all` lists is in docs/options.md; every option named in the first column of
docs/options.md's tables or of the README's "Main options" table is one `--help` lists.

    /usr/bin/python3 tests/docs/options_check.py build/collbench     # exit 1 naming each mismatch
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPTIONS_MD = ROOT / "docs" / "options.md"
README = ROOT / "README.md"
README_SECTION = "## Main options"

_NAME = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*|-[A-Za-z])(?![\w-])")
# An option line of CLI11's help: two spaces, then the option's names ("-b,--min-bytes SIZE").
_HELP_LINE = re.compile(r"^  (-[A-Za-z]|--[A-Za-z][\w-]*)(?:,\s*(?:-[A-Za-z]|--[A-Za-z][\w-]*))*(?=[\s=]|$)")


def help_options(text: str) -> set[str]:
    """Every option name (short and long) that `--help` lists."""
    names: set[str] = set()
    for line in text.splitlines():
        m = _HELP_LINE.match(line)
        if m:
            names.update(_NAME.findall(m.group(0)))
    return names


def table_options(markdown: str, section: str | None = None) -> dict[str, int]:
    """Option names in the first column of the markdown tables (of one `## section` if given),
    with the line each is on. The header row and the |---| rule are skipped."""
    lines = markdown.splitlines()
    if section is not None:
        start = next(i for i, l in enumerate(lines) if l.strip() == section)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines = lines[:end]
        first = start
    else:
        first = 0
    found: dict[str, int] = {}
    in_table = False
    for n in range(first, len(lines)):
        line = lines[n]
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if not in_table:  # the header row
            in_table = True
            continue
        if cells and set(cells[0]) <= set("-: "):
            continue
        for name in _NAME.findall(cells[0].replace("\\|", "|")):
            found.setdefault(name, n + 1)
    return found


def mismatches(help_text: str, options_md: str, readme: str) -> list[str]:
    helped = help_options(help_text)
    documented = table_options(options_md)
    main = table_options(readme, README_SECTION)
    out = []
    if not helped:
        out.append("collbench --help lists no options (is this collbench?)")
    for name in sorted(helped - documented.keys()):
        out.append(f"docs/options.md: {name} is in collbench --help but not in the table")
    for name, line in sorted(documented.items()):
        if name not in helped:
            out.append(f"docs/options.md:{line}: {name} is not an option of collbench --help")
    for name, line in sorted(main.items()):
        if name not in helped:
            out.append(f"README.md:{line}: {name} (Main options) is not an option of collbench --help")
    if not main:
        out.append(f"README.md: no option table under '{README_SECTION}'")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: options_check.py PATH/TO/collbench", file=sys.stderr)
        return 2
    proc = subprocess.run([argv[1], "--help-all"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        print(f"{argv[1]} --help: exit {proc.returncode}\n{proc.stderr}", file=sys.stderr)
        return 1
    problems = mismatches(proc.stdout, OPTIONS_MD.read_text(encoding="utf-8"), README.read_text(encoding="utf-8"))
    for p in problems:
        print(p)
    print(f"options_check: {len(help_options(proc.stdout))} options in --help, {len(problems)} problem(s)",
          file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
