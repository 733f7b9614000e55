"""A tiny table type rendered three ways: aligned text (terminal), Markdown, HTML.

Building rows once and rendering them per medium keeps the terminal output,
``summary.md``/``compare.md`` and ``report.html`` saying exactly the same thing.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Sequence


def fmt_num(value: float | None, digits: int = 3) -> str:
    """Significant-digit formatting that stays readable from 0.0012 to 12345."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if math.isinf(value):
        return "∞"
    if value == 0:
        return "0"
    mag = abs(value)
    if mag >= 10 ** digits:
        return f"{value:,.0f}"
    if mag < 1e-3:
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}g}"


@dataclass
class Table:
    """Rows of already-formatted cells. ``align`` is 'l' or 'r' per column."""

    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    align: str = ""
    note: str = ""
    row_classes: list[str] = field(default_factory=list)  # optional CSS class per row (HTML)

    def drop_blank_column(self, header: str, blank: str = "—") -> "Table":
        """Remove ``header`` when no row has a value there (e.g. 'variant' in a plain sweep)."""
        if header not in self.headers:
            return self
        i = self.headers.index(header)
        if any(row[i] != blank for row in self.rows):
            return self
        self.headers.pop(i)
        self.rows = [row[:i] + row[i + 1:] for row in self.rows]
        if self.align:
            self.align = self.align[:i] + self.align[i + 1:]
        return self

    def _align(self, i: int) -> str:
        return self.align[i] if i < len(self.align) else "l"

    def text(self) -> str:
        """Aligned plain text, for the terminal."""
        widths = [len(h) for h in self.headers]
        for row in self.rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(cell))

        def line(cells: Sequence[str]) -> str:
            out = []
            for i, c in enumerate(cells):
                out.append(c.rjust(widths[i]) if self._align(i) == "r" else c.ljust(widths[i]))
            return "  ".join(out).rstrip()

        parts = [line(self.headers), "  ".join("-" * w for w in widths)]
        parts += [line(r) for r in self.rows]
        return "\n".join(parts)

    def markdown(self) -> str:
        def esc(c: str) -> str:
            return c.replace("|", "\\|").replace("\n", " ")

        sep = ["---:" if self._align(i) == "r" else "---" for i in range(len(self.headers))]
        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(esc(h) for h in self.headers) + " |")
        lines.append("| " + " | ".join(sep) + " |")
        lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in self.rows]
        if not self.rows:
            lines.append("| " + " | ".join("—" for _ in self.headers) + " |")
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        def cell(tag: str, i: int, c: str) -> str:
            cls = ' class="num"' if self._align(i) == "r" else ""
            return f"<{tag}{cls}>{html.escape(c)}</{tag}>"

        head = "".join(cell("th", i, h) for i, h in enumerate(self.headers))
        body = []
        for k, r in enumerate(self.rows):
            cls = self.row_classes[k] if k < len(self.row_classes) else ""
            attr = f' class="{cls}"' if cls else ""
            body.append(f"<tr{attr}>" + "".join(cell("td", i, c) for i, c in enumerate(r)) + "</tr>")
        if not self.rows:
            body.append(f'<tr><td colspan="{len(self.headers)}">none</td></tr>')
        note = f'<p class="note">{html.escape(self.note)}</p>' if self.note else ""
        return (f"<h3>{html.escape(self.title)}</h3>{note}<table><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>")
