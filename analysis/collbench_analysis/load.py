"""Load, validate and group collbench JSON Lines results (schema ``collbench/1``).

Everything downstream (plots, compare, model, report) works on the typed
:class:`Point` / :class:`Run` records built here, so validation happens once and
error messages can always name the offending ``file:line``. Records are validated
against the JSON Schema results/schema/collbench-1.json (see :mod:`.schema`).
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence, TypeVar

from . import schema as _schema

SCHEMA = _schema.schema_id()
LIBRARY_ALGO = "library"
P2P_OPS = _schema.p2p_ops()

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
WarnFn = Callable[[str], None]


class LoadError(Exception):
    """Bad input. ``str(err)`` is one line naming file and line, ready to print."""


def warn_stderr(msg: str) -> None:
    """Default warning sink: warnings must not pollute stdout tables."""
    print(f"warning: {msg}", file=sys.stderr)


# --------------------------------------------------------------------------- sizes

_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?")
_SCALE = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """Parse ``8``, ``64K``, ``16M``, ``1G``, ``4KiB`` (binary multiples, like nccl-tests' -b/-e)."""
    m = _SIZE_RE.fullmatch(text.strip().upper())
    if not m:
        raise ValueError(f"bad size {text!r} (expected e.g. 8, 64K, 16M, 1G)")
    return int(round(float(m.group(1)) * _SCALE[m.group(2)]))


def format_bytes(n: float) -> str:
    """Compact binary size label: 8B, 1K, 1.5K, 16M, 1G (the axis/table style)."""
    n = float(n)
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f}{suffix}" if abs(v - round(v)) < 1e-9 else f"{v:.3g}{suffix}"
    return f"{n:.0f}B"


# --------------------------------------------------------------------------- records

@dataclass(frozen=True)
class TimeStats:
    """Per-point time statistics in microseconds (over iterations, max over ranks)."""

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

    @property
    def band_name(self) -> str:
        return "p5–p95" if self.p5 is not None and self.p95 is not None else "min–max"

    @property
    def half_spread(self) -> float:
        """Half the p5–p95 (or min–max) width: this run's own noise level."""
        return (self.hi - self.lo) / 2.0


@dataclass(frozen=True)
class Point:
    """One measured (or skipped) point: one ``result`` record."""

    op: str
    algo: str
    backend: str
    device: str
    dtype: str
    bytes: int
    world_size: int
    nodes: int
    ranks_per_node: int
    source: str
    run_id: str | None = None
    redop: str | None = None
    root: int | None = None
    in_place: bool = False
    buffers: str = "plain"
    cache: str = "hot"  # "cold": --cache cold (absent in older records: hot)
    count: int | None = None
    iters: int | None = None
    warmup: int | None = None
    mode: str = "per_iter"
    time: TimeStats | None = None
    algbw: float | None = None
    busbw: float | None = None
    wrong: int = 0
    checked: bool | None = None  # verification ran (None: the record does not say)
    skipped: bool = False
    skip_reason: str | None = None
    src: int | None = None
    dst: int | None = None
    link: str | None = None
    samples: tuple[float, ...] | None = None  # samples_us, when the record carries them (measurement order)
    # Ranks on each node, from the run record, for uneven layouts only (3 ranks on one node, 1 on
    # another): nodes x ranks_per_node (the most on a node) would name them like an even layout.
    per_node: tuple[int, ...] | None = None

    @property
    def layout(self) -> str:
        return layout_name(self.nodes, self.ranks_per_node, self.per_node)

    @property
    def is_p2p(self) -> bool:
        return self.op in P2P_OPS

    @property
    def measured(self) -> bool:
        return not self.skipped and self.time is not None

    @property
    def is_library(self) -> bool:
        return self.algo == LIBRARY_ALGO

    def bw_at(self, time_us: float) -> float:
        """Bus bandwidth (GB/s) this point would have at ``time_us``.

        busbw is inversely proportional to time, so the p5/p95 band of the
        bandwidth is the reported busbw rescaled by p50/t (every measured record
        carries busbw, the schema says so).
        """
        if time_us <= 0 or self.busbw is None or self.time is None or self.time.p50 <= 0:
            return float("nan")
        return self.busbw * self.time.p50 / time_us

    @property
    def bw(self) -> float:
        """Bus bandwidth (GB/s) at p50."""
        assert self.time is not None and self.busbw is not None
        return self.busbw

    @property
    def bw_lo(self) -> float:
        assert self.time is not None
        return self.bw_at(self.time.hi)

    @property
    def bw_hi(self) -> float:
        assert self.time is not None
        return self.bw_at(self.time.lo)


@dataclass
class Run:
    """One invocation's ``run`` record, plus its ``end`` record when present."""

    run_id: str
    source: str
    argv: list[str] = field(default_factory=list)
    start_time: str | None = None
    hosts: list[str] = field(default_factory=list)
    node_of_rank: list[int] = field(default_factory=list)
    world_size: int | None = None
    nodes: int | None = None
    ranks_per_node: int | None = None
    backend: str | None = None
    device: str | None = None
    versions: dict[str, Any] = field(default_factory=dict)
    git_commit: str | None = None
    slurm: dict[str, Any] | None = None
    inter_node_link: str | None = None  # what the launcher declared (e.g. an emulated link); None: unset or older record
    end_time: str | None = None
    exit_status: int | None = None
    end_points: int | None = None

    @property
    def per_node(self) -> tuple[int, ...] | None:
        """Ranks on each node (in node order) when they differ between nodes, else None."""
        counts = [self.node_of_rank.count(n) for n in sorted(set(self.node_of_rank))]
        return tuple(counts) if len(set(counts)) > 1 else None

    @property
    def layout(self) -> str:
        return layout_name(self.nodes, self.ranks_per_node, self.per_node) if self.nodes else "?"

    @property
    def finished(self) -> bool:
        return self.end_time is not None


@dataclass
class Dataset:
    """All runs and points loaded from a set of inputs."""

    files: list[Path]
    runs: dict[str, Run]
    points: list[Point]
    warnings: list[str] = field(default_factory=list)
    workloads: int = 0  # "workload" records seen (DDP); ddp.load_workloads reads them, not this loader

    @property
    def measured(self) -> list[Point]:
        return [p for p in self.points if p.measured]

    @property
    def skipped(self) -> list[Point]:
        return [p for p in self.points if p.skipped]

    @property
    def collectives(self) -> list[Point]:
        return [p for p in self.measured if not p.is_p2p]

    @property
    def p2p(self) -> list[Point]:
        return [p for p in self.measured if p.is_p2p]


# --------------------------------------------------------------------------- validation

_TIME_KEYS = ("min", "p5", "p50", "mean", "p95", "p99", "max", "stdev")


def _validate(rec: Mapping[str, Any], where: str) -> None:
    """Schema check (results/schema/collbench-1.json); unknown fields are allowed."""
    problem = _schema.first_error(rec)
    if problem is not None:
        raise LoadError(f"{where}: {problem}")


# Point fields that are the record's fields of the same name, copied as they are (the schema
# has already checked their types); the others are converted below.
_POINT_FIELDS = ("op", "algo", "backend", "device", "dtype", "bytes", "world_size", "nodes", "ranks_per_node",
                 "run_id", "redop", "root", "in_place", "count", "iters", "warmup", "mode", "wrong", "skipped",
                 "skip_reason")
_P2P_FIELDS = ("src", "dst", "link")  # pingpong records only


def _parse_result(rec: Mapping[str, Any], where: str) -> Point:
    _validate(rec, where)
    t = rec["time_us"]
    return Point(
        **{k: rec[k] for k in _POINT_FIELDS},
        **{k: rec.get(k) for k in _P2P_FIELDS},
        source=where,
        time=None if t is None else TimeStats(**{k: float(t[k]) for k in _TIME_KEYS}),
        algbw=None if rec["algbw_GBps"] is None else float(rec["algbw_GBps"]),
        busbw=None if rec["busbw_GBps"] is None else float(rec["busbw_GBps"]),
        samples=tuple(float(v) for v in rec["samples_us"]) if rec.get("samples_us") else None,
        buffers=rec.get("buffers", "plain"),
        cache=rec.get("cache", "hot"),
        checked=rec.get("checked"),
    )


_RUN_FIELDS = ("run_id", "start_time", "world_size", "nodes", "ranks_per_node", "backend", "device", "git_commit",
               "slurm")
_OPTIONAL_RUN_FIELDS = ("inter_node_link",)  # absent in records written before the field existed


def _parse_run(rec: Mapping[str, Any], where: str) -> Run:
    _validate(rec, where)
    return Run(
        **{k: rec[k] for k in _RUN_FIELDS},
        **{k: rec.get(k) for k in _OPTIONAL_RUN_FIELDS},
        source=where,
        argv=list(rec["argv"]),
        hosts=list(rec["hosts"]),
        node_of_rank=list(rec["node_of_rank"]),
        versions=dict(rec["versions"]),
    )


def _apply_end(runs: dict[str, Run], rec: Mapping[str, Any], where: str) -> None:
    _validate(rec, where)
    run_id = rec["run_id"]
    run = runs.get(run_id)
    if run is None:  # end without run record: keep it, so metadata tables still show it
        run = runs.setdefault(run_id, Run(run_id=run_id, source=where))
    run.end_time = rec["end_time"]
    run.exit_status = rec["exit_status"]
    run.end_points = rec["points"]


# --------------------------------------------------------------------------- files

def discover(paths: Sequence[str | Path]) -> list[Path]:
    """Expand inputs: files as given, folders searched recursively for ``*.jsonl``."""
    if not paths:
        raise LoadError("no input given")
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.jsonl") if q.is_file())
            if not found:
                raise LoadError(f"{p}: folder holds no *.jsonl files")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise LoadError(f"{p}: no such file or directory")
    return list(dict.fromkeys(files))


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as err:
        raise LoadError(f"{path}: cannot read ({err})") from None


def _load_file(path: Path, ds: Dataset, warn: WarnFn) -> None:
    lines = _read_lines(path)
    nonblank = [i for i, line in enumerate(lines, 1) if line.strip()]
    if not nonblank:
        raise LoadError(f"{path}: empty file (no collbench records)")
    last = nonblank[-1]
    for lineno in nonblank:
        where = f"{path}:{lineno}"
        try:
            rec = json.loads(lines[lineno - 1])
        except json.JSONDecodeError as err:
            if lineno == last:
                msg = f"{where}: truncated last line skipped (run killed mid-write?)"
                ds.warnings.append(msg)
                warn(msg)
                continue
            raise LoadError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
        if not isinstance(rec, dict):
            raise LoadError(f"{where}: expected a JSON object, got {type(rec).__name__}")
        schema = rec.get("schema")
        if schema != SCHEMA:
            shown = "missing" if schema is None else repr(schema)
            raise LoadError(f"{where}: unsupported schema {shown} (this tool reads {SCHEMA!r})")
        kind = rec.get("type")
        if kind == "result":
            point = _parse_result(rec, where)
            run = ds.runs.get(point.run_id) if point.run_id else None
            if run is not None and run.per_node and run.world_size == point.world_size:
                point = replace(point, per_node=run.per_node)
            ds.points.append(point)
        elif kind == "run":
            run = _parse_run(rec, where)
            ds.runs[run.run_id] = run
        elif kind == "end":
            _apply_end(ds.runs, rec, where)
        elif kind == "workload":
            ds.workloads += 1
        else:
            raise LoadError(f"{where}: unknown record type {kind!r} (expected run, result or end)")


def load(paths: Sequence[str | Path], warn: WarnFn = warn_stderr) -> Dataset:
    """Load every input; raise :class:`LoadError` on anything but a truncated last line."""
    files = discover(paths)
    ds = Dataset(files=files, runs={}, points=[])
    for path in files:
        _load_file(path, ds, warn)
    if not ds.points and not ds.workloads:
        names = ", ".join(str(f) for f in files)
        raise LoadError(f"no result records in {names}")
    return ds


# --------------------------------------------------------------------------- inter-node link

NO_LINK = "not declared"


def inter_node_links(points: Iterable[Point], runs: Mapping[str, Run]) -> list[str | None]:
    """The distinct ``inter_node_link`` values behind the multi-node points (declared ones sorted, None last).

    Only points with nodes > 1 count: a single-node point crossed no link between nodes, so a
    caveat about that link (e.g. "emulated") would be misleading beside it. A point whose run
    record is missing, or predates the field, or whose launcher did not set it, gives None.
    """
    found: set[str | None] = set()
    for p in points:
        if p.nodes > 1:
            run = runs.get(p.run_id) if p.run_id is not None else None
            found.add(run.inter_node_link if run is not None else None)
    return sorted((v for v in found if v is not None)) + ([None] if None in found else [])


def describe_links(links: Sequence[str | None]) -> str:
    """The link text for a set of runs: one value, or every distinct one when runs disagree."""
    shown = [v if v else NO_LINK for v in links]
    if not shown:
        return NO_LINK
    return shown[0] if len(shown) == 1 else " | ".join(shown) + " (runs differ)"


def link_note(links: Sequence[str | None]) -> str:
    """The note figures and tables carry: ``inter-node link: …``; empty when no run declared a link.

    Results without any declaration (real clusters, records older than the field) get no note,
    so only a launcher that says something (the emulated testbed) adds one.
    """
    return f"inter-node link: {describe_links(links)}" if any(links) else ""


# --------------------------------------------------------------------------- grouping

def group_by(items: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """Stable grouping: keys and members keep first-seen order."""
    out: dict[K, list[T]] = {}
    for item in items:
        out.setdefault(key(item), []).append(item)
    return out


# The point identity, as the schema's x-collbench-point-identity (collectives/op_traits.hpp) says.
MATCH_FIELDS: tuple[str, ...] = _schema.point_identity()


def match_key(p: Point) -> tuple[Any, ...]:
    """Identity of a measurement across runs (what collcompare pairs up)."""
    return tuple(getattr(p, name) for name in MATCH_FIELDS)


def dedupe(points: Iterable[Point]) -> tuple[list[Point], int]:
    """Keep the last-loaded point per :func:`match_key` (a re-run supersedes), count drops."""
    latest: dict[tuple[Any, ...], Point] = {}
    total = 0
    for p in points:
        total += 1
        latest.pop(match_key(p), None)  # re-insert so order follows the surviving point
        latest[match_key(p)] = p
    return list(latest.values()), total - len(latest)


def layout_name(nodes: int, ranks_per_node: int, per_node: Sequence[int] | None = None) -> str:
    """``NxR`` for an even layout; each node's count joined by ``+`` for an uneven one (``3+1``)."""
    return "+".join(map(str, per_node)) if per_node else f"{nodes}x{ranks_per_node}"


def layout_sort_key(layout: str) -> tuple[int, int, int]:
    """Order layouts by world size, then node count, even before uneven: 1x2 < 1x4 < 2x2 < 3+1 < 4x1 ..."""
    try:
        if "+" in layout:
            counts = [int(c) for c in layout.split("+")]
            return (sum(counts), len(counts), 1)
        nodes, _, rpn = layout.partition("x")
        n, r = int(nodes), int(rpn)
    except ValueError:
        return (1 << 30, 0, 0)
    return (n * r, n, 0)


VARIANT_FIELDS: tuple[str, ...] = ("device", "dtype", "redop", "in_place", "mode", "buffers", "cache")


def varying_fields(points: Iterable[Point], fields: Sequence[str] = VARIANT_FIELDS) -> list[str]:
    """Fields (among ``fields``) that take more than one value in ``points``.

    Figures and model groups are split only along dimensions that actually vary,
    so a plain sweep gets short titles/filenames and a mixed one stays unambiguous.
    """
    pts = list(points)
    return [f for f in fields if len({getattr(p, f) for p in pts}) > 1]


def variant_of(p: Point, fields: Sequence[str]) -> tuple[tuple[str, Any], ...]:
    return tuple((f, getattr(p, f)) for f in fields)


def variant_label(variant: Sequence[tuple[str, Any]]) -> str:
    """Human label for a variant: ``float64, in-place, batch`` (empty when none)."""
    parts: list[str] = []
    for name, value in variant:
        if name == "in_place":
            parts.append("in-place" if value else "out-of-place")
        elif name == "redop":
            parts.append(f"redop={value}")
        elif name == "link":
            parts.append(str(value))
        else:
            parts.append(str(value))
    return ", ".join(parts)


def variant_slug(variant: Sequence[tuple[str, Any]]) -> str:
    """Filename-safe form of :func:`variant_label`."""
    label = variant_label(variant)
    return "".join(c if c.isalnum() or c in "-." else "_" for c in label.replace(", ", "_"))
