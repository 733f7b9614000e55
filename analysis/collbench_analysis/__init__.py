"""collbench result analysis: load, plot, compare and model collbench/1 JSON Lines.

Modules: load (parsing/validation/grouping), plots (figures), compare
(before/after verdicts), model (α–β fits, crossovers), report (tables, HTML,
Markdown), tune (tuning files: best algorithm per size range), cli (the
collplot / collcompare / colltune entry points).
"""
__version__ = "0.1.0"
