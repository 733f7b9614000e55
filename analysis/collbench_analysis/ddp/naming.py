"""What the DDP section calls things: its title, the model's labels, series names, notes."""
from __future__ import annotations

from typing import Iterable, Sequence

from ..load import LIBRARY_ALGO, link_note
from .records import SERIES_FIELDS, Workload, frame


SECTION = "DDP gradient synchronisation"
MODEL_LABEL = "model from measured communication times"
TIMELINE_LABEL = "model built on measured communication times"
MIB = 1 << 20


def varying(workloads: Sequence[Workload]) -> list[str]:
    """Series fields that differ within ``workloads`` (they then appear in the series name)."""
    f = frame(workloads)
    return [c for c in SERIES_FIELDS if f[c].nunique(dropna=False) > 1]


def series_name(w: Workload, fields: Sequence[str]) -> str:
    """``ring`` or, where backends/dtypes/bucket caps vary, ``ring (nccl, cap 25 MB)``."""
    extra = []
    for f in fields:
        v = getattr(w, f)
        extra.append(f"cap {v:g} MB" if f == "bucket_cap_mb" and v is not None
                     else f"first {v:g} MB" if f == "first_bucket_cap_mb" and v is not None else str(v))
    return w.algo + (f" ({', '.join(extra)})" if extra else "")


def series_order(name_algo: tuple[str, str]) -> tuple[bool, str]:
    return (name_algo[1] != LIBRARY_ALGO, name_algo[0])


def workload_links(workloads: Iterable[Workload]) -> list[str | None]:
    """Distinct ``inter_node_link`` values of the multi-node records (declared sorted, None last)."""
    found = {w.inter_node_link for w in workloads if w.nodes > 1}
    return sorted(v for v in found if v is not None) + ([None] if None in found else [])


def workload_note(workloads: Iterable[Workload]) -> str:
    """The figure/table footnote: the declared inter-node link, as collective figures carry it."""
    return link_note(workload_links(workloads))


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
