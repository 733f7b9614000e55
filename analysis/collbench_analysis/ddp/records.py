"""DDP records as read: ``workload`` records (collbench) and ``ddp_measured`` records (PyTorch's DDP).

``collbench --workload ddp --model M --algo A,B`` all-reduces every gradient bucket of a model
back to back per step and writes one ``"type": "workload"`` record per algorithm (fields:
docs/ddp.md "The analysis"). The loader in :mod:`.load` keeps these
records as read (``Dataset.workload_records``); :func:`workloads_of` parses them here, so
nothing in the collective analysis changes. bench/ddp_torch.py writes ``ddp_measured`` records
(PyTorch's own DDP step, ``Dataset.ddp_measured_records``); :func:`measured_of` parses them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from ..load import Dataset, LoadError, layout_name, load, per_node_of


# Fields that may differ between records of one model and then name the series beside the algorithm.
SERIES_FIELDS = ("backend", "device", "grad_dtype", "bucket_cap_mb", "first_bucket_cap_mb")
_REQUIRED = ("run_id", "algo", "model", "world_size", "nodes", "ranks_per_node", "buckets")


@dataclass(frozen=True)
class Bucket:
    """One gradient bucket, in the order it becomes ready in the backward pass."""

    index: int
    tensors: int
    count: int
    bytes: int
    first: str = ""
    last: str = ""


PROFILE_PREFIX = "profile:"


@dataclass(frozen=True)
class StepStats:
    """``step_us``: the whole step's sync time statistics (µs, max over ranks)."""

    p50: float
    min: float | None = None
    p5: float | None = None
    mean: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None
    stdev: float | None = None

    @property
    def lo(self) -> float:
        """Fast end of the spread band: p5, else min, else p50."""
        return next(v for v in (self.p5, self.min, self.p50) if v is not None)

    @property
    def hi(self) -> float:
        """Slow end of the spread band: p95, else max, else p50."""
        return next(v for v in (self.p95, self.max, self.p50) if v is not None)


@dataclass(frozen=True)
class Compute:
    """One device's forward/backward/optimizer per step (ms), from ``--compute-ms F,B,O`` or a profile.

    ``source`` is ``"--compute-ms"`` (also when the record has none) or ``"profile:PATH"``;
    ``bucket_backward_ms`` (per-layer profile only) is the backward time producing each
    bucket's gradients, one per bucket in gradient-ready order, summing to ``backward_ms``.
    """

    forward_ms: float
    backward_ms: float
    optimizer_ms: float
    source: str = "--compute-ms"
    bucket_backward_ms: tuple[float, ...] | None = None

    @property
    def profile(self) -> str | None:
        """The per-layer profile's path when compute came from one, else None."""
        return self.source[len(PROFILE_PREFIX):] if self.source.startswith(PROFILE_PREFIX) else None


@dataclass(frozen=True)
class Workload:
    """One ``workload`` record (one algorithm), joined with its run record's link declaration."""

    source: str
    run_id: str
    algo: str
    model: str
    world_size: int
    nodes: int
    ranks_per_node: int
    buckets: tuple[Bucket, ...]
    bucket_p50_us: tuple[float, ...]
    step: StepStats | None
    compute: Compute | None = None
    workload: str = "ddp"
    op: str = "allreduce"
    backend: str = "mpi"
    device: str = "cpu"
    model_source: str | None = None
    param_count: int | None = None
    param_tensors: int | None = None
    grad_dtype: str = "float32"
    redop: str | None = "sum"
    grad_bytes: int | None = None
    bucket_cap_mb: float | None = None
    first_bucket_cap_mb: float | None = None
    grad_order: str | None = None
    mode: str | None = None
    sync: str | None = None
    iters: int | None = None
    warmup: int | None = None
    checked: bool | None = None
    wrong: int = 0
    skipped: bool = False
    skip_reason: str | None = None
    inter_node_link: str | None = None  # from the run record; None: no run record or nothing declared
    online_cpus: int | None = None  # rank 0's node's online CPUs, from the run record; None: unknown
    per_node: tuple[int, ...] | None = None  # uneven layouts only, from the run record

    @property
    def layout(self) -> str:
        return layout_name(self.nodes, self.ranks_per_node, self.per_node)

    @property
    def bucket_bytes(self) -> list[int]:
        return [b.bytes for b in self.buckets]

    @property
    def total_bytes(self) -> int:
        return self.grad_bytes if self.grad_bytes is not None else sum(self.bucket_bytes)

    @property
    def measured(self) -> bool:
        """Timed and usable by the model: a step time and one bucket time per bucket."""
        return (not self.skipped and self.step is not None and len(self.buckets) > 0
                and len(self.bucket_p50_us) == len(self.buckets))


def _step_stats(raw: Mapping[str, Any] | None) -> StepStats | None:
    """``step_us`` as :class:`StepStats`; ``stddev`` (the workload contract) or ``stdev`` (result records) both read."""
    if raw is None:
        return None

    def get(key: str) -> float | None:
        v = raw.get(key)
        return None if v is None else float(v)

    return StepStats(p50=float(raw["p50"]), min=get("min"), p5=get("p5"), mean=get("mean"), p95=get("p95"),
                     p99=get("p99"), max=get("max"), stdev=get("stddev") if "stddev" in raw else get("stdev"))


def _compute(raw: Mapping[str, Any] | None) -> Compute | None:
    if raw is None:
        return None
    source = raw.get("source")
    per_bucket = raw.get("bucket_backward_ms")
    if per_bucket is not None and not isinstance(per_bucket, (list, tuple)):
        raise TypeError(f"compute.bucket_backward_ms is {type(per_bucket).__name__}, not a list")
    return Compute(float(raw["forward_ms"]), float(raw["backward_ms"]), float(raw["optimizer_ms"]),
                   "--compute-ms" if source is None else str(source),
                   None if per_bucket is None else tuple(float(v) for v in per_bucket))


def _check_profile(compute: Compute | None, n_buckets: int, where: str) -> None:
    """``compute.bucket_backward_ms``: one finite, non-negative value per bucket (a LoadError otherwise)."""
    if compute is None or compute.bucket_backward_ms is None:
        return
    values = compute.bucket_backward_ms
    if len(values) != n_buckets:
        raise LoadError(f"{where}: workload record: {len(values)} compute.bucket_backward_ms values for "
                        f"{n_buckets} buckets")
    for k, v in enumerate(values):
        if not math.isfinite(v) or v < 0:
            raise LoadError(f"{where}: workload record: compute.bucket_backward_ms[{k}] = {v!r} "
                            "(must be a finite number >= 0)")


def _int_or_none(v: Any) -> int | None:
    try:
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)
    except (TypeError, ValueError):
        return None


def parse_workload(rec: Mapping[str, Any], where: str, run: Mapping[str, Any] | None = None) -> Workload:
    """One workload record; a missing or malformed field is a :class:`LoadError` naming ``where``.

    The fields the model needs are checked here, not through the schema file, so the reader
    does not depend on every field of the record; the others are optional.
    """
    missing = [k for k in _REQUIRED if k not in rec]
    skipped = bool(rec.get("skipped", False))
    if not skipped:
        missing += [k for k in ("step_us", "bucket_p50_us") if rec.get(k) is None]
    if missing:
        raise LoadError(f"{where}: workload record: field {missing[0]!r} is missing")
    try:
        buckets = tuple(Bucket(int(b["index"]), int(b.get("tensors", 0)), int(b.get("count", 0)), int(b["bytes"]),
                               str(b.get("first", "")), str(b.get("last", ""))) for b in rec["buckets"])
        per_bucket = tuple(float(v) for v in (rec.get("bucket_p50_us") or ()))
        step = _step_stats(rec.get("step_us"))
        compute = _compute(rec.get("compute"))
    except (KeyError, TypeError, ValueError) as err:
        raise LoadError(f"{where}: workload record: malformed field ({err!r})") from None
    if not skipped and len(per_bucket) != len(buckets):
        raise LoadError(f"{where}: workload record: {len(per_bucket)} bucket_p50_us values for "
                        f"{len(buckets)} buckets")
    _check_profile(compute, len(buckets), where)
    same_world = run is not None and run.get("world_size") == rec["world_size"]
    optional = {k: rec[k] for k in ("workload", "op", "backend", "device", "model_source", "param_count",
                                    "param_tensors", "grad_dtype", "redop", "grad_bytes", "bucket_cap_mb",
                                    "first_bucket_cap_mb", "grad_order", "mode", "sync", "iters", "warmup",
                                    "checked", "skip_reason") if k in rec}
    return Workload(
        source=where, run_id=str(rec["run_id"]), algo=str(rec["algo"]), model=str(rec["model"]),
        world_size=int(rec["world_size"]), nodes=int(rec["nodes"]), ranks_per_node=int(rec["ranks_per_node"]),
        buckets=buckets, bucket_p50_us=per_bucket, step=step, compute=compute,
        wrong=int(rec.get("wrong") or 0), skipped=skipped,
        inter_node_link=run.get("inter_node_link") if run is not None else None,
        online_cpus=_int_or_none(run.get("online_cpus")) if run is not None else None,
        per_node=per_node_of(run.get("node_of_rank")) if same_world else None, **optional)


def workloads_of(ds: Dataset) -> list[Workload]:
    """The workload records :func:`.load.load` collected (``ds.workload_records``), in file order,
    each joined by ``run_id`` with its run (``ds.runs``: ``inter_node_link``, uneven layouts)."""
    runs = ds.runs.to_dict("index")
    return [parse_workload(rec, where, runs.get(str(rec.get("run_id")))) for where, rec in ds.workload_records]


def load_workloads(paths: Iterable[str | Path]) -> list[Workload]:
    """:func:`workloads_of` the inputs (files or folders; read and checked by :func:`.load.load`)."""
    return workloads_of(load(list(paths)))


IDENTITY = ("model", "layout", "algo", *SERIES_FIELDS)


def frame(workloads: Iterable[Workload]) -> pd.DataFrame:
    """One row per workload record: its identity columns, world size, nodes, and the record (``record``)."""
    ws = list(workloads)
    cols = {c: [getattr(w, c) for w in ws] for c in (*IDENTITY, "world_size", "nodes")}
    return pd.DataFrame({**cols, "record": ws}, columns=[*cols, "record"])


def latest(workloads: Iterable[Workload]) -> list[Workload]:
    """Keep the last-loaded record per identity (model, layout, algorithm, series fields): a re-run supersedes."""
    return frame(workloads).drop_duplicates(list(IDENTITY), keep="last")["record"].tolist()


def by_model(workloads: Iterable[Workload]) -> list[tuple[str, list[Workload]]]:
    """The records grouped by model, models in first-seen order."""
    return [(model, g["record"].tolist()) for model, g in frame(workloads).groupby("model", sort=False)]


@dataclass(frozen=True)
class Measured:
    """One ``ddp_measured`` record (bench/ddp_torch.py): PyTorch's own DDP step, one repetition (ms, p50s)."""

    source: str
    model: str
    world_size: int
    nodes: int
    ranks_per_node: int
    backend: str
    device: str
    threads_per_rank: int
    bucket_cap_mb: float
    step_ms: float
    step_p5_ms: float
    step_p95_ms: float
    noop_hook_ms: float
    no_sync_ms: float
    single_ms: float
    online_cpus: int
    cpu_model: str | None
    torch: str
    start_time: str
    run_ids: tuple[str, ...] = ()

    @property
    def layout(self) -> str:
        return layout_name(self.nodes, self.ranks_per_node)

    @property
    def speedup(self) -> float:
        return self.single_ms / self.step_ms if self.step_ms > 0 else math.nan


def parse_measured(rec: Mapping[str, Any], where: str) -> Measured:
    """A ``ddp_measured`` record (schema-checked by the loader); a malformed one is a :class:`LoadError`."""
    try:
        return Measured(
            source=where, model=str(rec["model"]), world_size=int(rec["world_size"]), nodes=int(rec["nodes"]),
            ranks_per_node=int(rec["ranks_per_node"]), backend=str(rec["backend"]), device=str(rec["device"]),
            threads_per_rank=int(rec["threads_per_rank"]), bucket_cap_mb=float(rec["bucket_cap_mb"]),
            step_ms=float(rec["step_ms"]["p50"]), step_p5_ms=float(rec["step_ms"]["p5"]),
            step_p95_ms=float(rec["step_ms"]["p95"]), noop_hook_ms=float(rec["noop_hook_step_ms"]["p50"]),
            no_sync_ms=float(rec["no_sync_step_ms"]["p50"]), single_ms=float(rec["single_step_ms"]["p50"]),
            online_cpus=int(rec["online_cpus"]), cpu_model=rec.get("cpu_model"), torch=str(rec["torch"]),
            start_time=str(rec["start_time"]), run_ids=tuple(str(r) for r in rec.get("collbench_run_ids", ())))
    except (KeyError, TypeError, ValueError) as err:
        raise LoadError(f"{where}: ddp_measured record: malformed field ({err!r})") from None


def measured_of(ds: Dataset) -> list[Measured]:
    """The ``ddp_measured`` records :func:`.load.load` collected, in file order."""
    return [parse_measured(rec, where) for where, rec in ds.ddp_measured_records]
