"""Checks for tests/slurm/layout_test.sh: collbench JSON Lines from the emulated cluster. Stdlib only.

    layout_check.py pingpong FILE      2x2 pingpong run: node map, both link classes, wrong == 0
    layout_check.py ratio FILE MIN     inter p50 / intra p50 of latency at the smallest size >= MIN
    layout_check.py collectives FILE N R   N nodes x R ranks: node map, nodes/ranks_per_node, wrong == 0
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


def check_layout(run: dict, results: list[dict], n: int, r: int) -> None:
    want_map = [i // r for i in range(n * r)]
    want_hosts = [f"n{i + 1}" for i in range(n)]
    if run["node_of_rank"] != want_map or run["hosts"] != want_hosts:
        raise Fail(f"node map {run['node_of_rank']} hosts {run['hosts']}, want {want_map} {want_hosts}")
    if (run["nodes"], run["ranks_per_node"], run["world_size"]) != (n, r, n * r):
        raise Fail(f"run record says {run['nodes']}x{run['ranks_per_node']} of {run['world_size']}")
    for x in results:
        if (x["nodes"], x["ranks_per_node"], x["world_size"]) != (n, r, n * r):
            raise Fail(f"{x['op']}/{x['algo']} {x['bytes']}B: nodes {x['nodes']} ranks_per_node {x['ranks_per_node']}")


def pingpong(path: str) -> str:
    run, res = one_run(path)
    check_layout(run, res, 2, 2)
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


def collectives(path: str, n: str, r: str) -> str:
    run, res = one_run(path)
    check_layout(run, res, int(n), int(r))
    measured = [x for x in res if not x["skipped"]]
    if any(x["wrong"] or not x["checked"] for x in measured):
        raise Fail("a collective record is unchecked or wrong")
    for op in {x["op"] for x in res}:
        algos = {x["algo"] for x in measured if x["op"] == op}
        if "library" not in algos or len(algos) < 2:
            raise Fail(f"{op}: want custom and library algorithms measured, got {sorted(algos)}")
    return f"{len(measured)} measured ({len(res) - len(measured)} skipped), {n}x{r} node map right"


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
