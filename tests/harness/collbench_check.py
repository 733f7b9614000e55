"""Checks collbench/1 JSON Lines against the contract (results/README.md). Stdlib only.

Used by the harness end-to-end tests; also runnable by hand:
    /usr/bin/python3 tests/harness/collbench_check.py results.jsonl [--runs N]
"""
from __future__ import annotations

import json
import math
import sys
from collections import Counter, defaultdict

SCHEMA = "collbench/1"
DTYPE_SIZE = {"int8": 1, "uint8": 1, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
NCHUNK_OPS = {"gather", "allgather", "scatter", "reduce_scatter", "alltoall"}
REDUCING = {"reduce", "allreduce", "reduce_scatter"}
ROOTED = {"broadcast", "reduce", "gather", "scatter"}

STR, INT, NUM, BOOL, LIST, OBJ, NULL = "str", "int", "num", "bool", "list", "obj", "null"

RUN_FIELDS = {
    "type": STR, "schema": STR, "run_id": STR, "argv": LIST, "start_time": STR, "hosts": LIST,
    "node_of_rank": LIST, "world_size": INT, "nodes": INT, "ranks_per_node": INT, "backend": STR,
    "device": STR, "versions": OBJ, "git_commit": STR, "slurm": (OBJ, NULL), "config": OBJ,
}
RESULT_FIELDS = {
    "type": STR, "schema": STR, "run_id": STR, "op": STR, "algo": STR, "backend": STR, "device": STR,
    "dtype": STR, "redop": (STR, NULL), "root": (INT, NULL), "in_place": BOOL, "bytes": INT, "count": INT,
    "world_size": INT, "nodes": INT, "ranks_per_node": INT, "iters": INT, "warmup": INT, "mode": STR,
    "time_us": (OBJ, NULL), "algbw_GBps": (NUM, NULL), "busbw_GBps": (NUM, NULL), "wrong": INT,
    "skipped": BOOL, "skip_reason": (STR, NULL),
}
P2P_OPS = {"pingpong"}
P2P_METHODS = {"latency", "bw", "bibw"}
P2P_FIELDS = {"src": INT, "dst": INT, "link": STR}
END_FIELDS = {
    "type": STR, "schema": STR, "run_id": STR, "end_time": STR, "exit_status": INT, "points": INT,
    "wrong_points": INT, "skipped_points": INT,
}
TIME_KEYS = ("min", "p5", "p50", "mean", "p95", "p99", "max", "stdev")


class CheckError(AssertionError):
    pass


def _is(v, kind) -> bool:
    if isinstance(kind, tuple):
        return any(_is(v, k) for k in kind)
    return {
        STR: lambda: isinstance(v, str),
        INT: lambda: isinstance(v, int) and not isinstance(v, bool),
        NUM: lambda: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
        BOOL: lambda: isinstance(v, bool),
        LIST: lambda: isinstance(v, list),
        OBJ: lambda: isinstance(v, dict),
        NULL: lambda: v is None,
    }[kind]()


def _fields(rec: dict, spec: dict, where: str) -> None:
    for key, kind in spec.items():
        if key not in rec:
            raise CheckError(f"{where}: missing field {key!r}")
        if not _is(rec[key], kind):
            raise CheckError(f"{where}: field {key!r} has wrong type: {rec[key]!r} (want {kind})")
    if rec["schema"] != SCHEMA:
        raise CheckError(f"{where}: schema {rec['schema']!r} != {SCHEMA}")


def busbw_factor(op: str, n: int) -> float:
    if op == "allreduce":
        return 2 * (n - 1) / n
    if op in NCHUNK_OPS:
        return (n - 1) / n
    return 1.0


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_result(r: dict, where: str) -> None:
    _fields(r, RESULT_FIELDS, where)
    n, es = r["world_size"], DTYPE_SIZE[r["dtype"]]
    if r["count"] * es != r["bytes"]:
        raise CheckError(f"{where}: count {r['count']} x {es} != bytes {r['bytes']}")
    if r["op"] in NCHUNK_OPS and r["bytes"] % (n * es):
        raise CheckError(f"{where}: bytes {r['bytes']} not a whole number of {n} chunks")
    if (r["redop"] is None) == (r["op"] in REDUCING):
        raise CheckError(f"{where}: redop {r['redop']!r} wrong for {r['op']}")
    if (r["root"] is None) == (r["op"] in ROOTED):
        raise CheckError(f"{where}: root {r['root']!r} wrong for {r['op']}")
    if r["mode"] not in ("per_iter", "batch", "interleaved"):
        raise CheckError(f"{where}: mode {r['mode']!r}")
    if r["op"] in P2P_OPS:
        _fields(r, P2P_FIELDS, where)
        if r["algo"] not in P2P_METHODS or r["link"] not in ("intra", "inter"):
            raise CheckError(f"{where}: algo {r['algo']!r} / link {r['link']!r}")
        if r["src"] == r["dst"] or not (0 <= r["src"] < n and 0 <= r["dst"] < n):
            raise CheckError(f"{where}: pair {r['src']}-{r['dst']} on {n} ranks")
    if r["skipped"]:
        if r["time_us"] is not None or r["algbw_GBps"] is not None or r["busbw_GBps"] is not None:
            raise CheckError(f"{where}: skipped point with measurements")
        if not r["skip_reason"]:
            raise CheckError(f"{where}: skipped point without a reason")
        return
    t = r["time_us"]
    for k in TIME_KEYS:
        if not _is(t.get(k), NUM):
            raise CheckError(f"{where}: time_us.{k} missing or not a number")
    if not (t["min"] <= t["p5"] <= t["p50"] <= t["p95"] <= t["p99"] <= t["max"]) or t["min"] < 0:
        raise CheckError(f"{where}: time_us not ordered: {t}")
    if not (t["min"] <= t["mean"] <= t["max"]):
        raise CheckError(f"{where}: mean outside [min, max]: {t}")
    want_alg = r["bytes"] / t["p50"] / 1e3 if t["p50"] > 0 else 0.0
    if not _close(r["algbw_GBps"], want_alg):
        raise CheckError(f"{where}: algbw {r['algbw_GBps']} != bytes/p50 {want_alg}")
    if not _close(r["busbw_GBps"], r["algbw_GBps"] * busbw_factor(r["op"], n)):
        raise CheckError(f"{where}: busbw {r['busbw_GBps']} != algbw x {busbw_factor(r['op'], n)}")
    if r["iters"] < 1:
        raise CheckError(f"{where}: iters {r['iters']}")


def load(path: str) -> list[tuple[str, dict]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            where = f"{path}:{i}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise CheckError(f"{where}: not JSON: {e}") from e
            if not isinstance(rec, dict) or "type" not in rec:
                raise CheckError(f"{where}: not a record")
            out.append((where, rec))
    return out


def check_file(path: str, runs: int | None = None, allow_wrong: bool = False) -> dict[str, list[dict]]:
    """Validates every record; returns run_id -> its result records. Each run has exactly one
    run record (first) and one end record (last), and its counts match."""
    by_run: dict[str, list[dict]] = defaultdict(list)
    seen_run, seen_end = Counter(), Counter()
    order = []
    for where, rec in load(path):
        kind = rec["type"]
        if kind == "run":
            _fields(rec, RUN_FIELDS, where)
            rid = rec["run_id"]
            if len(rid) != 16 or any(c not in "0123456789abcdef" for c in rid):
                raise CheckError(f"{where}: run_id {rid!r} is not 16 hex digits")
            if len(rec["node_of_rank"]) != rec["world_size"]:
                raise CheckError(f"{where}: node_of_rank has {len(rec['node_of_rank'])} entries")
            if set(rec["versions"]) < {"collbench", "mpi", "nccl", "cuda"}:
                raise CheckError(f"{where}: versions lacks a key: {rec['versions']}")
            seen_run[rid] += 1
            order.append(rid)
        elif kind == "result":
            check_result(rec, where)
            if not seen_run[rec["run_id"]] or seen_end[rec["run_id"]]:
                raise CheckError(f"{where}: result outside its run")
            if rec["wrong"] and not allow_wrong:
                raise CheckError(f"{where}: {rec['wrong']} wrong elements ({rec['op']}/{rec['algo']} {rec['bytes']}B)")
            by_run[rec["run_id"]].append(rec)
        elif kind == "end":
            _fields(rec, END_FIELDS, where)
            rid = rec["run_id"]
            seen_end[rid] += 1
            res = by_run[rid]
            if rec["points"] != len(res):
                raise CheckError(f"{where}: end says {rec['points']} points, file has {len(res)}")
            if rec["skipped_points"] != sum(r["skipped"] for r in res):
                raise CheckError(f"{where}: skipped_points mismatch")
            if rec["wrong_points"] != sum(r["wrong"] > 0 for r in res):
                raise CheckError(f"{where}: wrong_points mismatch")
        else:
            raise CheckError(f"{where}: unknown record type {kind!r}")
    for rid in order:
        if seen_run[rid] != 1 or seen_end[rid] != 1:
            raise CheckError(f"run {rid}: {seen_run[rid]} run and {seen_end[rid]} end records (want 1 and 1)")
    if runs is not None and len(order) != runs:
        raise CheckError(f"{path}: {len(order)} runs, expected {runs}")
    return {rid: by_run[rid] for rid in order}


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("file")
    p.add_argument("--runs", type=int)
    p.add_argument("--allow-wrong", action="store_true")
    a = p.parse_args(argv)
    try:
        runs = check_file(a.file, a.runs, a.allow_wrong)
    except CheckError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print(f"OK: {len(runs)} run(s), {sum(map(len, runs.values()))} results")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
