"""collbench result analysis: load, plot, compare and model collbench/1 JSON Lines.

Modules: load (parsing/validation/grouping), plots (figures), compare
(before/after verdicts), model (α–β fits, crossovers), report (tables, HTML,
Markdown), cli (the collplot / collcompare entry points).
"""
__version__ = "0.1.0"
