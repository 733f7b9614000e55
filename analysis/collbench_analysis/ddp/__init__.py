"""DDP gradient synchronisation: ``workload`` records, the overlap model, figures and tables.

- :mod:`.records`      the ``workload`` and ``ddp_measured`` records, parsed (:func:`workloads_of`,
                       :func:`measured_of`)
- :mod:`.model`        the overlap model: measured bucket times -> a modelled step, its projected
                       speed-up, and PyTorch's measured step paired with it
- :mod:`.naming`       the section's title and labels, series names, notes
- :mod:`.figures`      step sync bars, one step's timeline, the projected speed-up
- :mod:`.step_tables`  the section's tables and the report's DDP answer

The names below are the package's API for library use and the tests (``ddp.workloads_of(ds)``, docs/ddp.md);
the modules of the package and the report import the modules directly.
"""
from __future__ import annotations

from .figures import make_figures
from .model import overlap, overlap_share, project, ready_times_us, workload_overlap, workload_projection
from .naming import MODEL_LABEL, SECTION, TIMELINE_LABEL
from .records import Compute, Workload, load_workloads, measured_of, parse_workload, workloads_of
from .step_tables import algorithm_table, answer_table, measured_tables, tables

__all__ = ["Compute", "MODEL_LABEL", "SECTION", "TIMELINE_LABEL", "Workload", "algorithm_table", "answer_table",
           "load_workloads", "make_figures", "measured_of", "measured_tables", "overlap", "overlap_share",
           "parse_workload", "project", "ready_times_us", "tables", "workload_overlap", "workload_projection",
           "workloads_of"]
