"""The collective points the report's tables and figures start from, and the cells they share.

:func:`collectives` is the latest measured collective point per identity, with its ``variant`` and
``series``; :data:`GROUP` the (op, layout, variant) every table and figure is grouped by;
:func:`report_order` the order rows are shown in; :func:`size_cells` and :func:`times_cells` the
size and ratio cells. Used by the report (:mod:`.report`) and the "Open MPI vs MPICH" section
(:mod:`.mpis`).
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from .load import Dataset, format_bytes, sort_layouts, views
from .model import series_of
from .tables import BLANK

GROUP = ["op", "layout", "variant"]


def collectives(ds: Dataset) -> pd.DataFrame:
    """Latest measured collective point per identity, with ``variant`` and ``series``, in report order."""
    c = views(ds.results[~ds.results["is_p2p"]])
    c["series"] = series_of(c)
    return sort_layouts(c, ["op", "layout", "variant"])


def size_cells(values: pd.Series) -> list[str]:
    """Sizes as the tables write them: ``64K``."""
    return [format_bytes(v) for v in values]


def times_cells(values: pd.Series) -> list[str]:
    """Ratios as the tables write them: ``2.50×``; ``—`` for NaN."""
    return [BLANK if pd.isna(v) else f"{v:.2f}×" for v in values]


def report_order(df: pd.DataFrame, extra: Sequence[str] = ("bytes",)) -> pd.DataFrame:
    """Rows by op, layout (:func:`.load.sort_layouts`), variant, then ``extra``."""
    return sort_layouts(df, [*GROUP, *extra])


def algo_of(series: str) -> str:
    """``ring (mpi)`` -> ``ring``."""
    return series.rsplit(" (", 1)[0]
