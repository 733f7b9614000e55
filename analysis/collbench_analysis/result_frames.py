"""Result records as a pandas DataFrame, with their runs, for the analyses of fields the core
loader (:mod:`.load`) does not model: ``cache``/``cache_pool`` (:mod:`.cache_state`) and
``per_rank`` (:mod:`.stragglers`).

It reads the files :func:`.load.load` already validated (``Dataset.files``), so a bad line is
reported once, by that loader; lines that are not JSON are skipped here.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

SCHEMA = "collbench/1"

# Columns taken from each result record as they are (absent: None; cache absent: "hot").
_COLUMNS = ("run_id", "op", "algo", "backend", "device", "dtype", "redop", "root", "in_place", "bytes", "world_size",
            "nodes", "ranks_per_node", "mode", "sync", "skipped", "wrong")


def read(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Every ``result`` record of ``paths`` as one row (``where`` = file:line, ``p50_us``,
    ``busbw_GBps``, ``cache``, ``buffers``, ``layout`` and the record itself in ``record``), and
    every ``run`` record by run_id."""
    rows: list[dict[str, Any]] = []
    runs: dict[str, dict[str, Any]] = {}
    for path in paths:
        for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(rec, dict) or rec.get("schema") != SCHEMA:
                continue
            if rec.get("type") == "run":
                runs[str(rec.get("run_id"))] = rec
            elif rec.get("type") == "result":
                row = {k: rec.get(k) for k in _COLUMNS}
                t = rec.get("time_us") or {}
                row.update(where=f"{path}:{lineno}", p50_us=t.get("p50"), busbw_GBps=rec.get("busbw_GBps"),
                           cache=rec.get("cache", "hot"), buffers=rec.get("buffers", "plain"),
                           layout=f"{rec.get('nodes')}x{rec.get('ranks_per_node')}", record=rec)
                rows.append(row)
    frame = pd.DataFrame(rows, columns=[*_COLUMNS, "where", "p50_us", "busbw_GBps", "cache", "buffers", "layout",
                                        "record"])
    return frame, runs


def measured(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows with a time (not skipped)."""
    if frame.empty:
        return frame
    return frame[(frame["skipped"] != True) & frame["p50_us"].notna()]  # noqa: E712 (a column, not a bool)


def format_bytes(n: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)
