"""The report's "Hardware, links and acceptance" table: per run and node, what the run record says
it ran on (CPU model, hwloc topology, the ranks' binding), the link rates its efficiencies are
judged against, and the --expect gate's verdict from the end record. Records written before
these fields existed give no row. Built from ``Dataset.runs`` (docs/records.md "run record").
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .load import Dataset, format_bytes
from .tables import Table

_CACHE = {"data": "d", "instruction": "i", "unified": ""}


def _caches(caches: list[dict]) -> str:
    return ", ".join(f"L{c['level']}{_CACHE.get(c['type'], '')} {format_bytes(c['size_bytes'])}×{c['count']}"
                     for c in caches) or "—"


def _binding(binding: list[dict], ranks: list[int]) -> str:
    """'ranks 0-3: cpus 0-1, NUMA 0' when the node's ranks share one binding, else each rank's."""
    mine = [binding[r] for r in ranks if r < len(binding)]
    if mine and all(b == mine[0] for b in mine):
        return f"{len(mine)} rank(s): cpus {mine[0]['cpus']}, NUMA {mine[0]['numa'] or '?'}"
    return "; ".join(f"rank {r}: cpus {binding[r]['cpus']} NUMA {binding[r]['numa'] or '?'}" for r in ranks)


def _link(rate: dict | None) -> str:
    return f"{rate['GBps']:.2f} GB/s ({rate['src']}-{rate['dst']})" if rate else "—"


def frame(ds: Dataset) -> pd.DataFrame:
    """One row per (run, node) of the runs whose record carries hardware (``Dataset.runs``)."""
    rows = []
    for run in ds.runs[ds.runs["hardware"].notna()].itertuples(index=False):
        links = run.links or {}
        gate = run.expect
        verdict = f"{gate['failed']} of {gate['checked']} below ({Path(gate['file']).name})" if gate else "not gated"
        for node, hw in enumerate(run.hardware):
            ranks = [r for r, n in enumerate(run.node_of_rank) if n == node]
            rows.append({"run_id": run.run_id, "node": f"{node} {hw['host']}", "cpu": hw.get("cpu_model") or "?",
                         "topology": f"{hw['packages']} pkg, {hw['numa_nodes']} NUMA, {hw['cores']} cores, "
                                     f"{hw['pus']} PUs",
                         "caches": _caches(hw.get("caches", [])),
                         "binding": _binding(run.binding or [], ranks),
                         "intra": _link(links.get("intra")), "inter": _link(links.get("inter")), "expect": verdict})
    return pd.DataFrame(rows)


def table(ds: Dataset) -> Table | None:
    """The report table, or None when no run record carries provenance."""
    df = frame(ds)
    if df.empty:
        return None
    cols = ["run_id", "node", "cpu", "topology", "caches", "binding", "intra", "inter", "expect"]
    t = Table.of("Hardware, links and acceptance",
              ["run_id", "node", "CPU", "topology (hwloc)", "caches", "binding", "intra-node link", "inter-node link",
               "--expect"], df[cols].astype(str).values.tolist(), align="lllllllll",
              note="links: osu_bw at the run's start, what each point's efficiency is judged against; "
                   "--expect: checks below their reference (exit 5), or 'not gated' for a run without "
                   "--expect (write a reference from a good run: collcompare RESULTS --write-expect FILE)")
    return t.drop_blank_column("inter-node link")
