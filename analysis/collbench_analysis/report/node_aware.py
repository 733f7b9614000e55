"""Node-aware vs flat (issue 19): do the node-aware algorithms beat what a user has anyway?"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..load import LIBRARY_ALGO, Dataset, algorithm_traits, frame_note
from ..points import collectives, report_order, size_cells, times_cells
from ..tables import BLANK, Table, fmt_col, fmt_num


# Node-aware vs flat, by the algorithms' traits (load.py "algorithm traits"), not their names. Node-aware:
# collbench's node-aware algorithms (allreduce hier_ring / hier_leader, broadcast hier, allgather hier
# today). Flat: every other custom algorithm with known traits that works by messages: node-blind. Not
# flat: the library's code (its own choice and its node-aware entries, han, compared in columns of their
# own; library:ALGO not custom at all); peer-memory algorithms (shm: within one node only, never a whole
# multi-node collective); algorithms without traits (auto, which runs what a tuning file names, possibly
# a node-aware one).


def node_aware(t: dict) -> bool:
    """A custom node-aware algorithm (of :func:`.load.algorithm_traits`): what the table is about."""
    return bool(t["node_aware"]) and not t["library"]


def flat(t: dict) -> bool:
    """A node-blind custom algorithm (of :func:`.load.algorithm_traits`): what the node-aware ones have to beat."""
    return bool(t["traits_known"]) and not (t["node_aware"] or t["peer_memory"] or t["library"])


def library_node_aware(t: dict) -> bool:
    """One of the library's node-aware entries (Open MPI's han)."""
    return bool(t["node_aware"]) and bool(t["library"])


NODE_AWARE_KEYS = ["op", "layout", "variant", "backend", "bytes"]


def node_aware_rows(ds: Dataset) -> pd.DataFrame:
    """Per multi-node (op, layout, variant, backend, size) where a node-aware algorithm was measured.

    Columns: the keys; ``hier`` ((algo, p50) of every node-aware algorithm, fastest first),
    ``best_hier``, ``flat`` / ``flat_p50`` (the fastest flat algorithm), ``library`` (p50),
    ``lib_aware`` / ``lib_aware_p50`` (the fastest of the library's node-aware entries, han), NaN
    where not measured, and ``flat_ratio``, ``library_ratio``, ``lib_aware_ratio`` (each p50 ÷ the
    best node-aware p50: > 1 means node-aware is faster). Points are compared within one backend
    only (a library's NCCL time says nothing about MPI schedules).
    """
    c = collectives(ds)
    multi = c[c["nodes"] > 1]
    p50 = multi.pivot_table(index=NODE_AWARE_KEYS, columns="algo", values="p50_us", aggfunc="last")
    traits = algorithm_traits(multi)
    hier_cols = [a for a in p50.columns if node_aware(traits[a])]
    flat_cols = [a for a in p50.columns if flat(traits[a])]
    lib_cols = [a for a in p50.columns if library_node_aware(traits[a])]
    p50 = p50[p50[hier_cols].notna().any(axis=1)] if hier_cols else p50.iloc[0:0]
    out = pd.DataFrame(index=p50.index)
    out["hier"] = [tuple(sorted(((a, t) for a, t in row.items() if pd.notna(t)), key=lambda at: (at[1], at[0])))
                   for _, row in p50[hier_cols].iterrows()]
    out["best_hier"] = p50[hier_cols].min(axis=1) if hier_cols else np.nan
    has_flat = p50[flat_cols].notna().any(axis=1) if flat_cols else pd.Series(False, index=p50.index)
    out["flat"] = p50[flat_cols].idxmin(axis=1).where(has_flat) if flat_cols and len(p50) else None
    out["flat_p50"] = p50[flat_cols].min(axis=1) if flat_cols else np.nan
    out["library"] = p50[LIBRARY_ALGO] if LIBRARY_ALGO in p50.columns else np.nan
    has_lib = p50[lib_cols].notna().any(axis=1) if lib_cols else pd.Series(False, index=p50.index)
    out["lib_aware"] = p50[lib_cols].idxmin(axis=1).where(has_lib) if lib_cols and len(p50) else None
    out["lib_aware_p50"] = p50[lib_cols].min(axis=1) if lib_cols else np.nan
    best = out["best_hier"].where(out["best_hier"] > 0)
    for col, num in (("flat", "flat_p50"), ("library", "library"), ("lib_aware", "lib_aware_p50")):
        out[f"{col}_ratio"] = out[num] / best
    return report_order(out.reset_index())


def node_aware_table(ds: Dataset) -> Table:
    """Issue 19's question, one row per multi-node size: do the hier algorithms beat what a user has anyway?

    Empty (and left out of the report) without node-aware results on a multi-node layout. Columns
    nobody measured (the library's node-aware entry, a second backend, a variant) are dropped to keep
    the table narrow. The library's node-aware columns are named after the entries measured (han).
    """
    r = node_aware_rows(ds)
    c = collectives(ds)
    compared = c.merge(r[NODE_AWARE_KEYS], on=NODE_AWARE_KEYS)
    links = frame_note(compared)
    names = sorted(set(r["lib_aware"].dropna()))
    lib = "/".join(names) or "library node-aware"
    lib_cells = ([f"{a} {fmt_num(v)}" if isinstance(a, str) else BLANK for a, v in zip(r["lib_aware"], r["lib_aware_p50"])]
                 if len(names) > 1 else fmt_col(r["lib_aware_p50"]))
    note = ("p50 times. node-aware: collbench's node-aware algorithms (their registry traits say so), fastest first; "
            "best flat: the fastest node-blind custom algorithm (not the library's code, library:ALGO or han; not a "
            "peer-memory one such as shm, which runs within one node; not auto, which has no traits of its own); "
            "library: the backend's own call (MPI: Open MPI's default choice); "
            f"{lib}: the library's own node-aware entry (Open MPI's hierarchical coll/han). Ratios are p50 ÷ the "
            "best node-aware p50: > 1 means node-aware is faster.")
    frame = pd.DataFrame({
        "op": r["op"], "layout": r["layout"], "variant": r["variant"].replace("", BLANK),
        "backend": r["backend"] if r["backend"].nunique() > 1 else BLANK, "size": size_cells(r["bytes"]),
        "node-aware p50 (µs)": [", ".join(f"{a} {fmt_num(v)}" for a, v in h) for h in r["hier"]],
        "best flat": r["flat"].fillna(BLANK), "flat p50 (µs)": fmt_col(r["flat_p50"]),
        "library p50 (µs)": fmt_col(r["library"]), f"{lib} p50 (µs)": lib_cells,
        "flat ÷ hier": times_cells(r["flat_ratio"]), "library ÷ hier": times_cells(r["library_ratio"]),
        f"{lib} ÷ hier": times_cells(r["lib_aware_ratio"])})
    t = Table("Node-aware vs flat", frame, align="llllrllrrrrrr",
              note=note + (f" {links.rstrip('.')}." if links else ""))
    for header in ("variant", "backend", f"{lib} p50 (µs)", f"{lib} ÷ hier"):
        t.drop_blank_column(header)
    return t
