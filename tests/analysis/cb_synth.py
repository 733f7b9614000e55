"""Realistic synthetic collbench/1 JSON Lines for the analysis tests (and demos).

Times follow t = α + n·β exactly at p50 (so model fits can be checked against
known α/β); p5/p95 etc. are a fixed relative spread around it, plus an optional
deterministic jitter. Records carry every field the schema defines.

Run as a script to write a demo dataset:  /usr/bin/python3 cb_synth.py OUTDIR
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
from collbench_analysis import schema  # noqa: E402  (op facts and dtype sizes: the schema's)
from collbench_analysis.load import REGISTRY_SNAPSHOT, UNRANKED  # noqa: E402

SCHEMA = schema.schema_id()
DTYPE_SIZE = schema.dtype_sizes()


def traits(node_aware: bool = False, peer_memory: bool = False, library: bool = False,
           simplicity_rank: int = UNRANKED) -> dict[str, Any]:
    """An algorithm's traits as collbench writes them (docs/records.md "Algorithm traits")."""
    return {"node_aware": node_aware, "peer_memory": peer_memory, "library": library,
            "simplicity_rank": simplicity_rank}


def registry_algorithms(backend: str) -> list[dict[str, Any]]:
    """Every registry entry usable on ``backend``, as a run record's ``algorithms`` lists them: the
    registry snapshot (collbench --list --json, which tests/harness/list_json.py checks against the
    registry), without the texts."""
    doc = json.loads(REGISTRY_SNAPSHOT.read_text(encoding="utf-8"))
    return [{k: e[k] for k in ("op", "algo", "backend", "traits")} for e in doc["algorithms"]
            if e["backend"] in ("any", backend)]


@dataclass
class RunCtx:
    """A run record plus the layout the results inherit."""

    run_id: str  # a short name is turned into 16 hex digits, as collbench writes them
    nodes: int
    ranks_per_node: int
    backend: str = "mpi"
    device: str = "cpu"
    extra: dict[str, Any] = field(default_factory=dict)
    # The run record's `algorithms`, as collbench writes it: every registry entry usable on the
    # backend (collbench --op all --algo all,library:all), plus or replaced by `algorithms`'
    # entries ((op, algo) -> traits(...), backend "any": an algorithm the registry does not have).
    # legacy: a record from before the key existed (the analysis reads the registry snapshot).
    algorithms: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    legacy: bool = False

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[0-9a-f]{16}", self.run_id):
            self.run_id = hashlib.blake2b(self.run_id.encode(), digest_size=8).hexdigest()

    @property
    def world_size(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def node_of_rank(self) -> list[int]:
        return [r // self.ranks_per_node for r in range(self.world_size)]

    def record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "type": "run", "schema": SCHEMA, "run_id": self.run_id,
            "argv": ["collbench", "--op", "all", "--algo", "all", "--json", "out.jsonl"],
            "start_time": "2026-11-22T07:40:00Z",
            "hosts": [f"n{i + 1}" for i in range(self.nodes)],
            "host_of_rank": [f"n{i + 1}" for i in self.node_of_rank],
            "node_of_rank": self.node_of_rank, "world_size": self.world_size,
            "nodes": self.nodes, "ranks_per_node": self.ranks_per_node, "uneven_layout": False,
            "backend": self.backend, "device": self.device,
            "versions": {"collbench": "0.1.0", "mpi": "Open MPI v4.1.4", "nccl": None, "cuda": None,
                         "cuda_driver": None, "gpu": None, "device_transfer": None},
            "git_commit": "abc1234",
            "slurm": {"job_id": "12", "nodelist": f"n[1-{self.nodes}]", "partition": "debug"},
            "config": None,
        }
        if not self.legacy:
            listed = [e for e in registry_algorithms(self.backend) if (e["op"], e["algo"]) not in self.algorithms]
            listed += [{"op": op, "algo": algo, "backend": "any", "traits": t} for (op, algo), t in self.algorithms.items()]
            rec["algorithms"] = listed
        rec.update(self.extra)
        return rec

    def end(self, points: int, exit_status: int = 0, wrong_points: int = 0, skipped_points: int = 0) -> dict[str, Any]:
        return {"type": "end", "schema": SCHEMA, "run_id": self.run_id,
                "end_time": "2026-11-22T07:45:00Z", "exit_status": exit_status, "points": points,
                "wrong_points": wrong_points, "skipped_points": skipped_points}


def result(ctx: RunCtx, op: str, algo: str, nbytes: int, p50: float | None, *,
           spread: float = 0.05, dtype: str = "float32", redop: str | None = "sum",
           in_place: bool = False, mode: str = "per_iter", skip_reason: str | None = None,
           wrong: int = 0, **extra: Any) -> dict[str, Any]:
    """One result record; ``p50=None`` makes a skipped point."""
    n = ctx.world_size
    facts = schema.ops()[op]
    rec: dict[str, Any] = {
        "type": "result", "schema": SCHEMA, "run_id": ctx.run_id, "op": op, "algo": algo,
        "backend": ctx.backend, "device": ctx.device, "dtype": dtype,
        "redop": redop if facts.reduces else None,
        "root": 0 if facts.rooted else None, "in_place": in_place, "bytes": nbytes,
        "count": nbytes // DTYPE_SIZE[dtype], "world_size": n, "nodes": ctx.nodes,
        "ranks_per_node": ctx.ranks_per_node, "iters": 20, "samples": 20, "warmup": 5, "mode": mode,
        "wrong": wrong, "checked": True, "skipped": p50 is None, "skip_reason": skip_reason,
    }
    if p50 is None:
        rec.update(time_us=None, algbw_GBps=None, busbw_GBps=None, samples=0, checked=False,
                   skip_reason=skip_reason or "NotSupported: world size not a power of two")
    else:
        s = spread
        rec["time_us"] = {"min": p50 * (1 - 1.5 * s), "p5": p50 * (1 - s), "p50": p50,
                          "mean": p50 * (1 + 0.2 * s), "p95": p50 * (1 + s), "p99": p50 * (1 + 2 * s),
                          "max": p50 * (1 + 3 * s), "stdev": p50 * s / 2}
        algbw = nbytes / p50 / 1e3 if p50 > 0 else 0.0
        rec["algbw_GBps"] = algbw
        rec["busbw_GBps"] = algbw * facts.busbw_factor(n)
    rec.update(extra)
    return rec


def with_samples(rec: dict[str, Any], samples: Sequence[float], n_ranks: int | None = None) -> dict[str, Any]:
    """The record with ``samples_us`` and every statistic collbench derives from them (type-7 percentiles)."""
    import numpy as np

    x = np.asarray(samples, dtype=float)
    q = np.percentile(x, [5, 50, 95, 99])
    out = dict(rec)
    out["samples_us"] = [round(float(v), 3) for v in x]
    out["samples"] = out["iters"] = len(x)
    out["time_us"] = {"min": float(x.min()), "p5": float(q[0]), "p50": float(q[1]), "mean": float(x.mean()),
                      "p95": float(q[2]), "p99": float(q[3]), "max": float(x.max()),
                      "stdev": float(x.std(ddof=1)) if len(x) > 1 else 0.0}
    n = n_ranks or rec["world_size"]
    algbw = rec["bytes"] / q[1] / 1e3 if q[1] > 0 else 0.0
    out["algbw_GBps"] = algbw
    out["busbw_GBps"] = algbw * schema.ops()[rec["op"]].busbw_factor(n)
    return out


def sizes_pow2(lo: int, hi: int, factor: int = 2) -> list[int]:
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= factor
    return out


def alpha_beta_sweep(ctx: RunCtx, op: str, models: dict[str, tuple[float, float]], sizes: Iterable[int],
                     jitter: float = 0.0, seed: int = 1, **kw: Any) -> list[dict[str, Any]]:
    """Points with p50 = α + nβ (times a deterministic jitter) for each algo."""
    rng = random.Random(seed)
    out = []
    for algo, (alpha, beta) in models.items():
        for n in sizes:
            t = (alpha + n * beta) * (1 + rng.uniform(-jitter, jitter))
            out.append(result(ctx, op, algo, n, t, **kw))
    return out


def pingpong_sweep(ctx: RunCtx, pairs: Sequence[tuple[int, int]], sizes: Iterable[int],
                   intra: tuple[float, float] = (0.3, 1 / 8e3), inter: tuple[float, float] = (15.0, 1 / 1.1e3),
                   seed: int = 2) -> list[dict[str, Any]]:
    """OSU-style latency/bw/bibw records for each pair; link from the run's node map."""
    rng = random.Random(seed)
    nor = ctx.node_of_rank
    out = []
    for src, dst in pairs:
        link = "intra" if nor[src] == nor[dst] else "inter"
        a, b = intra if link == "intra" else inter
        for mode in ("latency", "bw", "bibw"):
            for n in sizes:
                t = (a + n * b) * (1 + rng.uniform(-0.03, 0.03))
                if mode == "bw":
                    t = n * b + a / 16  # windowed: latency hidden behind the window
                if mode == "bibw":
                    t = (n * b + a / 16) / 1.8
                out.append(result(ctx, "pingpong", mode, n, t, redop=None, dtype="uint8",
                                  src=src, dst=dst, link=link))
    return out


def write_jsonl(path: Path, records: Iterable[dict[str, Any]], truncate_last: bool = False) -> Path:
    """Write records one per line; ``truncate_last`` cuts the final line mid-object."""
    lines = [json.dumps(r) for r in records]
    text = "\n".join(lines) + "\n"
    if truncate_last:
        text = "\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- demo data

def _collective_models(n: int, nodes: int) -> dict[str, dict[str, tuple[float, float]]]:
    """Plausible CPU-cluster α (µs) / β (µs/B) per (op, algo) for world size n."""
    inter = nodes > 1
    link_a = 15.0 if inter else 0.4
    link_b = 1 / (1.1e3 if inter else 6e3)
    steps_ring = 2 * (n - 1)
    lg = max(1, (n - 1).bit_length())
    return {
        "allreduce": {
            "library": (2 * lg * link_a * 0.9, 2 * (n - 1) / n * link_b * 1.05),
            "ring": (steps_ring * link_a, 2 * (n - 1) / n * link_b),
            "recursive_doubling": (lg * link_a, lg * link_b),
            "rabenseifner": (2 * lg * link_a, 2 * (n - 1) / n * link_b * 1.15),
            "naive": (2 * (n - 1) * link_a * 0.6, 2 * (n - 1) * link_b),
        },
        "broadcast": {
            "library": (lg * link_a, link_b * 1.3),
            "binomial": (lg * link_a, lg * link_b),
            "pipeline": ((n - 1) * link_a * 2, link_b * 1.1),
        },
        "allgather": {
            "library": (lg * link_a, (n - 1) / n * link_b * 1.1),
            "ring": ((n - 1) * link_a, (n - 1) / n * link_b),
        },
    }


def demo(outdir: Path) -> list[Path]:
    """A 3-layout sweep (1x4, 2x2, 4x1) with collectives and all-pairs pingpong."""
    files = []
    sizes = sizes_pow2(8, 64 << 20, 2)
    for k, (nodes, rpn) in enumerate(((1, 4), (2, 2), (4, 1), (2, 4))):
        ctx = RunCtx(f"run{k}", nodes, rpn)
        recs: list[dict[str, Any]] = [ctx.record()]
        for op, models in _collective_models(ctx.world_size, nodes).items():
            recs += alpha_beta_sweep(ctx, op, models, sizes, jitter=0.04, seed=k)
        n = ctx.world_size
        recs += pingpong_sweep(ctx, [(s, d) for s in range(n) for d in range(s + 1, n)], sizes_pow2(8, 4 << 20, 4))
        recs.append(result(ctx, "allreduce", "butterfly", 1024, None))
        recs.append(ctx.end(len(recs) - 1, skipped_points=1))
        files.append(write_jsonl(outdir / f"sweep_{nodes}x{rpn}.jsonl", recs))
    return files


if __name__ == "__main__":
    for f in demo(Path(sys.argv[1] if len(sys.argv) > 1 else "demo-results")):
        print(f)
