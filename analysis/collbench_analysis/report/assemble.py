"""The report's tables, computed once (:func:`build_tables`) and written into both report.html and
summary.md (:mod:`.writers`), so the two never disagree."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pandas as pd

from .. import cache_state, mpis, provenance, stragglers
from ..ddp import step_tables
from ..ddp.records import Workload, measured_of
from ..load import Dataset, format_bytes
from ..model import MIN_FIT_SIZES, MIN_FIT_SPAN, fit_models, measured_crossovers, predicted_crossovers
from ..points import collectives
from ..side_by_side import mpi_sides
from ..tables import Table
from .answers import best_algorithm_table, best_per_size_table, custom_vs_library_table
from .backends import backends_glance_table, backends_per_size_table
from .node_aware import node_aware_table
from .runs import problems_table, runs_table
from .summary import (crossover_table, model_table, peak_busbw_table, pingpong_table, small_latency_table,
                      within_vs_across_table)


@dataclass
class Tables:
    """Everything the report prints, in report order."""

    answers: list[Table]
    summary: list[Table]
    model: Table
    crossovers: Table
    problems: Table
    runs: Table
    models: pd.DataFrame
    model_note: str = ""  # why there is no α–β table (too few sizes), shown in its place
    ddp: list[Table] = field(default_factory=list)  # one per model; empty without workload records
    # Figure section -> tables shown under it: hot vs cold (cache_state), stragglers (per rank).
    extra: dict[str, list[Table]] = field(default_factory=dict)

    @property
    def model_tables(self) -> list[Table]:
        """The α–β section's tables that say something (none: the section is left out, or says why)."""
        return [t for t in (self.model, self.crossovers) if not t.empty]

    def all(self) -> list[Table]:
        return [self.problems, *self.answers, *self.summary, self.model, self.crossovers, *self.ddp,
                *(t for ts in self.extra.values() for t in ts), self.runs]


def extra_tables(ds: Dataset) -> dict[str, list[Table]]:
    """The tables of the pandas modules: several MPIs side by side, hot vs cold cache, stragglers."""

    c = collectives(ds)
    out = {mpis.section(mpi_sides(c)): mpis.tables(c), cache_state.SECTION: cache_state.tables(ds.results),
           stragglers.SECTION: stragglers.tables(stragglers.frame(ds))}
    return {s: ts for s, ts in out.items() if ts}


def model_note(ds: Dataset, models: pd.DataFrame) -> str:
    """One line where no series had the sizes for an α–β fit (""), naming the rule and what the run has."""
    if len(models):
        return ""
    sizes = ds.results.loc[ds.results["measured"], "bytes"]
    have = f"{sizes.nunique()} size(s), {format_bytes(sizes.min())}–{format_bytes(sizes.max())}" if len(sizes) \
        else "no measured sizes"
    return (f"No α–β fit: a fit needs at least {MIN_FIT_SIZES} distinct sizes spanning at least "
            f"{MIN_FIT_SPAN:g}× per algorithm (to reach both the latency- and the bandwidth-bound regime, with "
            f"points left over to judge the fit); this run has {have}.")


def build_tables(ds: Dataset, workloads: Sequence[Workload] = ()) -> Tables:
    c = collectives(ds)
    models = fit_models(ds.results)
    node_aware = node_aware_table(ds)  # only when some multi-node layout has node-aware results
    answers = [best_per_size_table(c), backends_glance_table(c), custom_vs_library_table(c),
               within_vs_across_table(ds), step_tables.answer_table(workloads)]
    hardware = provenance.table(ds)  # issue 21: hardware, link rates and the --expect verdict per run
    return Tables(
        answers=[t for t in answers if t.rows],
        summary=[t.drop_blank_column("variant") for t in
                 (best_algorithm_table(c), backends_per_size_table(c), *([node_aware] if node_aware.rows else []),
                  peak_busbw_table(c),
                  small_latency_table(c), pingpong_table(ds), *([hardware] if hardware else []))
                 if not t.empty],  # a table of nothing but '—' is left out
        model=model_table(models).drop_blank_column("variant"),
        crossovers=crossover_table(measured_crossovers(ds.results), predicted_crossovers(models)).drop_blank_column(
            "variant"),
        problems=problems_table(ds),
        runs=runs_table(ds),
        models=models,
        model_note=model_note(ds, models),
        ddp=[*step_tables.measured_tables(measured_of(ds), workloads),
             *[t for t in (step_tables.algorithm_table(workloads),) if t.rows], *step_tables.tables(workloads)],
        extra=extra_tables(ds),
    )
