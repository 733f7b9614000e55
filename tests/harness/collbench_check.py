"""Checks collbench/1 JSON Lines against the contract: every record against the JSON Schema
results/schema/collbench-1.json (strictly: the writer writes every declared field and no
undeclared one), plus the rules a schema cannot express: bandwidth arithmetic, chunking, pairs,
time statistics in order, and each run framed by one run and one end record.

Used by the harness end-to-end tests; also runnable by hand:
    /usr/bin/python3 tests/harness/collbench_check.py results.jsonl [--runs N]
"""
from __future__ import annotations

import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
from collbench_analysis import schema  # noqa: E402  (the schema file and its op facts)

TIME_KEYS = ("min", "p5", "p50", "mean", "p95", "p99", "max", "stdev")


class CheckError(AssertionError):
    pass


def _conforms(rec: dict, where: str) -> None:
    problem = schema.first_error(rec, strict=True)
    if problem is not None:
        raise CheckError(f"{where}: {problem}")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_result(r: dict, where: str) -> None:
    _conforms(r, where)
    n, es = r["world_size"], schema.dtype_sizes()[r["dtype"]]
    facts = schema.ops()[r["op"]]
    if r["count"] * es != r["bytes"]:
        raise CheckError(f"{where}: count {r['count']} x {es} != bytes {r['bytes']}")
    chunks = facts.size_chunks(n)
    if r["bytes"] % (chunks * es):
        raise CheckError(f"{where}: bytes {r['bytes']} not a whole number of {chunks} chunks")
    if facts.kind == "p2p" and (r["src"] == r["dst"] or not (r["src"] < n and r["dst"] < n)):
        raise CheckError(f"{where}: pair {r['src']}-{r['dst']} on {n} ranks")
    if r["skipped"]:
        return  # the schema has checked that nothing is measured and a reason is given
    t = r["time_us"]
    if not all(math.isfinite(t[k]) for k in TIME_KEYS):
        raise CheckError(f"{where}: time_us not finite: {t}")
    if not (t["min"] <= t["p5"] <= t["p50"] <= t["p95"] <= t["p99"] <= t["max"]):
        raise CheckError(f"{where}: time_us not ordered: {t}")
    if not (t["min"] <= t["mean"] <= t["max"]):
        raise CheckError(f"{where}: mean outside [min, max]: {t}")
    want_alg = r["bytes"] / t["p50"] / 1e3 if t["p50"] > 0 else 0.0
    if not _close(r["algbw_GBps"], want_alg):
        raise CheckError(f"{where}: algbw {r['algbw_GBps']} != bytes/p50 {want_alg}")
    factor = facts.busbw_factor(n)
    if not _close(r["busbw_GBps"], r["algbw_GBps"] * factor):
        raise CheckError(f"{where}: busbw {r['busbw_GBps']} != algbw x {factor}")
    if r["iters"] < 1:
        raise CheckError(f"{where}: iters {r['iters']}")
    x = r.get("samples_us")
    if x is not None:  # the statistics are those of the kept samples (rounded to 1 ns)
        if len(x) != r["samples"]:
            raise CheckError(f"{where}: {len(x)} samples_us for samples {r['samples']}")
        xs = sorted(x)
        if not (math.isclose(xs[0], t["min"], abs_tol=1e-3) and math.isclose(xs[-1], t["max"], abs_tol=1e-3)):
            raise CheckError(f"{where}: samples_us span {xs[0]}..{xs[-1]}, time_us min/max {t['min']}/{t['max']}")


def skipped_as_expected(r: dict) -> bool:
    """A skip every run on one node has: "han" (Open MPI's coll/han) serves only multi-node communicators."""
    return (r["skipped"] and r["algo"] == "han" and r["nodes"] == 1
            and "only across nodes" in (r.get("skip_reason") or ""))


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


def check_workload(rec: dict, where: str) -> None:
    """A --workload ddp record: the schema, then what it cannot say: the buckets add up to the
    gradients, one bucket time per bucket, timings only when measured."""
    _conforms(rec, where)
    buckets = rec["buckets"]
    if sum(b["bytes"] for b in buckets) != rec["grad_bytes"]:
        raise CheckError(f"{where}: buckets hold {sum(b['bytes'] for b in buckets)} B, grad_bytes {rec['grad_bytes']}")
    if sum(b["tensors"] for b in buckets) != rec["param_tensors"]:
        raise CheckError(f"{where}: buckets hold {sum(b['tensors'] for b in buckets)} tensors, param_tensors {rec['param_tensors']}")
    if all("params" in b for b in buckets) and (  # revision 5: every parameter index once
            any(len(b["params"]) != b["tensors"] for b in buckets)
            or sorted(i for b in buckets for i in b["params"]) != list(range(rec["param_tensors"]))):
        raise CheckError(f"{where}: the buckets' params are not every parameter index once, tensors each")
    if [b["index"] for b in buckets] != list(range(len(buckets))):
        raise CheckError(f"{where}: bucket indices are not 0..{len(buckets) - 1}")
    if rec["skipped"]:
        if rec["step_us"] is not None or not rec["skip_reason"]:
            raise CheckError(f"{where}: a skipped workload has no times and says why")
        return
    if rec["step_us"] is None or len(rec["bucket_p50_us"]) != len(buckets):
        raise CheckError(f"{where}: {len(rec['bucket_p50_us'])} bucket times for {len(buckets)} buckets")


def workload_records(path: str) -> list[dict]:
    """Every workload record of a file (check_file validates them)."""
    return [r for _, r in load(path) if r["type"] == "workload"]


def check_file(path: str, runs: int | None = None, allow_wrong: bool = False) -> dict[str, list[dict]]:
    """Validates every record; returns run_id -> its result records. Each run has exactly one
    run record (first) and one end record (last), and its counts match."""
    by_run: dict[str, list[dict]] = defaultdict(list)
    workloads: dict[str, list[dict]] = defaultdict(list)
    seen_run, seen_end = Counter(), Counter()
    order = []
    for where, rec in load(path):
        kind = rec["type"]
        if kind == "run":
            _conforms(rec, where)
            rid = rec["run_id"]
            for key in ("node_of_rank", "host_of_rank"):
                if len(rec[key]) != rec["world_size"]:
                    raise CheckError(f"{where}: {key} has {len(rec[key])} entries, world_size {rec['world_size']}")
            seen_run[rid] += 1
            order.append(rid)
        elif kind == "result":
            check_result(rec, where)
            if not seen_run[rec["run_id"]] or seen_end[rec["run_id"]]:
                raise CheckError(f"{where}: result outside its run")
            if rec["wrong"] and not allow_wrong:
                raise CheckError(f"{where}: {rec['wrong']} wrong elements ({rec['op']}/{rec['algo']} {rec['bytes']}B)")
            by_run[rec["run_id"]].append(rec)
        elif kind == "workload":
            check_workload(rec, where)
            if not seen_run[rec["run_id"]] or seen_end[rec["run_id"]]:
                raise CheckError(f"{where}: workload outside its run")
            if rec["wrong"] and not allow_wrong:
                raise CheckError(f"{where}: {rec['wrong']} wrong elements (ddp {rec['model']}/{rec['algo']})")
            workloads[rec["run_id"]].append(rec)
        elif kind == "end":
            _conforms(rec, where)
            rid = rec["run_id"]
            seen_end[rid] += 1
            res = by_run[rid] + workloads[rid]
            if rec["points"] != len(res):
                raise CheckError(f"{where}: end says {rec['points']} points, file has {len(res)}")
            if rec["skipped_points"] != sum(r["skipped"] for r in res):
                raise CheckError(f"{where}: skipped_points mismatch")
            if rec["wrong_points"] != sum(r["wrong"] > 0 for r in res):
                raise CheckError(f"{where}: wrong_points mismatch")
        else:
            _conforms(rec, where)  # names the allowed types
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
