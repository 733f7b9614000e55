"""Result records as a pandas DataFrame, read straight from validated JSON Lines files.

The gate writer (:mod:`.expect`) and the efficiency figures (:mod:`.efficiency`) work on this
frame. Call it on inputs :func:`.load.load` has already validated (it raises ``LoadError``
naming ``file:line``); here only the fields those modules need are picked, one row per
``result`` record, with the layout taken from the record's run (``1x4``, or ``3+1`` for an
uneven one, as :func:`.load.layout_name` names it).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import pandas as pd

from .load import discover, layout_name

COLUMNS = ["source", "run_id", "op", "algo", "backend", "device", "dtype", "redop", "root", "in_place", "buffers",
           "mode", "bytes", "world_size", "nodes", "ranks_per_node", "per_node", "layout", "p50", "busbw",
           "efficiency", "skipped", "wrong"]


def _per_node(run: dict) -> tuple[int, ...] | None:
    """Each node's rank count (node order) for an uneven layout, else None."""
    nodes = run.get("node_of_rank") or []
    counts = [nodes.count(n) for n in range(max(nodes) + 1)] if nodes else []
    return tuple(counts) if counts and len(set(counts)) > 1 else None


def result_frame(paths: Sequence[str | Path]) -> pd.DataFrame:
    """One row per result record of every input (files, or folders searched for ``*.jsonl``)."""
    rows: list[dict] = []
    for path in discover(paths):
        runs: dict[str, dict] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a cut last line (load() has refused anything worse)
            kind = rec.get("type")
            if kind == "run":
                runs[rec.get("run_id")] = rec
            elif kind == "result":
                per_node = _per_node(runs.get(rec.get("run_id"), {}))
                t = rec.get("time_us") or {}
                rows.append({
                    "source": str(path), "run_id": rec.get("run_id"), "op": rec["op"], "algo": rec["algo"],
                    "backend": rec.get("backend"), "device": rec.get("device"), "dtype": rec.get("dtype"),
                    "redop": rec.get("redop"), "root": rec.get("root"), "in_place": bool(rec.get("in_place")),
                    "buffers": rec.get("buffers", "plain"), "mode": rec.get("mode", "per_iter"),
                    "bytes": int(rec["bytes"]), "world_size": rec.get("world_size"), "nodes": rec.get("nodes"),
                    "ranks_per_node": rec.get("ranks_per_node"), "per_node": per_node,
                    "layout": layout_name(rec.get("nodes", 1), rec.get("ranks_per_node", 1), per_node),
                    "p50": t.get("p50"), "busbw": rec.get("busbw_GBps"), "efficiency": rec.get("efficiency"),
                    "skipped": bool(rec.get("skipped")), "wrong": int(rec.get("wrong") or 0)})
    return pd.DataFrame(rows, columns=COLUMNS)
