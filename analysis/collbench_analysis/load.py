"""Load and validate collbench JSON Lines results (schema ``collbench/1``) into pandas DataFrames.

``load(paths)`` returns a :class:`Dataset` whose ``results`` frame has one row per ``result``
record: the record's fields as columns, ``time_us.*`` flattened to ``<stat>_us`` columns
(``p50_us``, ``p5_us``, …), derived columns (``layout``, ``measured``, ``lo_us``/``hi_us``, the
bandwidth band) and the run metadata joined by ``run_id`` (``inter_node_link``, ``hosts``, …).
``runs`` has one row per run (its ``end`` record joined). Every record is validated against
results/schema/collbench-1.json first (see :mod:`.schema`), so errors always name ``file:line``.

This is the one reading of the files: the issue-21 analyses work on the same two frames.
``results`` also carries each record's ``efficiency`` (float, NaN where absent), and as objects
(None where absent) ``library_config``, ``cache_pool`` and ``per_rank`` (the field's dict as
written): the acceptance gate writer (:mod:`.expect`), the efficiency figures, hot vs cold
(:mod:`.cache_state`) and the stragglers read them there. ``runs`` also carries the run record's
``host_of_rank``, ``cpu_model``, ``hardware``, ``binding``, ``links``, ``loadavg``,
``online_cpus`` and ``algorithms``, and the end record's ``expect`` verdict (:mod:`.provenance`)
and ``loadavg`` (as ``end_loadavg``); None where a record lacks them. DDP ``workload``
records are kept as read (``workload_records``) for :func:`.ddp.workloads_of`. ``mpi`` names the
MPI implementation of a ``backend`` mpi row (:func:`mpi_name`; None for other backends); when the
results hold several, those rows' ``backend`` is that name (``Open MPI``, ``MPICH``), not ``mpi``.

Algorithm traits (node-aware, peer memory, library code, simplicity rank) come from collbench's
registry, never from names: each result row carries its algorithm's (:data:`TRAIT_COLUMNS`,
``traits_known``), by the one rule of :func:`traits_source` below.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from . import schema as _schema

SCHEMA = _schema.schema_id()
# The two names the command line gives a meaning of their own (collbench --algo): the backend's own
# call, its own choice of algorithm, the baseline of every ratio; and the selector, which runs what a
# tuning file names (not a registry entry: it has no traits of its own).
LIBRARY_ALGO = "library"
AUTO_ALGO = "auto"
# Several backends in one results file (an mpi sweep and a gloo sweep of one job): the one the
# others are measured against (collbench's default), first in every table that puts them side by side.
REFERENCE_BACKEND = "mpi"


# Several MPI implementations in one results folder (an Open MPI build's runs and an MPICH build's):
# both write backend "mpi", so :func:`results_frame` names those rows' backend by their implementation
# (mpi_name) instead, and every table, figure and model keeps them apart. The one the others are set
# against: Open MPI, collbench's first MPI.
REFERENCE_MPI = "Open MPI"


def backend_order(backends: Iterable[str]) -> list[str]:
    """The distinct backends, :data:`REFERENCE_BACKEND` (or :data:`REFERENCE_MPI`) first, then by name."""
    return sorted(set(backends), key=lambda b: (b not in (REFERENCE_BACKEND, REFERENCE_MPI), b))


_MPI_VERSION = re.compile(r"[\s,:]+(?:v?\d|version\b)", re.IGNORECASE)


def mpi_name(versions: Mapping[str, Any] | None) -> str | None:
    """The MPI implementation a run record names (``versions.mpi``, the first line of the MPI
    library's own version text): ``Open MPI`` for "Open MPI v4.1.4, package: …", ``MPICH`` for
    "MPICH Version: 4.0.2", else its words before the version; None without MPI."""
    line = (versions or {}).get("mpi")
    if not isinstance(line, str) or not line.strip():
        return None
    return _MPI_VERSION.split(line.strip(), maxsplit=1)[0].strip() or None


# --------------------------------------------------------------------------- algorithm traits

# What collbench's registry says of each algorithm (docs/records.md "Algorithm traits"; C++:
# AlgoTraits in collectives/registry.hpp): its schedule follows the node layout; it moves data
# through the node's peer memory (every rank on one node); it is the backend's own code (library,
# library:ALGO, han) rather than collbench's; and its rank for tie-breaks (lowest: simplest).
TRAIT_COLUMNS = ("node_aware", "peer_memory", "library", "simplicity_rank")
UNRANKED = 1000  # AlgoTraits::kUnranked: after every ranked algorithm, equal ranks by name
UNKNOWN_TRAITS: dict[str, Any] = {"node_aware": False, "peer_memory": False, "library": False,
                                  "simplicity_rank": UNRANKED}
# collbench --list --json of a CUDA/NCCL build (every entry of the mpi and nccl backends) as of the
# commit that made run records carry `algorithms`: the traits of records written before it.
# Regenerate (only when a trait of an entry in it changes): build/collbench --list --json > FILE;
# tests/harness/list_json.py checks it against the registry of the build under test.
REGISTRY_SNAPSHOT = Path(__file__).resolve().parent / "registry-snapshot.json"


@lru_cache(maxsize=None)
def _snapshot() -> dict[tuple[str, str, str], dict[str, Any]]:
    """(op, algo, registry backend) -> traits, from :data:`REGISTRY_SNAPSHOT`."""
    with open(REGISTRY_SNAPSHOT, encoding="utf-8") as f:
        doc = json.load(f)
    return {(e["op"], e["algo"], e["backend"]): dict(e["traits"]) for e in doc["algorithms"]}


def traits_source(run_algorithms: Sequence[Mapping[str, Any]] | None, op: str, algo: str,
                  backend: str) -> dict[str, Any] | None:
    """The traits of one result's algorithm, by the one rule of where they come from:

    1. its run record's ``algorithms`` (what the registry of the binary that measured it said);
    2. a run record written before collbench recorded them (or no run record): the registry snapshot
       (:data:`REGISTRY_SNAPSHOT`), the entry of that op and name on the result's backend or ``any``;
    3. neither: unknown (None) -- treated as :data:`UNKNOWN_TRAITS` (not node-aware, no peer memory,
       not library code, ranked after every known algorithm), never a flat candidate, and :func:`load`
       warns once naming each. ``auto`` is never an entry and is unknown without a warning.
    """
    if run_algorithms is not None:
        return next((dict(e["traits"]) for e in run_algorithms if e["op"] == op and e["algo"] == algo), None)
    snap = _snapshot()
    return next((dict(snap[(op, algo, b)]) for b in (backend, "any") if (op, algo, b) in snap), None)


def library_internal(df: pd.DataFrame) -> pd.Series:
    """Rows of the library's own code other than its default choice (library:ALGO, han): never custom."""
    return df["library"].astype(bool) & (df["algo"] != LIBRARY_ALGO)


def algorithm_traits(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """algo -> its traits (:data:`TRAIT_COLUMNS` and ``traits_known``) among ``df``'s rows (the last row's).

    For frames of one op and backend (a pivot's columns): an algorithm's traits are the same in
    every run of one registry.
    """
    cols = ["algo", *TRAIT_COLUMNS, "traits_known"]
    last = df[cols].drop_duplicates("algo", keep="last")
    return {r["algo"]: r for r in last.to_dict("records")}

P2P_OPS = _schema.p2p_ops()
WarnFn = Callable[[str], None]


class LoadError(Exception):
    """Bad input. ``str(err)`` is one line naming file and line, ready to print."""


def warn_stderr(msg: str) -> None:
    """Default warning sink: warnings must not pollute stdout tables."""
    print(f"warning: {msg}", file=sys.stderr)


# --------------------------------------------------------------------------- sizes and layouts

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


def per_node_of(node_of_rank: Sequence[int] | None) -> tuple[int, ...] | None:
    """Ranks on each node (in node order) when they differ between nodes, else None."""
    if not node_of_rank:
        return None
    counts = [list(node_of_rank).count(n) for n in sorted(set(node_of_rank))]
    return tuple(counts) if len(set(counts)) > 1 else None


# --------------------------------------------------------------------------- frame layout

TIME_KEYS = ("min", "p5", "p50", "mean", "p95", "p99", "max", "stdev")
TIME_COLUMNS = tuple(f"{k}_us" for k in TIME_KEYS)  # time_us.p50 -> p50_us, …
# Columns that hold None where a record has no value (kept as objects, not NaN floats).
_POINT_FIELDS = ("op", "algo", "backend", "device", "dtype", "redop", "root", "in_place", "buffers", "cache", "bytes",
                 "count", "world_size", "nodes", "ranks_per_node", "iters", "warmup", "mode", "wrong", "checked",
                 "skipped", "skip_reason", "src", "dst", "link", "run_id", "library_config", "cache_pool", "per_rank")
_INT_FIELDS = ("bytes", "world_size", "nodes", "ranks_per_node", "wrong")
RUN_COLUMNS = ("run_id", "source", "argv", "start_time", "hosts", "node_of_rank", "world_size", "nodes",
               "ranks_per_node", "backend", "device", "versions", "git_commit", "slurm", "inter_node_link",
               "host_of_rank", "cpu_model", "hardware", "binding", "links", "loadavg", "online_cpus",
               "algorithms", "end_time", "exit_status", "end_points", "expect", "end_loadavg")
# Run metadata joined onto every result of the run (the result's own fields keep their names).
JOINED_RUN_COLUMNS = ("inter_node_link", "hosts", "node_of_rank", "git_commit", "start_time", "end_time",
                      "exit_status")
# The point identity, as the schema's x-collbench-point-identity (collectives/op_traits.hpp) says.
MATCH_FIELDS: tuple[str, ...] = _schema.point_identity()
VARIANT_FIELDS: tuple[str, ...] = ("device", "dtype", "redop", "in_place", "mode", "buffers", "cache")


@dataclass
class Dataset:
    """All runs and results loaded from a set of inputs, as DataFrames."""

    files: list[Path]
    results: pd.DataFrame  # one row per result record (see the module docstring)
    runs: pd.DataFrame  # one row per run record, indexed by run_id
    warnings: list[str] = field(default_factory=list)
    # DDP "workload" records as (file:line, record), in file order: ddp.workloads_of(ds) parses them.
    workload_records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # bench/ddp_torch.py's "ddp_measured" records (PyTorch's DDP measured), validated, as (file:line,
    # record): ddp.measured_of(ds) parses them.
    ddp_measured_records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def workloads(self) -> int:
        return len(self.workload_records)

    @property
    def measured(self) -> pd.DataFrame:
        return self.results[self.results["measured"]]

    @property
    def skipped(self) -> pd.DataFrame:
        return self.results[self.results["skipped"]]


# --------------------------------------------------------------------------- records

def _validate(rec: Mapping[str, Any], where: str) -> None:
    """Schema check (results/schema/collbench-1.json); unknown fields are allowed."""
    problem = _schema.first_error(rec)
    if problem is not None:
        raise LoadError(f"{where}: {problem}")


def _result_row(rec: Mapping[str, Any], where: str) -> dict[str, Any]:
    _validate(rec, where)
    row = {k: rec.get(k) for k in _POINT_FIELDS}
    row["buffers"] = rec.get("buffers", "plain")
    row["cache"] = rec.get("cache", "hot")  # absent in older records: hot
    t = rec["time_us"]
    row.update({c: (None if t is None else float(t[k])) for k, c in zip(TIME_KEYS, TIME_COLUMNS)})
    row["efficiency"] = rec.get("efficiency")
    row["algbw_GBps"] = rec["algbw_GBps"]
    row["busbw_GBps"] = rec["busbw_GBps"]
    row["samples_us"] = tuple(float(v) for v in rec["samples_us"]) if rec.get("samples_us") else None
    row["source"] = where
    return row


def parse_run(rec: Mapping[str, Any], where: str) -> dict[str, Any]:
    """One run record as a row of the ``runs`` frame (validated)."""
    _validate(rec, where)
    row = {k: rec.get(k) for k in RUN_COLUMNS}
    row.update(source=where, argv=list(rec["argv"]), hosts=list(rec["hosts"]),
               node_of_rank=list(rec["node_of_rank"]), versions=dict(rec["versions"]))
    return row


def _apply_end(runs: dict[str, dict[str, Any]], rec: Mapping[str, Any], where: str) -> None:
    _validate(rec, where)
    # end without run record: keep it, so metadata tables still show it
    run = runs.setdefault(rec["run_id"], {"run_id": rec["run_id"], "source": where})
    run.update(end_time=rec["end_time"], exit_status=rec["exit_status"], end_points=rec["points"],
               expect=rec.get("expect"), end_loadavg=rec.get("loadavg"))


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


def _load_file(path: Path, results: list[dict[str, Any]], runs: dict[str, dict[str, Any]],
               workloads: list[tuple[str, dict[str, Any]]], warnings: list[str], warn: WarnFn,
               measured: list[tuple[str, dict[str, Any]]] | None = None) -> None:
    """Append the file's results, runs, workload and ddp_measured records."""
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
                warnings.append(msg)
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
            results.append(_result_row(rec, where))
        elif kind == "run":
            row = parse_run(rec, where)
            runs.pop(row["run_id"], None)  # a repeated run record replaces the earlier one
            runs[row["run_id"]] = row
        elif kind == "end":
            _apply_end(runs, rec, where)
        elif kind == "workload":
            workloads.append((where, rec))
        elif kind == "ddp_measured" and measured is not None:
            _validate(rec, where)
            measured.append((where, rec))
        else:
            raise LoadError(f"{where}: unknown record type {kind!r} (expected run, result, workload, end or "
                            "ddp_measured)")


def runs_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The ``runs`` frame (indexed by run_id) with ``per_node``, ``layout`` and ``finished``."""
    df = pd.DataFrame([{c: r.get(c) for c in RUN_COLUMNS} for r in rows], columns=list(RUN_COLUMNS), dtype=object)
    df["per_node"] = [per_node_of(n) for n in df["node_of_rank"]]
    df["layout"] = [layout_name(n, r, pn) if n else "?"
                    for n, r, pn in zip(df["nodes"], df["ranks_per_node"], df["per_node"])]
    df["finished"] = df["end_time"].notna()
    df.index = pd.Index(df["run_id"].to_numpy(), dtype=object)
    return df


def results_frame(rows: Sequence[Mapping[str, Any]], runs: pd.DataFrame) -> pd.DataFrame:
    """The ``results`` frame: record columns, derived columns, run metadata joined by run_id."""
    cols = [*_POINT_FIELDS, *TIME_COLUMNS, "efficiency", "algbw_GBps", "busbw_GBps", "samples_us", "source"]
    df = pd.DataFrame({c: pd.Series([r[c] for r in rows], dtype=object) for c in cols}, columns=cols)
    for c in _INT_FIELDS:
        df[c] = df[c].astype("int64")
    for c in (*TIME_COLUMNS, "efficiency", "algbw_GBps", "busbw_GBps"):
        df[c] = df[c].astype("float64")
    df["in_place"] = df["in_place"].astype(bool)
    df["skipped"] = df["skipped"].astype(bool)
    df["measured"] = ~df["skipped"] & df["p50_us"].notna()
    df["is_p2p"] = df["op"].isin(P2P_OPS)
    # The spread band: p5–p95 (min–max where a record lacks them); the bandwidth band is busbw
    # rescaled by p50/t, since busbw is inversely proportional to time.
    df["lo_us"] = df["p5_us"].fillna(df["min_us"]).fillna(df["p50_us"])
    df["hi_us"] = df["p95_us"].fillna(df["max_us"]).fillna(df["p50_us"])
    df["band"] = (df["p5_us"].notna() & df["p95_us"].notna()).map({True: "p5–p95", False: "min–max"})
    scale = df["busbw_GBps"] * df["p50_us"]
    df["busbw_lo"] = scale / df["hi_us"].where(df["hi_us"] > 0)
    df["busbw_hi"] = scale / df["lo_us"].where(df["lo_us"] > 0)
    # Run metadata. Uneven layouts (3 ranks on one node, 1 on another) are named by each node's
    # count, which only the run record knows: nodes x ranks_per_node would name them like an even one.
    meta = runs.reindex(df["run_id"].where(df["run_id"].notna(), None))
    for c in (*JOINED_RUN_COLUMNS, "per_node"):
        df[c] = pd.Series(meta[c].to_numpy(), index=df.index, dtype=object)
    same_world = meta["world_size"].to_numpy() == df["world_size"].to_numpy()
    df["per_node"] = [pn if ok else None for pn, ok in zip(df["per_node"], same_world)]
    df["layout"] = [layout_name(n, r, pn) for n, r, pn in zip(df["nodes"], df["ranks_per_node"], df["per_node"])]
    _add_traits(df, meta["algorithms"].to_numpy())
    df["mpi"] = pd.Series([mpi_name(v) if b == REFERENCE_BACKEND and isinstance(v, dict) else None
                           for b, v in zip(df["backend"], meta["versions"])], index=df.index, dtype=object)
    return name_mpis(df) if df["mpi"].nunique() > 1 else df


def name_mpis(*frames: pd.DataFrame) -> pd.DataFrame | tuple[pd.DataFrame, ...]:
    """The results frames with each mpi row's ``backend`` its MPI's name (``Open MPI``, ``MPICH``): where
    several MPIs meet (in one load, or the two sides of collcompare), so that no table, figure, model or
    point match takes one MPI's point for a re-run of the other's."""
    named = tuple(f.assign(backend=f["mpi"].where(f["mpi"].notna(), f["backend"])) for f in frames)
    return named[0] if len(named) == 1 else named


def _add_traits(df: pd.DataFrame, run_algorithms: Sequence[Any]) -> None:
    """The trait columns by :func:`traits_source`; ``df.attrs["unknown_traits"]``: the unknown ones."""
    found: dict[tuple[int, str, str, str], dict[str, Any] | None] = {}
    rows = []
    unknown: dict[str, None] = {}
    for algos, op, algo, backend in zip(run_algorithms, df["op"], df["algo"], df["backend"]):
        listed = algos if isinstance(algos, list) else None
        key = (id(listed), op, algo, backend)
        if key not in found:
            found[key] = traits_source(listed, op, algo, backend)
        traits = found[key]
        if traits is None and op not in P2P_OPS and algo != AUTO_ALGO:
            unknown[f"{op}/{algo} ({backend})"] = None
        rows.append((traits or UNKNOWN_TRAITS, traits is not None))
    for c in TRAIT_COLUMNS:
        df[c] = pd.Series([t[c] for t, _ in rows], index=df.index, dtype="int64" if c == "simplicity_rank" else bool)
    df["traits_known"] = pd.Series([k for _, k in rows], index=df.index, dtype=bool)
    df.attrs["unknown_traits"] = list(unknown)


def load(paths: Sequence[str | Path], warn: WarnFn = warn_stderr) -> Dataset:
    """Load every input; raise :class:`LoadError` on anything but a truncated last line."""
    files = discover(paths)
    results: list[dict[str, Any]] = []
    runs: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    workloads: list[tuple[str, dict[str, Any]]] = []
    measured: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        _load_file(path, results, runs, workloads, warnings, warn, measured)
    if not results and not workloads and not measured:
        raise LoadError(f"no result records in {', '.join(str(f) for f in files)}")
    run_df = runs_frame(runs.values())
    res = results_frame(results, run_df)
    unknown = res.attrs.pop("unknown_traits", [])
    if unknown:
        msg = (f"no algorithm traits for {', '.join(unknown)}: neither in its run record nor in the registry "
               "snapshot; treated as unknown (not node-aware, no peer memory, not library code, ranked last, never "
               "a flat candidate; docs/analysis.md \"Algorithm traits\")")
        warnings.append(msg)
        warn(msg)
    return Dataset(files, res, run_df, warnings, workloads, measured)


# --------------------------------------------------------------------------- points of one view

def latest(df: pd.DataFrame) -> pd.DataFrame:
    """The last-loaded row per point identity (:data:`MATCH_FIELDS`): a re-run supersedes."""
    return df.drop_duplicates(list(MATCH_FIELDS), keep="last")


def _label_part(name: str, values: pd.Series) -> pd.Series:
    if name == "in_place":
        return values.map({True: "in-place", False: "out-of-place"})
    if name == "redop":
        return "redop=" + values.astype(str)
    return values.astype(str)


def views(df: pd.DataFrame, fields: Sequence[str] = VARIANT_FIELDS, by: Sequence[str] = ("op",)) -> pd.DataFrame:
    """The latest measured point per identity, with ``variant`` naming the fields that vary within its ``by`` group.

    Figures, tables and models are split only along dimensions that actually vary, so a plain
    sweep gets short titles and file names and a mixed one stays unambiguous: ``variant`` is
    e.g. ``float64, in-place`` ("" when nothing varies) and ``variant_slug`` its file-name form.
    """
    out = latest(df[df["measured"]]).copy()
    out["variant"] = ""
    groups = out.groupby(list(by), dropna=False, sort=False).indices.values() if by else [range(len(out))]
    for rows in groups:
        grp = out.iloc[rows]
        vary = [f for f in fields if grp[f].nunique(dropna=False) > 1]
        if vary:
            parts = [_label_part(f, grp[f]) for f in vary]
            label = parts[0]
            for p in parts[1:]:
                label = label + ", " + p
            out.loc[grp.index, "variant"] = label
    out["variant_slug"] = out["variant"].str.replace(", ", "_", regex=False).str.replace(
        r"[^0-9A-Za-z.\-]", "_", regex=True)
    return out


def sort_layouts(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """``df`` sorted by ``by``, layouts in :func:`layout_sort_key` order (stable)."""
    return df.sort_values(list(by), kind="stable",
                          key=lambda s: s.map(layout_sort_key) if s.name == "layout" else s)


# --------------------------------------------------------------------------- inter-node link

NO_LINK = "not declared"


def inter_node_links(df: pd.DataFrame) -> list[str | None]:
    """The distinct ``inter_node_link`` values behind the multi-node rows (declared ones sorted, None last).

    Only rows with nodes > 1 count: a single-node point crossed no link between nodes, so a
    caveat about that link (e.g. "emulated") would be misleading beside it. A point whose run
    record is missing, or predates the field, or whose launcher did not set it, gives None.
    """
    values = df.loc[df["nodes"] > 1, "inter_node_link"]
    found = set(values.dropna())
    return sorted(found) + ([None] if values.isna().any() else [])


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


def frame_note(df: pd.DataFrame) -> str:
    """The footnote of a figure or table drawn from ``df``: the declared link of its multi-node runs."""
    return link_note(inter_node_links(df))
