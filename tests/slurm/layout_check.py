"""Checks for tests/slurm/layout_test.sh: collbench JSON Lines from the emulated cluster. Stdlib only.

    layout_check.py pingpong FILE      2x2 pingpong run: node map, both link classes, wrong == 0
    layout_check.py ratio FILE MIN     inter p50 / intra p50 of latency at the smallest size >= MIN
    layout_check.py collectives FILE L   layout L (NxR or R1+R2+...): node map, inter_node_link, wrong == 0,
                                         node-aware algorithms and coll/han measured across nodes
Exit 0 pass, 1 fail (one line saying why).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import collbench_check as cc  # noqa: E402


class Fail(Exception):
    pass


def one_run(path: str) -> tuple[dict, list[dict]]:
    (results,) = cc.check_file(path, runs=1).values()
    run = next(r for _, r in cc.load(path) if r["type"] == "run")
    return run, results


def per_node(layout: str) -> list[int]:
    """Ranks on n1, n2, ... of a testbed layout: NxR, or R1+R2+... for uneven ones."""
    if "x" in layout:
        n, r = layout.split("x")
        return [int(r)] * int(n)
    return [int(r) for r in layout.split("+")]


def check_layout(run: dict, results: list[dict], layout: str) -> None:
    counts = per_node(layout)
    n, r, world = len(counts), max(counts), sum(counts)
    want_map = [node for node, c in enumerate(counts) for _ in range(c)]
    want_hosts = [f"n{i + 1}" for i in range(n)]
    if run["node_of_rank"] != want_map or run["hosts"] != want_hosts:
        raise Fail(f"node map {run['node_of_rank']} hosts {run['hosts']}, want {want_map} {want_hosts}")
    if (run["nodes"], run["ranks_per_node"], run["world_size"], run["uneven_layout"]) != (n, r, world, len(set(counts)) > 1):
        raise Fail(f"run record says {run['nodes']}x{run['ranks_per_node']} of {run['world_size']}")
    if not str(run.get("inter_node_link") or "").startswith("emulated"):
        raise Fail(f"run record's inter_node_link is {run.get('inter_node_link')!r}, want the testbed's 'emulated: ...'")
    for x in results:
        if (x["nodes"], x["ranks_per_node"], x["world_size"]) != (n, r, world):
            raise Fail(f"{x['op']}/{x['algo']} {x['bytes']}B: nodes {x['nodes']} ranks_per_node {x['ranks_per_node']}")


def pingpong(path: str) -> str:
    run, res = one_run(path)
    check_layout(run, res, "2x2")
    seen = {(x["algo"], x["link"], x["src"], x["dst"]) for x in res}
    want = {(m, link, 0, d) for m in ("latency", "bw") for link, d in (("intra", 1), ("inter", 2))}
    if seen != want:
        raise Fail(f"(method, link, src, dst) measured: {sorted(seen)}, want {sorted(want)}")
    if any(x["op"] != "pingpong" or not x["checked"] or x["wrong"] for x in res):
        raise Fail("a pingpong record is unchecked or has wrong bytes")
    return f"{len(res)} pingpong records, node map [0,0,1,1] on n1,n2"


def ratio(path: str, minimum: str) -> str:
    _, res = one_run(path)
    lat = [x for x in res if x["algo"] == "latency"]
    small = min(x["bytes"] for x in lat)
    p50 = {x["link"]: x["time_us"]["p50"] for x in lat if x["bytes"] == small}
    r = p50["inter"] / p50["intra"]
    msg = f"{small} B latency p50: intra {p50['intra']:.2f} us, inter {p50['inter']:.2f} us, ratio {r:.1f}"
    if r < float(minimum):
        raise Fail(f"{msg} < {minimum}")
    return msg


def collectives(path: str, layout: str) -> str:
    run, res = one_run(path)
    check_layout(run, res, layout)
    counts = per_node(layout)
    measured = [x for x in res if not x["skipped"]]
    if any(x["wrong"] or not x["checked"] for x in measured):
        raise Fail("a collective record is unchecked or wrong")
    for op in {x["op"] for x in res}:
        algos = {x["algo"] for x in measured if x["op"] == op}
        if "library" not in algos or len(algos) < 2:
            raise Fail(f"{op}: want custom and library algorithms measured, got {sorted(algos)}")
        # Across nodes, the node-aware algorithms and Open MPI's coll/han run (hier_ring only
        # on even layouts: it refuses uneven ones, with a reason).
        if len(counts) > 1:
            want = {"han"} | {a for a in ("hier", "hier_leader") if any(x["algo"] == a and x["op"] == op for x in res)}
            if op == "allreduce" and len(set(counts)) == 1:
                want.add("hier_ring")
            if not want <= algos:
                raise Fail(f"{op} on {layout}: node-aware {sorted(want - algos)} not measured")
    return f"{len(measured)} measured ({len(res) - len(measured)} skipped), {layout} node map right"


def main(argv: list[str]) -> int:
    checks = {"pingpong": pingpong, "ratio": ratio, "collectives": collectives}
    if not argv or argv[0] not in checks:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        print(f"OK: {checks[argv[0]](*argv[1:])}")
    except (Fail, cc.CheckError) as e:
        print(f"FAIL: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
