"""The DDP overlap model: measured bucket all-reduce times -> a modelled training step.

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
:func:`.step_tables.measured_tables`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import pandas as pd

from ..load import LIBRARY_ALGO
from .records import Compute, Measured, Workload


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


def median_of(values: Iterable[float | None]) -> float:
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
        return median_of(getattr(m, attr) for m in self.reps)

    def model_ms(self, fn: Any) -> float:
        """The median over the compared workload records of ``fn(record)``."""
        return median_of(fn(w) for w in self.predicted)

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
