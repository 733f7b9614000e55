"""A titled table of formatted cells, rendered by pandas/tabulate as text, Markdown and HTML.

Building the cells once and rendering them per medium keeps the terminal output,
``summary.md``/``compare.md`` and ``report.html`` saying exactly the same thing.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import pandas as pd

BLANK = "—"


def fmt_num(value: float | None, digits: int = 3) -> str:
    """Significant-digit formatting that stays readable from 0.0012 to 12345."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return BLANK
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


def fmt_col(values: Any, digits: int = 3) -> list[str]:
    """:func:`fmt_num` over a column (NaN and None: —)."""
    return [fmt_num(None if v is None or pd.isna(v) else float(v), digits) for v in values]


@dataclass
class Table:
    """A DataFrame of already-formatted cells. ``align`` is 'l' or 'r' per column."""

    title: str
    frame: pd.DataFrame
    align: str = ""
    note: str = ""
    row_classes: list[str] = field(default_factory=list)  # optional CSS class per row (HTML)

    @classmethod
    def of(cls, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]] = (), **kw: Any) -> "Table":
        return cls(title, pd.DataFrame([list(r) for r in rows], columns=list(headers), dtype=object), **kw)

    @property
    def headers(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    @property
    def rows(self) -> list[list[str]]:
        return self.frame.values.tolist()

    @property
    def empty(self) -> bool:
        """No rows, or every cell ``—``: a table that says nothing (the report leaves it out)."""
        return self.frame.empty or bool((self.frame.astype(str) == BLANK).all(axis=None))

    def drop_blank_column(self, header: str) -> "Table":
        """Remove ``header`` when no row has a value there (e.g. 'variant' in a plain sweep)."""
        if header in self.frame.columns and (self.frame[header] == BLANK).all():
            i = self.headers.index(header)
            self.frame = self.frame.drop(columns=header)
            self.align = self.align[:i] + self.align[i + 1:]
        return self

    def _colalign(self) -> tuple[str, ...]:
        return tuple("right" if i < len(self.align) and self.align[i] == "r" else "left"
                     for i in range(len(self.headers)))

    def _filled(self) -> pd.DataFrame:
        """The frame, or one row of — when it has no rows (a table that says 'nothing')."""
        if len(self.frame):
            return self.frame
        return pd.DataFrame([[BLANK] * len(self.headers)], columns=self.frame.columns)

    def text(self) -> str:
        """Aligned plain text, for the terminal."""
        body = self._filled().to_markdown(index=False, tablefmt="simple", colalign=self._colalign(),
                                          disable_numparse=True)
        return "\n".join(line.rstrip() for line in body.split("\n"))

    def markdown(self) -> str:
        frame = self._filled().replace(r"\|", r"\\|", regex=True).replace("\n", " ", regex=True)
        frame.columns = [h.replace("|", "\\|") for h in self.headers]
        body = frame.to_markdown(index=False, tablefmt="pipe", colalign=self._colalign(), disable_numparse=True)
        lines = [f"### {self.title}", ""] + ([self.note, ""] if self.note else [])
        return "\n".join([*lines, body]) + "\n"

    def html(self) -> str:
        """``to_html``; right-aligned columns are named by the table's classes (r1, r2, …: CSS in the page)."""
        classes = ["data"] + [f"r{i + 1}" for i, a in enumerate(self._colalign()) if a == "right"]
        body = self._filled().to_html(index=False, border=0, classes=classes)
        if any(self.row_classes):  # to_html has no per-row class: mark the body rows in order
            rows = iter(self.row_classes)
            head, sep, tail = body.partition("<tbody>")
            tail = re.sub(r"<tr>", lambda m: f'<tr class="{c}">' if (c := next(rows, "")) else "<tr>", tail)
            body = head + sep + tail
        note = f'<p class="note">{_escape(self.note)}</p>' if self.note else ""
        return f"<h3>{_escape(self.title)}</h3>{note}{body}"


def _escape(text: str) -> str:
    import html

    return html.escape(text)


# CSS for Table.html's column classes (right-aligned, tabular figures), for pages that show tables.
NUM_CSS = "".join(f"table.r{i} td:nth-child({i}),table.r{i} th:nth-child({i})" + ("," if i < 24 else "")
                  for i in range(1, 25)) + "{text-align:right;font-variant-numeric:tabular-nums}"
