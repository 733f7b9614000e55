"""DDP gradient synchronisation: ``workload`` records, the overlap model, figures and tables.

``collbench --workload ddp --model M --algo A,B`` all-reduces every gradient bucket of a model
back to back per step and writes one ``"type": "workload"`` record per algorithm (fields:
docs/ddp.md "The analysis"). The loader in :mod:`.load` keeps these
records as read (``Dataset.workload_records``); :func:`workloads_of` parses them here, so
nothing in the collective analysis changes.

Overlap model (the same text is in docs/ddp.md). It turns *measured* per-bucket
all-reduce times into a *modelled* training step; every number it gives is a model from
measured communication times, never a measurement:

- Backward produces gradients in bucket order; bucket k is ready when the backward pass has
  produced the gradients of buckets 0..k. With a per-layer profile (``--compute-profile FILE``;
  ``compute.source`` = ``"profile:PATH"``) the record carries ``compute.bucket_backward_ms``,
  the backward time that produces each bucket's gradients, and the ready times come from it:
  ready_k = 1000 · sum(bucket_backward_ms[0..k]) µs (its sum is B within rounding). With
  ``--compute-ms F,B,O`` only (no ``bucket_backward_ms``), backward time B is spread over the
  buckets in proportion to their bytes: ready_k = B · cumsum(bytes)[k] / total_bytes.
- All-reduces run one at a time, in bucket order, on one communication stream:
  start_k = max(ready_k, end_{k-1}), end_k = start_k + bucket_p50_us[k].
- Overlap share φ: a CPU rank's all-reduce needs a core of its own (Gloo's worker thread or MPI's
  progress does the copies and the reductions). The node's free cores are
  free = online_cpus − ranks_per_node · threads (threads: compute threads per rank, 1 — collmodel
  profiles with one and the bench runs DDP so), and φ = clamp(free / ranks_per_node, 0, 1), with
  ``online_cpus`` from the run record (rank 0's node). φ = 1 on a device (cuda: compute runs
  elsewhere) and where the run record has no ``online_cpus``.
- Exposed communication = φ · max(0, end_last − B) + (1 − φ) · sync, sync = the sum of the
  bucket times: without a free core the all-reduces take turns with backward on the same cores,
  so none of the sync hides. With φ = 1 the last bucket is ready when backward ends (with a
  profile: within its rounding), so its whole all-reduce is always exposed.
- DDP's bucket copies (with a collmodel profile only, ``compute.source`` = ``"profile:…"``):
  PyTorch 1.13's DDP (``gradient_as_bucket_view=False``) copies each gradient into its bucket
  during backward and back after the all-reduce, 4 passes over the gradient bytes; the profile's
  optimizer, SGD with momentum, makes 8 passes over the same bytes, so copies = O · 4/8. With
  ``--compute-ms`` the optimizer is unknown and copies = 0.
- Step = F + B + copies + exposed + O (with φ = 1 and no copies: F + max(B, end_last) + O).
- Without compute (no ``--compute-ms``) nothing can overlap: exposed = the sum of the bucket
  times (buckets back to back from t = 0), and no step time or speed-up is given.
- Projected speed-up over one device for the same global batch (strong scaling of the
  data-parallel step): one device runs the global batch as n micro-batches without DDP,
  T1 = n·(F + B) + O; n ranks take Tn = the step above; speed-up = T1 / Tn,
  efficiency = speed-up / n.

What the model leaves out (ranks sharing the node's memory bandwidth, DDP's buffer broadcast and
bookkeeping, the waiting part of an all-reduce that could overlap even without a free core) is
measured against PyTorch's own DDP: ``ddp_measured`` records (bench/ddp_torch.py), compared by
:func:`measured_tables`.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import matplotlib
import pandas as pd

matplotlib.use("Agg")
from matplotlib import rc_context  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from .load import (  # noqa: E402
    LIBRARY_ALGO, Dataset, LoadError, layout_name, layout_sort_key, link_note, load, per_node_of,
)
from .plots import DPI, STYLE, FigureInfo, Style, add_footnote  # noqa: E402
from .tables import Table, fmt_num  # noqa: E402

SECTION = "DDP gradient synchronisation"
MODEL_LABEL = "model from measured communication times"
TIMELINE_LABEL = "model built on measured communication times"
MIB = 1 << 20
# Fields that may differ between records of one model and then name the series beside the algorithm.
_SERIES_FIELDS = ("backend", "device", "grad_dtype", "bucket_cap_mb", "first_bucket_cap_mb")
_REQUIRED = ("run_id", "algo", "model", "world_size", "nodes", "ranks_per_node", "buckets")


# --------------------------------------------------------------------------- records

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


IDENTITY = ("model", "layout", "algo", *_SERIES_FIELDS)


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


# --------------------------------------------------------------------------- overlap model

def ready_times_us(bucket_bytes: Sequence[int], backward_us: float) -> list[float]:
    """When each bucket's gradients exist: backward spread over buckets in proportion to bytes.

    The last bucket is ready exactly at ``backward_us``. Buckets of zero bytes in total (no
    size known) fall back to an even spread by bucket count.
    """
    n = len(bucket_bytes)
    total = float(sum(bucket_bytes))
    ready: list[float] = []
    acc = 0.0
    for k, b in enumerate(bucket_bytes):
        acc += b
        ready.append(backward_us * (acc / total if total > 0 else (k + 1) / n))
    return ready


def profile_ready_times_us(bucket_backward_ms: Sequence[float]) -> list[float]:
    """When each bucket's gradients exist, from a per-layer profile: 1000 · sum(bucket_backward_ms[0..k])."""
    ready: list[float] = []
    acc = 0.0
    for ms in bucket_backward_ms:
        acc += ms
        ready.append(acc * 1e3)
    return ready


def schedule_us(ready_us: Sequence[float], bucket_us: Sequence[float]) -> tuple[list[float], list[float]]:
    """One communication stream, bucket order: start_k = max(ready_k, end_{k-1}), end_k = start_k + t_k."""
    starts: list[float] = []
    ends: list[float] = []
    prev_end = 0.0
    for ready, t in zip(ready_us, bucket_us):
        start = max(ready, prev_end)
        starts.append(start)
        ends.append(start + t)
        prev_end = start + t
    return starts, ends


@dataclass(frozen=True)
class Overlap:
    """The modelled step of one workload record (µs, time 0 = start of backward).

    A model from measured communication times, not a measurement.
    """

    bucket_us: tuple[float, ...]
    ready_us: tuple[float, ...]
    start_us: tuple[float, ...]
    end_us: tuple[float, ...]
    compute: Compute | None
    share: float = 1.0  # overlap share φ: 1 = a free core per rank for communication, 0 = none
    copy_us: float = 0.0  # DDP's bucket copies (serial with compute)

    @property
    def backward_us(self) -> float:
        return self.compute.backward_ms * 1e3 if self.compute else 0.0

    @property
    def sync_us(self) -> float:
        """Sum of the bucket times: the sync with nothing overlapped."""
        return sum(self.bucket_us)

    @property
    def comm_end_us(self) -> float:
        return self.end_us[-1] if self.end_us else 0.0

    @property
    def overlapped_exposed_us(self) -> float:
        """What the one-stream schedule leaves after backward: max(0, end_last − B) (all of it without compute)."""
        return max(0.0, self.comm_end_us - self.backward_us)

    @property
    def exposed_us(self) -> float:
        """φ · max(0, end_last − B) + (1 − φ) · sync: with no free core the sync cannot overlap compute."""
        if self.compute is None:
            return self.sync_us
        return self.share * self.overlapped_exposed_us + (1.0 - self.share) * self.sync_us

    def exposed_part_us(self, k: int) -> float:
        """How much of bucket k's all-reduce lies after backward ends (the hatched part of the timeline)."""
        return max(0.0, self.end_us[k] - max(self.start_us[k], self.backward_us))

    @property
    def step_us(self) -> float | None:
        """F + B + copies + exposed + O; None without compute (with φ = 1 and no copies: F + max(B, end_last) + O)."""
        if self.compute is None:
            return None
        c = self.compute
        return (c.forward_ms + c.optimizer_ms) * 1e3 + self.backward_us + self.copy_us + self.exposed_us


# Compute threads per rank: collmodel profiles with torch.set_num_threads(1), and the bench runs
# DDP so; a record does not say otherwise.
COMPUTE_THREADS = 1
# Passes over the gradients' bytes (a pass: one read or one write of every byte). DDP (1.13,
# gradient_as_bucket_view=False) copies each gradient into its bucket during backward and back
# after the all-reduce: 2 reads + 2 writes. collmodel's profile optimizer, SGD with momentum
# (torch 1.13's per-tensor path): buf.mul_ (1 read, 1 write), buf.add_(grad) (2 reads, 1 write),
# param.add_(buf) (2 reads, 1 write).
DDP_COPY_PASSES = 4
SGD_MOMENTUM_PASSES = 8


def overlap_share(device: str, online_cpus: int | None, ranks_per_node: int,
                  threads: int = COMPUTE_THREADS) -> float:
    """φ, the share of the sync that can overlap compute: the free cores per rank, capped at 1.

    A CPU rank's all-reduce needs a core of its own (Gloo's or MPI's progress, the reductions, the
    copies); the cores the node's ranks do not compute on are free = online_cpus − ranks_per_node ·
    threads, and φ = clamp(free / ranks_per_node, 0, 1). Devices (cuda) compute elsewhere: φ = 1;
    so is an unknown CPU count (records without ``online_cpus``).
    """
    if device != "cpu" or online_cpus is None or ranks_per_node <= 0:
        return 1.0
    free = online_cpus - ranks_per_node * threads
    return min(1.0, max(0.0, free / ranks_per_node))


def copy_us(compute: Compute | None) -> float:
    """DDP's bucket copies: DDP_COPY_PASSES over the gradients at the streaming rate of the profile's
    optimizer (SGD_MOMENTUM_PASSES over the same bytes): O · 4/8. Only for a collmodel profile (its
    optimizer is known); 0 with --compute-ms (an unknown optimizer) or without compute."""
    if compute is None or compute.profile is None:
        return 0.0
    return compute.optimizer_ms * 1e3 * DDP_COPY_PASSES / SGD_MOMENTUM_PASSES


def overlap(bucket_bytes: Sequence[int], bucket_us: Sequence[float], compute: Compute | None,
            share: float = 1.0) -> Overlap:
    """The overlap model (module docstring): ready, start and end time of every bucket.

    Ready times come from ``compute.bucket_backward_ms`` when the record has a per-layer
    profile, else from spreading backward over the buckets by bytes. Without compute every
    bucket is ready at 0, so the all-reduces run back to back and the exposed time is their
    sum (no overlap).
    """
    if len(bucket_bytes) != len(bucket_us):
        raise ValueError(f"{len(bucket_us)} bucket times for {len(bucket_bytes)} buckets")
    if compute is None:
        ready = [0.0] * len(bucket_us)
    elif compute.bucket_backward_ms is not None:
        if len(compute.bucket_backward_ms) != len(bucket_us):
            raise ValueError(f"{len(compute.bucket_backward_ms)} bucket_backward_ms values for "
                             f"{len(bucket_us)} buckets")
        ready = profile_ready_times_us(compute.bucket_backward_ms)
    else:
        ready = ready_times_us(bucket_bytes, compute.backward_ms * 1e3)
    starts, ends = schedule_us(ready, bucket_us)
    return Overlap(tuple(float(t) for t in bucket_us), tuple(ready), tuple(starts), tuple(ends), compute,
                   share, copy_us(compute))


def workload_overlap(w: Workload) -> Overlap:
    return overlap(w.bucket_bytes, w.bucket_p50_us, w.compute,
                   overlap_share(w.device, w.online_cpus, w.ranks_per_node))


@dataclass(frozen=True)
class Projection:
    """Projected strong scaling of the data-parallel step (ms): a model from measured communication times."""

    world_size: int
    t1_ms: float
    tn_ms: float

    @property
    def speedup(self) -> float:
        return self.t1_ms / self.tn_ms if self.tn_ms > 0 else math.nan

    @property
    def efficiency(self) -> float:
        return self.speedup / self.world_size if self.world_size > 0 else math.nan


def project(world_size: int, compute: Compute, exposed_ms: float, copy_ms: float = 0.0) -> Projection:
    """T1 = n·(F + B) + O (one device, the global batch as n micro-batches, no DDP);
    Tn = F + B + copies + exposed + O, the modelled step."""
    f, b, o = compute.forward_ms, compute.backward_ms, compute.optimizer_ms
    return Projection(world_size, world_size * (f + b) + o, f + b + copy_ms + exposed_ms + o)


def workload_projection(w: Workload) -> Projection | None:
    if w.compute is None or not w.measured:
        return None
    ov = workload_overlap(w)
    return project(w.world_size, w.compute, ov.exposed_us / 1e3, ov.copy_us / 1e3)


# --------------------------------------------------------------------------- naming

def varying(workloads: Sequence[Workload]) -> list[str]:
    """Series fields that differ within ``workloads`` (they then appear in the series name)."""
    f = frame(workloads)
    return [c for c in _SERIES_FIELDS if f[c].nunique(dropna=False) > 1]


def series_name(w: Workload, fields: Sequence[str]) -> str:
    """``ring`` or, where backends/dtypes/bucket caps vary, ``ring (nccl, cap 25 MB)``."""
    extra = []
    for f in fields:
        v = getattr(w, f)
        extra.append(f"cap {v:g} MB" if f == "bucket_cap_mb" and v is not None
                     else f"first {v:g} MB" if f == "first_bucket_cap_mb" and v is not None else str(v))
    return w.algo + (f" ({', '.join(extra)})" if extra else "")


def _series_order(name_algo: tuple[str, str]) -> tuple[bool, str]:
    return (name_algo[1] != LIBRARY_ALGO, name_algo[0])


def workload_links(workloads: Iterable[Workload]) -> list[str | None]:
    """Distinct ``inter_node_link`` values of the multi-node records (declared sorted, None last)."""
    found = {w.inter_node_link for w in workloads if w.nodes > 1}
    return sorted(v for v in found if v is not None) + ([None] if None in found else [])


def workload_note(workloads: Iterable[Workload]) -> str:
    """The figure/table footnote: the declared inter-node link, as collective figures carry it."""
    return link_note(workload_links(workloads))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)


def _style(workloads: Iterable[Workload]) -> Style:
    """The collective figures' colours per algorithm (:mod:`.palette`: the same in every figure)."""
    return Style()


def compute_note(workloads: Iterable[Workload]) -> str:
    """Where compute came from: ``compute from --compute-ms`` and/or ``compute: per-layer profile PATH``."""
    computes = [w.compute for w in workloads if w.compute is not None]
    profiles = sorted({c.profile for c in computes if c.profile is not None})
    parts = ["compute from --compute-ms"] if not profiles or any(c.profile is None for c in computes) else []
    if profiles:
        parts.append(f"compute: per-layer profile{'s' * (len(profiles) > 1)} {', '.join(profiles)}")
    return "; ".join(parts)


def model_summary(ws: Sequence[Workload]) -> str:
    """``resnet50: 25.6 M parameters in 161 tensors, 97.5 MiB float32 gradients`` (from the first record)."""
    w = ws[0]
    parts = []
    if w.param_count is not None:
        parts.append(f"{w.param_count / 1e6:.3g} M parameters" +
                     (f" in {w.param_tensors} tensors" if w.param_tensors is not None else ""))
    parts.append(f"{w.total_bytes / MIB:.4g} MiB {w.grad_dtype} gradients")
    return f"{w.model}: " + ", ".join(parts)


# --------------------------------------------------------------------------- figures

def _save(fig: Figure, outdir: Path, name: str) -> str:
    fig.savefig(outdir / name, dpi=DPI)
    return name


def plot_sync(model: str, ws: Sequence[Workload], style: Style, outdir: Path) -> FigureInfo:
    """(a) Step sync time per algorithm, grouped by layout: p50 bars, p5–p95 error bars."""
    fields = varying(ws)
    layouts = sorted({w.layout for w in ws}, key=layout_sort_key)
    series = sorted({(series_name(w, fields), w.algo) for w in ws}, key=_series_order)
    by_key = {(w.layout, series_name(w, fields)): w for w in ws}
    fig = Figure(figsize=(max(7.0, 1.2 + 0.5 * len(layouts) * len(series)), 5.0), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    for i, (name, algo) in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for j, lay in enumerate(layouts):
            w = by_key.get((lay, name))
            if w is None or w.step is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(w.step.p50 / 1e3)
            lo.append((w.step.p50 - w.step.lo) / 1e3)
            hi.append((w.step.hi - w.step.p50) / 1e3)
        ax.bar(xs, ys, width * 0.92, yerr=[lo, hi], capsize=3, label=name,
               color=style.color(algo), edgecolor="white", linewidth=0.5, zorder=2)
    world = {w.layout: w.world_size for w in ws}
    ax.set_xticks(range(len(layouts)))
    ax.set_xticklabels([f"{lay}\n{world[lay]} ranks" for lay in layouts])
    ax.set_xlim(-0.6, len(layouts) - 0.4)
    ax.grid(axis="x", which="both", visible=False)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("Layout (nodes × ranks per node)")
    ax.set_ylabel("Gradient sync per step, p50 (ms)")
    width = int(fig.get_figwidth() * 9)  # ≈ title characters per inch at 12 pt bold
    ax.set_title(textwrap.fill(f"DDP gradient sync per step — {model_summary(ws)}, {len(ws[0].buckets)} buckets",
                               width))
    ax.legend(title="algorithm (error bars: p5–p95)", loc="best")
    note = workload_note(ws)
    add_footnote(fig, note)
    name = _save(fig, outdir, f"ddp_sync_{_slug(model)}.png")
    return FigureInfo(SECTION, name, f"{model}: measured sync time of one DDP step (every gradient bucket "
                      "all-reduced back to back, max over ranks) per algorithm and layout, p50 with p5–p95 "
                      "error bars. Read: the shortest bar in a layout is the algorithm that syncs the gradients "
                      "fastest there.", note)


def _bar(ax: Axes, row: float, start: float, length: float, **kw: Any) -> None:
    ax.broken_barh([(start, length)], (row - 0.35, 0.7), **kw)


def plot_timeline(w: Workload, name: str, outdir: Path) -> FigureInfo:
    """(b) One modelled step: compute row (F, B, O) and each bucket's all-reduce on a comm row.

    Times in ms from the start of forward. The part of the communication after backward ends
    (exposed) is hatched; without compute only the comm row is drawn, all of it exposed.
    """
    ov = workload_overlap(w)
    c = w.compute
    f_ms = c.forward_ms if c else 0.0
    b_ms = ov.backward_us / 1e3
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    ax = fig.subplots()
    comm_row, compute_row = 0.0, 1.0
    colors = ("#4c72b0", "#8fb0dc")
    serial = c is not None and ov.share == 0.0  # no free core: the all-reduces after backward, back to back
    after = f_ms + (ov.backward_us + ov.copy_us) / 1e3
    for k in range(len(ov.bucket_us)):
        if serial:
            s = after + sum(ov.bucket_us[:k]) / 1e3
            e = s + ov.bucket_us[k] / 1e3
        else:
            s, e = f_ms + ov.start_us[k] / 1e3, f_ms + ov.end_us[k] / 1e3
        _bar(ax, comm_row, s, e - s, facecolors=colors[k % 2], edgecolor="white", linewidth=0.4)
        part = (e - s) if serial else ov.exposed_part_us(k) / 1e3
        if part > 0:
            _bar(ax, comm_row, e - part, part, facecolors="none", edgecolor="#c44e52", hatch="///", linewidth=0.6)
        if len(ov.bucket_us) <= 16 and e - s > 0:
            ax.text((s + e) / 2, comm_row, str(k), ha="center", va="center", fontsize=7, color="white")
    handles = [Patch(facecolor=colors[0], label="bucket all-reduce (measured p50)"),
               Patch(facecolor="none", edgecolor="#c44e52", hatch="///", label="exposed (after backward)")]
    end_ms = f_ms + ov.comm_end_us / 1e3
    if c is not None:
        _bar(ax, compute_row, 0.0, f_ms, facecolors="#55a868")
        _bar(ax, compute_row, f_ms, b_ms, facecolors="#dd8452")
        # After backward: DDP's copies and the exposed sync (the schedule's tail scaled by φ, plus
        # (1 − φ) of the sync: what cannot overlap without a free core).
        wait = (ov.copy_us + ov.exposed_us) / 1e3
        if wait > 0:
            _bar(ax, compute_row, f_ms + b_ms, wait, facecolors="#eeeeee", edgecolor="#c44e52", hatch="///",
                 linewidth=0.6)
        _bar(ax, compute_row, f_ms + b_ms + wait, c.optimizer_ms, facecolors="#8172b3")
        ax.plot([f_ms + r / 1e3 for r in ov.ready_us], [compute_row - 0.42] * len(ov.ready_us), "|",
                color="#333333", markersize=6)
        end_ms = f_ms + b_ms + wait + c.optimizer_ms
        ax.axvline(f_ms + b_ms, color="#333333", linestyle=":", linewidth=1)
        handles = [Patch(facecolor="#55a868", label="forward"), Patch(facecolor="#dd8452", label="backward"),
                   Patch(facecolor="#8172b3", label="optimizer"), *handles]
        ax.set_yticks([comm_row, compute_row], ["all-reduce", "compute"])
        detail = (f"exposed {fmt_num(ov.exposed_us / 1e3)} ms of {fmt_num(ov.sync_us / 1e3)} ms sync"
                  + (f" (overlap share φ = {ov.share:.2g})" if ov.share < 1 else "")
                  + (f", DDP copies {fmt_num(ov.copy_us / 1e3)} ms" if ov.copy_us > 0 else "")
                  + f", step {fmt_num(ov.step_us / 1e3)} ms")  # type: ignore[operator]
    else:
        ax.set_yticks([comm_row], ["all-reduce"])
        detail = f"no --compute-ms: nothing overlaps, exposed = all {fmt_num(ov.sync_us / 1e3)} ms"
    ax.set_xlim(0, end_ms * 1.02 if end_ms > 0 else 1)
    ax.set_ylim(-0.6, (compute_row if c else comm_row) + 0.6)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("Time in one training step (ms)" + (" (ticks: bucket ready)" if c else ""))
    ax.set_title(f"DDP step timeline — {TIMELINE_LABEL}\n" + textwrap.fill(
        f"{w.model}, {w.layout} ({w.world_size} ranks), {name}: {detail}", 95), fontsize=11)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)
    note = workload_note([w])
    profile = c.profile if c is not None else None
    profile_note = f"compute: per-layer profile {profile}, bucket ready times from it" if profile else ""
    add_footnote(fig, "; ".join(n.rstrip(".") for n in (note, profile_note) if n))
    fname = _save(fig, outdir, f"ddp_timeline_{_slug(w.model)}_{w.layout}_{_slug(name)}.png")
    how = profile_note if profile else "compute from --compute-ms spread over buckets by bytes"
    cap = (f"{w.model}, {w.layout}, {name}: one DDP step, {TIMELINE_LABEL} (bucket p50 all-reduce times, "
           f"{how}). Read: the hatched part is communication left after backward ends, the time the "
           "step loses to the sync." if c else
           f"{w.model}, {w.layout}, {name}: bucket all-reduces back to back ({TIMELINE_LABEL}). Read: without "
           "--compute-ms nothing overlaps, so the whole row is exposed sync time.")
    if serial:
        cap += (f" No free core (overlap share φ = 0: {w.online_cpus} online CPUs, {w.ranks_per_node} ranks per node): "
                "the all-reduces are drawn after backward and DDP's copies, none of them hidden.")
    return FigureInfo(SECTION, fname, cap, note)


_NODE_LINESTYLES = ("-", ":", "-.", (0, (6, 2, 1, 2)))


def plot_speedup(model: str, ws: Sequence[Workload], style: Style, outdir: Path) -> FigureInfo | None:
    """(c) Projected speed-up vs world size, one line per algorithm, ideal y = x dashed (compute only).

    One line per (algorithm, node count): 1x4 and 2x2 share a world size, and a line joining
    them would suggest a trend along n that is really a change of layout. Colour = algorithm,
    line style = node count.
    """
    fields = varying(ws)
    with_compute = [w for w in ws if w.compute is not None and w.measured]
    if not with_compute:
        return None
    fig = Figure(figsize=(8.0, 5.0), layout="constrained")
    ax = fig.subplots()
    node_counts = sorted({w.nodes for w in with_compute})
    dash = {n: _NODE_LINESTYLES[i % len(_NODE_LINESTYLES)] for i, n in enumerate(node_counts)}
    top = 1
    labelled: set[str] = set()
    lines = frame(with_compute).assign(name=[series_name(w, fields) for w in with_compute])
    for (name, algo, nodes), g in sorted(lines.groupby(["name", "algo", "nodes"], sort=False),
                                         key=lambda kv: (*_series_order(kv[0][:2]), kv[0][2])):
        grp = sorted(g["record"], key=lambda w: layout_sort_key(w.layout))
        xs = [w.world_size for w in grp]
        ys = [workload_projection(w).speedup for w in grp]  # type: ignore[union-attr]
        kw = style.kw(algo, "")
        ax.plot(xs, ys, label=None if name in labelled else name, color=kw["color"], marker=kw["marker"],
                linewidth=kw["linewidth"], linestyle=dash[nodes])
        labelled.add(name)
        top = max(top, *xs)
    ax.plot([1, top], [1, top], linestyle="--", color="#888888", linewidth=1.2, label="ideal (speed-up = n)")
    if len(node_counts) > 1:
        for n in node_counts:
            ax.plot([], [], color="#555555", linestyle=dash[n], label=f"{n} node{'s' * (n > 1)}")
    ax.set_xlim(0.5, top + 0.5)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("World size n (ranks)")
    ax.set_ylabel("Projected speed-up over one device")
    ax.set_title(f"DDP projected speed-up: {model}\n{MODEL_LABEL}, not a measurement")
    ax.legend(title="algorithm" + (", nodes" if len(node_counts) > 1 else ""), loc="upper left")
    note = workload_note(with_compute)
    add_footnote(fig, note)
    name = _save(fig, outdir, f"ddp_speedup_{_slug(model)}.png")
    computes = sorted({(w.compute.forward_ms, w.compute.backward_ms, w.compute.optimizer_ms)  # type: ignore[union-attr]
                       for w in with_compute})
    cs = "; ".join(f"F={fmt_num(f)}, B={fmt_num(b)}, O={fmt_num(o)} ms" for f, b, o in computes)
    return FigureInfo(SECTION, name, f"{model}: projected speed-up over one device for the same global batch, "
                      f"T1/Tn with T1 = n·(F+B)+O and Tn = the modelled step, F+B+copies+exposed sync+O (overlap share φ; docs/ddp.md) ({cs}) — "
                      f"{MODEL_LABEL}, not a measurement; one line per algorithm and node count. Read: the closer a "
                      "line stays to the dashed ideal, the less the gradient sync limits scaling.",
                      note)


def timeline_choice(ws: Sequence[Workload]) -> Workload:
    """The record whose step the timeline shows: the largest layout, its fastest algorithm.

    Fastest by modelled step when compute is given, else by step sync p50; the largest layout
    is where communication matters most.
    """
    big = max((w.layout for w in ws), key=layout_sort_key)
    cands = [w for w in ws if w.layout == big]

    def cost(w: Workload) -> float:
        ov = workload_overlap(w)
        return ov.step_us if ov.step_us is not None else w.step.p50  # type: ignore[union-attr]

    return min(cands, key=lambda w: (cost(w), w.algo))


def make_figures(workloads: Sequence[Workload], outdir: Path) -> list[FigureInfo]:
    """Per model: sync bars, one step timeline, and the speed-up projection (when compute is known)."""
    ws = [w for w in latest(workloads) if w.measured]
    if not ws:
        return []
    outdir.mkdir(parents=True, exist_ok=True)
    style = _style(ws)
    figs: list[FigureInfo] = []
    with rc_context(STYLE):
        for model, grp in by_model(ws):
            figs.append(plot_sync(model, grp, style, outdir))
            chosen = timeline_choice(grp)
            figs.append(plot_timeline(chosen, series_name(chosen, varying(grp)), outdir))
            info = plot_speedup(model, grp, style, outdir)
            figs += [info] if info else []
    return figs


# --------------------------------------------------------------------------- tables

def _ms(us: float | None) -> str:
    return fmt_num(us / 1e3) if us is not None else "—"


def tables(workloads: Sequence[Workload]) -> list[Table]:
    """One table per model: layout, algorithm, buckets, grad MiB, step sync p50/p95, and the model columns.

    The exposed / projected / speed-up / efficiency columns are filled only where the record
    carries compute, and dropped when none does.
    """
    out: list[Table] = []
    for model, grp in by_model(latest(workloads)):
        fields = varying(grp)
        note = (f"{model_summary(grp)}. Step sync: every bucket all-reduced back to back, max over ranks, "
                "measured. Exposed comm, projected step, speed-up and efficiency: "
                f"{MODEL_LABEL} (overlap model, docs/ddp.md), not measurements; {compute_note(grp)}.")
        link = workload_note(grp)
        rows, classes = [], []
        for w in sorted(grp, key=lambda w: (layout_sort_key(w.layout), _series_order((series_name(w, fields), w.algo)))):
            flags = []
            if w.wrong > 0:
                flags.append(f"WRONG RESULTS ({w.wrong})")
            if w.skipped:
                flags.append(f"skipped: {w.skip_reason or 'no reason given'}")
            row = [w.layout, series_name(w, fields), str(len(w.buckets)), f"{w.total_bytes / MIB:.4g}"]
            if w.measured:
                ov = workload_overlap(w)
                proj = workload_projection(w)
                row += [_ms(w.step.p50), _ms(w.step.p95 if w.step.p95 is not None else w.step.hi)]  # type: ignore[union-attr]
                row += ([_ms(ov.exposed_us), _ms(ov.step_us), f"{proj.speedup:.3g}×", f"{proj.efficiency:.0%}"]
                        if proj is not None else ["—"] * 4)
            else:
                row += ["—"] * 6
            rows.append(row + ["; ".join(flags) or "—"])
            classes.append("bad" if w.wrong > 0 else "")
        t = Table.of(f"DDP gradient synchronisation: {model}",
                     ["layout", "algorithm", "buckets", "grad MiB", "step sync p50 (ms)", "step sync p95 (ms)",
                      "exposed comm (ms)", "projected step (ms)", "speed-up", "efficiency", "note"], rows,
                     align="llrrrrrrrrl", note=note + (f" {link}." if link else ""), row_classes=classes)
        for header in ("exposed comm (ms)", "projected step (ms)", "speed-up", "efficiency", "note"):
            t.drop_blank_column(header)
        out.append(t)
    return out


def answer_table(workloads: Sequence[Workload]) -> Table:
    """The report's DDP answer: per model and layout, the fastest algorithm's step sync against the library's.

    Empty (no rows) without measured workload records. With compute, the fastest algorithm's
    projected step and speed-up (a model from measured communication times) are added.
    """
    ws = [w for w in latest(workloads) if w.measured]
    rows = []
    for model, grp in by_model(ws):
        fields = varying(grp)
        f = frame(grp).assign(p50=[w.step.p50 for w in grp])  # type: ignore[union-attr]
        for layout, g in sorted(f.groupby("layout", sort=False), key=lambda kv: layout_sort_key(kv[0])):
            best = g.loc[g["p50"].idxmin(), "record"]
            lib = g.loc[g["algo"] == LIBRARY_ALGO, "p50"]
            proj = workload_projection(best)
            ov = workload_overlap(best)
            rows.append([model, layout, series_name(best, fields), _ms(best.step.p50),  # type: ignore[union-attr]
                         _ms(lib.min()) if len(lib) else "—",
                         f"{lib.min() / best.step.p50:.2f}×" if len(lib) and best.step.p50 > 0 else "—",  # type: ignore[union-attr]
                         _ms(ov.step_us) if proj is not None else "—",
                         f"{proj.speedup:.3g}×" if proj is not None else "—"])
    t = Table.of("DDP step time", ["model", "layout", "fastest sync", "step sync p50 (ms)", "library sync p50 (ms)",
                                   "library ÷ fastest", "projected step (ms)", "projected speed-up"], rows,
                 align="lllrrrrr",
                 note="Step sync: every gradient bucket all-reduced back to back, max over ranks, measured. "
                      f"Projected step and speed-up (with compute): {MODEL_LABEL}, not measurements.")
    for header in ("library sync p50 (ms)", "library ÷ fastest", "projected step (ms)", "projected speed-up"):
        t.drop_blank_column(header)
    return t


# --------------------------------------------------------------------------- PyTorch's DDP, measured

MEASURED_TITLE = "DDP step: predicted vs measured (PyTorch DDP)"


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


def _median(values: Iterable[float | None]) -> float:
    vs = [v for v in values if v is not None and not math.isnan(v)]
    return float(pd.Series(vs).median()) if vs else math.nan


@dataclass(frozen=True)
class Comparison:
    """PyTorch's DDP measured (medians over the repetitions) beside the model fed collbench's records.

    ``predicted`` are the collbench workload records (library algorithm, same model, layout, backend
    and bucket cap) the model is fed: those of the runs the bench named, else every matching one.
    """

    model: str
    layout: str
    reps: tuple[Measured, ...]
    predicted: tuple[Workload, ...]

    def measured(self, attr: str) -> float:
        """The median over the repetitions of a :class:`Measured` field."""
        return _median(getattr(m, attr) for m in self.reps)

    def model_ms(self, fn: Any) -> float:
        """The median over the compared workload records of ``fn(record)``."""
        return _median(fn(w) for w in self.predicted)

    @property
    def step_ms(self) -> float:
        return self.model_ms(lambda w: workload_overlap(w).step_us / 1e3)  # type: ignore[operator]

    @property
    def t1_ms(self) -> float:
        return self.model_ms(lambda w: workload_projection(w).t1_ms)  # type: ignore[union-attr]

    @property
    def speedup(self) -> float:
        return self.model_ms(lambda w: workload_projection(w).speedup)  # type: ignore[union-attr]


def compare(measured: Sequence[Measured], workloads: Sequence[Workload]) -> list[Comparison]:
    """Pair each (model, layout, backend, bucket cap) PyTorch measured with collbench's library records of it."""
    groups: dict[tuple[str, str, str, float], list[Measured]] = {}
    for m in measured:
        groups.setdefault((m.model, m.layout, m.backend, m.bucket_cap_mb), []).append(m)
    usable = [w for w in workloads if w.measured and w.compute is not None and w.algo == LIBRARY_ALGO]
    out = []
    for (model, layout, backend, cap), reps in groups.items():
        same = [w for w in usable if (w.model, w.layout, w.backend, w.bucket_cap_mb) == (model, layout, backend, cap)]
        named = {r for m in reps for r in m.run_ids}
        out.append(Comparison(model, layout, tuple(reps), tuple([w for w in same if w.run_id in named] or same)))
    return out


def _pct(pred: float, meas: float) -> str:
    return f"{(pred / meas - 1):+.0%}" if meas > 0 and not math.isnan(pred) and not math.isnan(meas) else "—"


def _num(v: float) -> str:
    return "—" if v is None or math.isnan(v) else fmt_num(v)


def machine_note(measured: Sequence[Measured]) -> str:
    """The caveat, once: the CPUs the ranks shared, their threads, the CPU model, PyTorch's version."""
    parts = sorted({f"{m.online_cpus} online CPUs shared by the node's {m.ranks_per_node} ranks "
                    f"({m.threads_per_rank} compute thread{'s' * (m.threads_per_rank > 1)} + Gloo's worker each), "
                    f"{m.cpu_model or 'CPU unknown'}, PyTorch {m.torch}" for m in measured})
    return "Machine: " + "; ".join(parts) + "."


def measured_tables(measured: Sequence[Measured], workloads: Sequence[Workload]) -> list[Table]:
    """Predicted vs measured step and speed-up per model, then where the step's time goes.

    Empty without ``ddp_measured`` records. Measured: PyTorch's DDP (bench/ddp_torch.py), medians
    over repetitions of each repetition's p50. Predicted: the overlap model fed collbench's
    bucket times and compute profile (library algorithm: Gloo's, what DDP runs).
    """
    cs = compare(measured, workloads)
    if not cs:
        return []
    head, parts = [], []
    for c in sorted(cs, key=lambda c: (c.model, layout_sort_key(c.layout))):
        ov = [workload_overlap(w) for w in c.predicted]
        med = _median
        step, pred = c.measured("step_ms"), c.step_ms
        lo, hi = min(m.step_ms for m in c.reps), max(m.step_ms for m in c.reps)
        head.append([c.model, c.layout, str(len(c.reps)), _num(step), f"{_num(lo)}–{_num(hi)}", _num(pred),
                     _pct(pred, step), _num(c.measured("single_ms")), _num(c.t1_ms),
                     f"{_num(c.measured('speedup'))}×", f"{_num(c.speedup)}×"])
        comp = [w.compute for w in c.predicted]
        profile_ms = med(x.forward_ms + x.backward_ms + x.optimizer_ms for x in comp)  # type: ignore[union-attr]
        parts.append([c.model, c.layout,
                      _num(c.measured("no_sync_ms")), _num(profile_ms),
                      _num(c.measured("noop_hook_ms") - c.measured("no_sync_ms")), _num(med(o.copy_us / 1e3 for o in ov)),
                      _num(c.measured("step_ms") - c.measured("noop_hook_ms")), _num(med(o.exposed_us / 1e3 for o in ov)),
                      _num(med(o.sync_us / 1e3 for o in ov)), _num(med(o.share for o in ov))])
    note = (f"Measured: PyTorch's own DDP step (bench/ddp_torch.py), median over repetitions of each one's p50, "
            "max over ranks; one process: the global batch without DDP. Predicted: the overlap model (docs/ddp.md) "
            "fed collbench's measured bucket all-reduce times (library algorithm, the runs measured beside it) and "
            f"the per-parameter compute profile. {machine_note(measured)}")
    t1 = Table.of(MEASURED_TITLE,
                  ["model", "layout", "reps", "measured step p50 (ms)", "range over reps (ms)", "predicted step (ms)",
                   "predicted ÷ measured − 1", "measured one process (ms)", "projected one process (ms)",
                   "measured speed-up", "projected speed-up"], head, align="llrrrrrrrrr", note=note)
    t2 = Table.of("DDP step: where the time goes, measured vs model",
                  ["model", "layout", "compute: no_sync (ms)", "compute: profile F+B+O (ms)",
                   "DDP copies: no-op hook − no_sync (ms)", "DDP copies: model (ms)",
                   "exposed sync: step − no-op hook (ms)", "exposed sync: model (ms)", "collbench sync p50 (ms)",
                   "overlap share φ"], parts, align="llrrrrrrrr",
                  note="Each measured part is a difference of PyTorch steps (synced, no-op communication hook, "
                       "no_sync), medians over repetitions; the model's from collbench's records. The no-op hook "
                       "minus no_sync also holds DDP's buffer broadcast (BatchNorm) and its bookkeeping.")
    return [t1, t2]


def algorithm_table(workloads: Sequence[Workload]) -> Table:
    """"Would my step be faster with another algorithm than the library's?": per model and layout, each
    algorithm's modelled step (overlap model, docs/ddp.md) and its ratio to the library's. Empty without
    compute or without a second algorithm."""
    ws = [w for w in latest(workloads) if w.measured and w.compute is not None]
    fields = varying(ws) if ws else []
    names = sorted({(series_name(w, fields), w.algo) for w in ws}, key=_series_order)
    if len(names) < 2:
        return Table.of("DDP step by algorithm", ["model", "layout"])
    rows = []
    for model, grp in by_model(ws):
        for layout in sorted({w.layout for w in grp}, key=layout_sort_key):
            steps = {series_name(w, fields): workload_overlap(w).step_us for w in grp if w.layout == layout}
            lib = next((steps[n] for n, a in names if a == LIBRARY_ALGO and n in steps), None)
            best = min(steps, key=lambda n: steps[n])  # type: ignore[arg-type,return-value]
            cells = [(f"{_ms(steps[n])} ({steps[n] / lib:.2f})" if lib and n in steps and a != LIBRARY_ALGO  # type: ignore[operator]
                      else _ms(steps[n]) if n in steps else "—") for n, a in names]
            rows.append([model, layout, *cells, best])
    return Table.of("DDP step by algorithm", ["model", "layout", *(n for n, _ in names), "fastest step"], rows,
                    align="ll" + "r" * len(names) + "l",
                    note="Modelled step in ms (÷ the library's), from each algorithm's measured bucket all-reduce times "
                         f"and the record's compute: {MODEL_LABEL}. {workload_note(ws)}".rstrip() )
