"""collbench result analysis: load, plot, compare and model collbench/1 JSON Lines.

``collbench_analysis.load(paths)`` reads results into pandas DataFrames (a :class:`Dataset`:
``results``, one row per result record, and ``runs``); see docs/analysis.md "Library use".
Modules: load (parsing/validation/frames), plots (figures), compare (before/after verdicts),
model (α–β fits, crossovers), report (tables, HTML, Markdown), tune (tuning files: best
algorithm per size range), ddp (DDP workload records), cli (the collplot / collcompare /
colltune entry points).
"""
__version__ = "0.1.0"

from .load import Dataset, LoadError, load  # noqa: E402,F401  (the package-level entry point)
