"""collplot's report: the summary tables and the ``report.html`` / ``summary.md`` writers.

Tables are computed once (:func:`.assemble.build_tables`) from the results frame (pandas groupby,
pivot_table, drop_duplicates) and rendered into both files (:mod:`.writers`), so the HTML report and
the GitHub-readable Markdown never disagree. Both lead with the answers (best algorithm per size and
layout, custom vs library, within vs across node, DDP step time) before the detailed tables and the
figure gallery.

- :mod:`.answers`     the best algorithm per (op, layout, size) by the shared rule, custom vs library,
                      the winner charts
- :mod:`.backends`    several backends side by side
- :mod:`.node_aware`  node-aware vs flat algorithms on multi-node layouts
- :mod:`.summary`     peak bus bandwidth, small-message latency, point-to-point, α–β model and crossovers
- :mod:`.runs`        skipped points and verification failures, loaded machines, the runs table
- :mod:`.assemble`    every table in report order (:class:`.assemble.Tables`)
- :mod:`.writers`     report.html and summary.md

The names below are the package's API for library use and the tests (``report.build_tables(ds)``,
``report.ranked(c)``, …); the modules of the package import each other directly.
"""
from __future__ import annotations

from ..points import algo_of, collectives
from ..side_by_side import times_text
from .answers import BEST_GRID, answer_cells, answer_figures, answer_text, ranked
from .assemble import Tables, build_tables
from .backends import BACKENDS_GLANCE
from .node_aware import node_aware_rows, node_aware_table
from .runs import load_warnings
from .writers import write_html, write_markdown

_algo_of = algo_of  # the name tests/analysis/test_tiny_report.py calls

__all__ = ["BACKENDS_GLANCE", "BEST_GRID", "Tables", "answer_cells", "answer_figures", "answer_text", "build_tables",
           "collectives", "load_warnings", "node_aware_rows", "node_aware_table", "ranked", "times_text",
           "write_html", "write_markdown"]
