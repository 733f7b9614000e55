"""Turn a sweep's results into a tuning file: which algorithm to run for each message-size range.

A tuning file (schema ``collbench-tuning/1``, results/README.md "Tuning files") maps each
(op, backend, device, layout) to size ranges that tile [0, ∞), each naming one algorithm.
The choice per measured size is conservative on purpose: the fastest algorithm wins only
when it is faster beyond its own measured p5–p95 spread; otherwise the simplest algorithm
that is as fast is chosen (the library first), because a simpler algorithm is less likely
to be slow between the measured sizes or on the machine in another state (docs/tuning.md
"How the algorithm is chosen"). The file is written with PyYAML, one range per line, so that a reader can name
the ``file:line`` of the range it used; :func:`load_tuning` is that reader in Python.
"""
from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd
import yaml

from . import schema as _schema
from .load import AUTO_ALGO, Dataset, backend_order, format_bytes
# The rule itself (best, margin, tie, choice) lives in ranking.py, shared with collplot's report.
from .ranking import (  # noqa: F401  (re-exported: tune.choose, tune.Candidate, ... as before)
    TIE_RULES, Z_95, Candidate, SizeChoice, candidates as _candidates, choose, pool, pooled, simplicity_key, tied_with,
)
from .tables import Table, fmt_num

TUNING_SCHEMA = "collbench-tuning/1"
TOOL = "colltune"
STATISTIC = "p50"
# AUTO_ALGO: a result of the selector itself is never a candidate (it would choose itself).

# Tie-break among algorithms as fast as the best, simplest first: fewer steps and less code are
# less likely to be slow at the sizes between the measured ones. The order is each algorithm's
# simplicity rank from collbench's registry (the results' traits, load.py "algorithm traits"): the
# library's own choice 0, its other entries (han) next, collbench's flat schedules, the peer-memory
# and node-aware ones last; library:ALGO entries (one of the library's algorithms forced) are
# unranked, after these, by name, and stay candidates: a tuning file naming e.g. library:ring runs
# under collbench --algo auto (the harness looks the name up in its registry like any other).

# Fields that identify a measurement but not a tuning entry. When an entry's results hold several
# values of one, the entry is tuned on the preferred value's results (else on its most common value;
# None: no preference), so that one entry never mixes, say, float32 and float64 times at one size.
# buffers: "registered" results ran on peer-memory buffers that ordinary calls do not have; mode:
# batch times include pipelining between calls that per-iteration times do not; cache: hot, the
# default every other tool measures (a cold case is the default sweep's comparison, not the tuning).
PREFERRED_VARIANT: tuple[tuple[str, Any], ...] = (("dtype", "float32"), ("redop", "sum"), ("in_place", False),
                                                  ("root", 0), ("buffers", "plain"), ("mode", None),
                                                  ("cache", "hot"))


class TuneError(Exception):
    """Results that cannot be tuned on. ``str(err)`` is one line, ready to print."""


class TuningFileError(TuneError):
    """A tuning file that does not parse or does not follow ``collbench-tuning/1`` (one line, file:line)."""


# --------------------------------------------------------------------------- layouts

@dataclass(frozen=True)
class Layout:
    """Ranks on each node, in node order (nodes numbered in order of their lowest rank)."""

    per_node: tuple[int, ...]

    @classmethod
    def from_node_of_rank(cls, node_of_rank: Sequence[int]) -> "Layout":
        """Count ranks per node; order nodes by their lowest rank (whatever ids the record uses)."""
        counts = Counter(node_of_rank)
        return cls(tuple(counts[node] for node in dict.fromkeys(node_of_rank)))

    @property
    def nodes(self) -> int:
        return len(self.per_node)

    @property
    def world_size(self) -> int:
        return sum(self.per_node)

    @property
    def uneven(self) -> bool:
        return len(set(self.per_node)) > 1

    @property
    def ranks_per_node(self) -> int | list[int]:
        """The file's value: one count for an even layout, each node's count for an uneven one."""
        return list(self.per_node) if self.uneven else self.per_node[0]

    @property
    def label(self) -> str:
        rpn = "[" + ",".join(map(str, self.per_node)) + "]" if self.uneven else str(self.per_node[0])
        return f"{self.nodes}x{rpn}"

    def sort_key(self) -> tuple[int, int, tuple[int, ...]]:
        return (self.world_size, self.nodes, self.per_node)

    def as_mapping(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "ranks_per_node": self.ranks_per_node, "world_size": self.world_size}


def layout_of(p: Any) -> Layout:
    """A result row's layout (``DataFrame.itertuples``); per-node counts from its run's ``node_of_rank``.

    Result records only carry the most ranks on any node, which cannot tell [3, 1] from [2, 2];
    without a run record (no ``node_of_rank`` joined) only an even layout can be inferred.
    """
    if isinstance(p.node_of_rank, list) and p.node_of_rank:
        lay = Layout.from_node_of_rank(p.node_of_rank)
        if (lay.world_size, lay.nodes, max(lay.per_node)) != (p.world_size, p.nodes, p.ranks_per_node):
            raise TuneError(f"{p.source}: the result's layout ({p.nodes} node(s), at most {p.ranks_per_node} "
                            f"rank(s) per node, {p.world_size} ranks) disagrees with run {p.run_id}'s "
                            f"node_of_rank ({lay.label})")
        return lay
    if p.nodes * p.ranks_per_node == p.world_size:
        return Layout((p.ranks_per_node,) * p.nodes)
    raise TuneError(f"{p.source}: uneven layout ({p.world_size} ranks on {p.nodes} nodes) but no run record "
                    f"for run {p.run_id} says how many ranks each node holds (node_of_rank)")


# --------------------------------------------------------------------------- choosing

def tie_rule(margin: float = 0.0, tie: str = "spread") -> str:
    """The rule as one sentence (the file's ``tie_rule``)."""
    if tie == "median":
        limit = ("within 1.96 standard errors of the difference of the two p50s (each from its p5-p95 spread "
                 "over the square root of its sample count)")
        if margin:
            limit += f" or at most the best's p50 x {1 + margin:g}"
    else:
        limit = "at most the best's p95" if margin == 0 else f"at most max(the best's p95, its p50 x {1 + margin:g})"
    return (f"per measured size the best is the algorithm with the lowest p50 (median over its results); every "
            f"algorithm whose p50 is {limit} is tied with it, and the simplest tied one is chosen: the lowest "
            f"simplicity rank of the algorithms' traits (collbench --list --json; the library 0), equal ranks by "
            f"name; a range boundary between consecutive "
            f"measured sizes s1 < s2 with different choices is floor(sqrt(s1*s2)), the next range starting one "
            f"byte above")


# --------------------------------------------------------------------------- ranges and entries

@dataclass(frozen=True)
class Range:
    """Sizes ``min_bytes``..``max_bytes`` (inclusive; ``None`` = unbounded) use ``algo``."""

    min_bytes: int
    max_bytes: int | None
    algo: str
    line: int | None = field(default=None, compare=False)  # where a loaded file has it

    def contains(self, nbytes: int) -> bool:
        return self.min_bytes <= nbytes and (self.max_bytes is None or nbytes <= self.max_bytes)

    def as_mapping(self) -> dict[str, Any]:
        return {"min_bytes": self.min_bytes, "max_bytes": self.max_bytes, "algo": self.algo}

    @property
    def label(self) -> str:
        hi = "∞)" if self.max_bytes is None else f"{self.max_bytes}]"
        return f"[{self.min_bytes}, {hi} {self.algo}"


def ranges_from(choices: Sequence[SizeChoice]) -> list[Range]:
    """Ranges tiling [0, ∞) from per-size choices sorted by size.

    A boundary is drawn only where the choice changes (so equal neighbours merge), at the
    geometric mean of the two sizes: sweeps step sizes by a factor, and the geometric mean is
    the middle of that step on the log scale times are compared on.
    """
    out: list[Range] = []
    lo = 0
    for prev, nxt in zip(choices, choices[1:]):
        if nxt.choice.algo != prev.choice.algo:
            cut = math.isqrt(prev.bytes * nxt.bytes)
            out.append(Range(lo, cut, prev.choice.algo))
            lo = cut + 1
    out.append(Range(lo, None, choices[-1].choice.algo))
    return out


@dataclass
class Entry:
    """One (op, backend, device, layout) and its ranges; ``choices`` when colltune made it."""

    op: str
    backend: str
    device: str
    layout: Layout
    ranges: list[Range]
    choices: list[SizeChoice] = field(default_factory=list)
    line: int | None = None

    @property
    def key(self) -> tuple[str, str, str, Layout]:
        return (self.op, self.backend, self.device, self.layout)

    @property
    def label(self) -> str:
        return f"{self.op} {self.backend}/{self.device} {self.layout.label}"

    def range_for(self, nbytes: int) -> Range:
        return next(r for r in self.ranges if r.contains(nbytes))

    def as_mapping(self) -> dict[str, Any]:
        return {"op": self.op, "backend": self.backend, "device": self.device,
                "layout": _Flow(self.layout.as_mapping()), "ranges": [_Flow(r.as_mapping()) for r in self.ranges]}


@dataclass
class Tuning:
    """A tuning file's content (made by :func:`tune` or read by :func:`load_tuning`)."""

    entries: list[Entry]
    sources: list[str]
    runs: list[str]
    generated: str
    tie_rule: str
    statistic: str = STATISTIC
    tool: str = TOOL
    notes: list[str] = field(default_factory=list)  # comment lines at the top of the file
    used: int = 0  # results the choices rest on (colltune only)
    left_out: Counter[str] = field(default_factory=Counter)  # reason -> results (colltune only)

    def entry(self, op: str, backend: str, device: str, layout: Layout) -> Entry | None:
        return next((e for e in self.entries if e.key == (op, backend, device, layout)), None)

    def lookup(self, op: str, backend: str, device: str, layout: Layout, nbytes: int) -> Range | None:
        """The range a reader would use for this call, or None when no entry covers it."""
        e = self.entry(op, backend, device, layout)
        return None if e is None else e.range_for(nbytes)


# --------------------------------------------------------------------------- from results

def left_out_reasons(results: pd.DataFrame, ops: Sequence[str] | None = None) -> pd.Series:
    """Why each result cannot vote for an algorithm (None: it can); the first reason that applies."""
    reasons = [(results["is_p2p"], "point-to-point"), (~results["measured"], "skipped"),
               (results["wrong"] > 0, "wrong results"), (results["checked"] == False, "not verified (checked: false)"),  # noqa: E712
               (results["algo"] == AUTO_ALGO, "algo auto")]
    if ops is not None:
        reasons.append((~results["op"].isin(ops), "op not asked for (--op)"))
    out = pd.Series(None, index=results.index, dtype=object)
    for cond, why in reversed(reasons):
        out[cond] = why
    return out


def _value_text(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _is(values: pd.Series, value: Any) -> pd.Series:
    return values.isna() if value is None or (not isinstance(value, str) and pd.isna(value)) else values == value


def pick_variant(results: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Keep one value of each field of PREFERRED_VARIANT among ``results`` (one entry's results).

    The preferred value when present, else the most common one (first seen on a tie).
    Returns the kept results and the one value each field has in them.
    """
    kept = results
    for name, preferred in PREFERRED_VARIANT:
        counts = kept[name].value_counts(dropna=False, sort=False)
        if len(counts) > 1:
            value = preferred if preferred is not None and preferred in counts.index else counts.idxmax()
            kept = kept[_is(kept[name], value)]
    first = kept.iloc[0]
    return kept, {name: None if first[name] is None or (not isinstance(first[name], str) and pd.isna(first[name]))
                  else first[name] for name, _ in PREFERRED_VARIANT}


def _variant_notes(results: pd.DataFrame, used: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Comment lines for fields with several values in the results, saying which each entry used.

    ``used``: entry label -> the value of each field its choices rest on. Fields that do not
    apply to an op (redop of a broadcast, root of an allreduce: null) are not a second value.
    """
    notes = []
    for name, preferred in PREFERRED_VARIANT:
        seen = sorted({_value_text(v) for v in results[name].dropna()})
        if len(seen) < 2:
            continue
        line = f"the results hold several {name} values ({', '.join(seen)}): "
        if preferred is None:
            notes.append(line + "each entry is tuned on the results of its most common one: " + ", ".join(
                f"{label} {_value_text(vals[name])}" for label, vals in used.items()))
            continue
        others = [f"{label} {_value_text(vals[name])}" for label, vals in used.items()
                  if vals[name] is not None and vals[name] != preferred]
        line += f"entries are tuned on their {name} {_value_text(preferred)} results"
        if others:
            line += f"; entries without any on their most common {name}: " + ", ".join(others)
        notes.append(line)
    return notes


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry_sort_key(e: Entry) -> tuple[Any, ...]:
    op_order = list(_schema.ops())
    return (op_order.index(e.op), e.backend, e.device, e.layout.sort_key())


def make_entry(op: str, backend: str, device: str, layout: Layout, results: pd.DataFrame,
               margin: float = 0.0, tie: str = "spread") -> Entry:
    """One entry from its (variant-filtered) results: a choice per measured size, then ranges."""
    return _entries([(op, backend, device, layout)], pooled(results.assign(entry=0), ["entry", "bytes"]),
                    margin, tie)[0]


def _entries(keys: Sequence[tuple[str, str, str, Layout]], candidates: pd.DataFrame, margin: float,
             tie: str) -> list[Entry]:
    """Entries from their :func:`pooled` candidates per (``entry``: index into ``keys``, size)."""
    cands = _candidates(candidates)  # one itertuples over all: per size it costs more than the rest of colltune
    per_size: dict[int, list[SizeChoice]] = {}
    for (entry, nbytes), rows in sorted(candidates.groupby(["entry", "bytes"]).indices.items()):
        per_size.setdefault(entry, []).append(choose(int(nbytes), [cands[i] for i in rows], margin, tie))
    return [Entry(*keys[i], ranges_from(choices), choices) for i, choices in sorted(per_size.items())]


OTHER_VARIANT = "of another dtype/redop/in_place/root/buffers/mode/cache (see the file's comments)"


def tune(ds: Dataset, ops: Sequence[str] | None = None, margin: float = 0.0, generated: str | None = None,
         tie: str = "spread") -> Tuning:
    """Choose an algorithm per (op, backend, device, layout) and size range from ``ds``.

    Raises :class:`TuneError` when no result can be used (the message says what was left out).
    """
    mpis = backend_order(ds.results["mpi"].dropna())
    if len(mpis) > 1:  # the loader named their rows by MPI (load.name_mpis): no backend collbench could run
        raise TuneError(f"results of several MPIs ({', '.join(mpis)}): a tuning file is for one collbench build, "
                        "built against one MPI; tune on one MPI's results (collplot sets the MPIs side by side)")
    reasons = left_out_reasons(ds.results, ops)
    left_out: Counter[str] = Counter(reasons.dropna())
    usable = ds.results[reasons.isna()]
    if usable.empty:
        why = ", ".join(f"{n} {reason}" for reason, n in left_out.most_common()) or "none"
        raise TuneError(f"no usable collective results in {', '.join(map(str, ds.files))} (left out: {why})")
    usable = usable.assign(tuning_layout=[layout_of(p) for p in usable.itertuples(index=False)])
    keys: list[tuple[str, str, str, Layout]] = []
    used_results: list[pd.DataFrame] = []
    used_by_key: list[dict[str, Any]] = []
    for key, pts in usable.groupby(["op", "backend", "device", "tuning_layout"], sort=False):
        kept, used = pick_variant(pts)
        if len(kept) < len(pts):
            left_out[OTHER_VARIANT] += len(pts) - len(kept)
        used_results.append(kept.assign(entry=len(keys)))
        keys.append(key)
        used_by_key.append(used)
    used_all = pd.concat(used_results)
    # one groupby for every entry's candidates (one per entry or size costs more than the rest of colltune)
    entries = _entries(keys, pooled(used_all, ["entry", "bytes"]), margin, tie)
    used_variants = {e.label: used for e, used in zip(entries, used_by_key)}
    return Tuning(entries=sorted(entries, key=_entry_sort_key), sources=[str(f) for f in ds.files],
                  runs=list(dict.fromkeys(used_all["run_id"].astype(str))),
                  generated=generated or utc_now(), tie_rule=tie_rule(margin, tie),
                  notes=_variant_notes(usable, used_variants), used=len(used_all), left_out=left_out)


# --------------------------------------------------------------------------- writing

class _Flow(dict):  # type: ignore[type-arg]
    """A mapping written on one line: ``{min_bytes: 0, max_bytes: 2047, algo: library}``."""


class _FlowList(list):  # type: ignore[type-arg]
    """A list written on one line: ``[a, b]``."""


class _Quoted(str):
    """A string always written double-quoted (a timestamp must stay a string for every reader)."""


class _Dumper(yaml.SafeDumper):
    """Block style, with list items indented under their key (``entries:`` / ``  - op: …``)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


_Dumper.add_representer(_Flow, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))
_Dumper.add_representer(_FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
_Dumper.add_representer(_Quoted, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", str(v), style='"'))

HEADER = ("collbench tuning file: per (op, backend, device, layout), the algorithm for each message-size range",
          "format: results/README.md \"Tuning files\"; how the choice is made: docs/tuning.md \"How the algorithm is chosen\"")


def dump(t: Tuning) -> str:
    """The file's text: header comments, then the document, one range per line."""
    doc = {"schema": TUNING_SCHEMA, "generated": _Quoted(t.generated), "tool": t.tool,
           "sources": _FlowList(t.sources), "runs": _FlowList(t.runs), "statistic": t.statistic,
           "tie_rule": _Quoted(t.tie_rule), "entries": [e.as_mapping() for e in t.entries]}
    head = "".join(f"# {line}\n" for line in (*HEADER, *t.notes))
    # width: never fold a line, so a range or a flow list stays on the one line it starts on
    return head + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                            allow_unicode=True, width=1 << 30)


def write_tuning(path: Path, t: Tuning) -> Path:
    """Write atomically (a failed write leaves any previous file as it was), after reading it back."""
    text = dump(t)
    parse_tuning(text, str(path))  # what we write must be what load_tuning accepts
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# --------------------------------------------------------------------------- reading

class _Checker:
    """Validation errors as ``file:line: path: problem``, the line taken from the YAML node tree."""

    def __init__(self, where: str, root: yaml.Node | None) -> None:
        self.where, self.root = where, root

    def line(self, path: Sequence[str | int]) -> int | None:
        node = self.root
        if node is None:
            return None
        for part in path:
            nxt = None
            if isinstance(node, yaml.MappingNode):
                nxt = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                nxt = node.value[part]
            if nxt is None:
                break
            node = nxt
        return node.start_mark.line + 1

    def fail(self, path: Sequence[str | int], problem: str) -> TuningFileError:
        line = self.line(path)
        where = f"{self.where}:{line}" if line is not None else self.where
        name = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        return TuningFileError(f"{where}: {name + ': ' if name else ''}{problem}")

    def get(self, obj: Mapping[str, Any], path: tuple[str | int, ...], key: str,
            ok: Callable[[Any], bool], want: str) -> Any:
        if key not in obj:
            raise self.fail(path, f"field {key!r} is missing")
        value = obj[key]
        if not ok(value):
            raise self.fail((*path, key), f"must be {want}, got {value!r}")
        return value


MAX_RANKS = 1 << 20  # nodes, ranks: at most 2^20, as collbench --ranks (the schema's maximum)


def _is_int(v: Any, lo: int = 0, hi: int = (1 << 63) - 1) -> bool:
    """An integer as JSON Schema counts them (1024.0 too: the schema's "integer")."""
    whole = (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    return whole and lo <= v <= hi


def _is_count(v: Any) -> bool:
    return _is_int(v, 1, MAX_RANKS)


def _is_name(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _parse_layout(c: _Checker, obj: Any, path: tuple[str | int, ...]) -> Layout:
    if not isinstance(obj, dict):
        raise c.fail(path, "must be a mapping {nodes, ranks_per_node, world_size}")
    nodes = c.get(obj, path, "nodes", _is_count, f"an integer from 1 to {MAX_RANKS}")
    world = c.get(obj, path, "world_size", _is_count, f"an integer from 1 to {MAX_RANKS}")
    rpn = c.get(obj, path, "ranks_per_node",
                lambda v: _is_count(v) or (isinstance(v, list) and 0 < len(v) <= MAX_RANKS and all(map(_is_count, v))),
                f"an integer from 1 to {MAX_RANKS} or a list of each node's rank count")
    nodes, world = int(nodes), int(world)
    per_node = tuple(map(int, rpn)) if isinstance(rpn, list) else (int(rpn),) * nodes
    if len(per_node) != nodes or sum(per_node) != world:
        raise c.fail(path, f"ranks_per_node {rpn} does not fit nodes {nodes} and world_size {world}")
    return Layout(per_node)


def _parse_ranges(c: _Checker, obj: Any, path: tuple[str | int, ...]) -> list[Range]:
    if not isinstance(obj, list) or not obj:
        raise c.fail(path, "must be a non-empty list of {min_bytes, max_bytes, algo}")
    out: list[Range] = []
    for i, r in enumerate(obj):
        where = (*path, i)
        if not isinstance(r, dict):
            raise c.fail(where, "must be a mapping {min_bytes, max_bytes, algo}")
        lo = c.get(r, where, "min_bytes", _is_int, "an integer >= 0")
        hi = c.get(r, where, "max_bytes", lambda v: v is None or _is_int(v), "an integer >= 0 or null")
        lo, hi = int(lo), None if hi is None else int(hi)
        algo = c.get(r, where, "algo", _is_name, "an algorithm name")
        prev_max = out[-1].max_bytes if out else None  # never None here: an unbounded range must be last
        expected = 0 if prev_max is None else prev_max + 1
        if lo != expected:
            what = "start at 0" if not out else f"start at {expected}, one byte above the previous range's max_bytes"
            raise c.fail(where, f"min_bytes is {lo}, must {what} (ranges tile [0, ∞) without gaps or overlaps)")
        if hi is not None and hi < lo:
            raise c.fail(where, f"max_bytes {hi} is below min_bytes {lo}")
        if hi is None and i != len(obj) - 1:
            raise c.fail(where, "max_bytes null (unbounded) on a range that is not the last")
        out.append(Range(lo, hi, algo, c.line(where)))
    if out[-1].max_bytes is not None:
        raise c.fail((*path, len(obj) - 1), "the last range must end at max_bytes null (ranges tile [0, ∞))")
    return out


def _parse_entry(c: _Checker, obj: Any, path: tuple[str | int, ...]) -> Entry:
    if not isinstance(obj, dict):
        raise c.fail(path, "must be a mapping {op, backend, device, layout, ranges}")
    collectives = [name for name, f in _schema.ops().items() if f.kind == "collective"]
    op = c.get(obj, path, "op", lambda v: v in collectives, f"a collective op ({', '.join(collectives)})")
    backend = c.get(obj, path, "backend", _is_name, "a backend name")
    device = c.get(obj, path, "device", _is_name, "a device name")
    if "layout" not in obj:
        raise c.fail(path, "field 'layout' is missing")
    layout = _parse_layout(c, obj["layout"], (*path, "layout"))
    if "ranges" not in obj:
        raise c.fail(path, "field 'ranges' is missing")
    ranges = _parse_ranges(c, obj["ranges"], (*path, "ranges"))
    return Entry(op, backend, device, layout, ranges, line=c.line(path))


def parse_tuning(text: str, where: str = "<tuning>") -> Tuning:
    """Parse and validate a tuning file's text; :class:`TuningFileError` names file:line and field."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise TuningFileError(f"{where}{line}: not valid YAML ({getattr(err, 'problem', None) or err})") from None
    finally:
        loader.dispose()
    c = _Checker(where, root)
    if not isinstance(data, dict):
        raise c.fail((), "not a tuning file (expected a mapping with schema, entries, …)")
    if "schema" not in data:
        raise c.fail((), f"field 'schema' is missing (a tuning file says schema: {TUNING_SCHEMA})")
    if data["schema"] != TUNING_SCHEMA:
        raise c.fail(("schema",), f"unsupported version {data['schema']!r} (this reader knows {TUNING_SCHEMA!r})")
    # What wrote the file (generated, tool, sources, runs, statistic, tie_rule): kept as read, not checked
    # (results/schema/collbench-tuning-1.json); colltune writes them all.
    generated, tool, rule = data.get("generated", ""), data.get("tool", ""), data.get("tie_rule", "")
    sources, runs = data.get("sources") or [], data.get("runs") or []
    statistic = data.get("statistic", STATISTIC)
    raw = c.get(data, (), "entries", lambda v: isinstance(v, list) and bool(v), "a non-empty list")
    entries: list[Entry] = []
    for i, obj in enumerate(raw):
        e = _parse_entry(c, obj, ("entries", i))
        twin = next((x for x in entries if x.key == e.key), None)
        if twin is not None:
            raise c.fail(("entries", i), f"a second entry for {e.label} (the first is on line {twin.line})")
        entries.append(e)
    when = generated.strftime("%Y-%m-%dT%H:%M:%SZ") if isinstance(generated, datetime) else str(generated)
    return Tuning(entries=entries, sources=[str(x) for x in sources] if isinstance(sources, list) else [str(sources)],
                  runs=[str(r) for r in runs] if isinstance(runs, list) else [str(runs)], generated=when,
                  tie_rule=str(rule), statistic=str(statistic), tool=str(tool))


def load_tuning(path: str | Path) -> Tuning:
    """Read and validate a tuning file (schema, entries, ranges tiling [0, ∞))."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TuningFileError(f"{path}: cannot read ({err})") from None
    return parse_tuning(text, str(path))


def backends_of(t: Tuning) -> list[str]:
    """The backends a tuning file has entries for, :data:`.load.REFERENCE_BACKEND` (mpi) first."""
    return backend_order(e.backend for e in t.entries)


def run_command(path: str | Path, collbench: str = "collbench", backend: str | None = None) -> list[str]:
    """The command line that runs a tuning file's choices: ``mpirun`` on its largest layout (by world
    size, then nodes; ``--map-by ppr:K:node`` for an even multi-node one), every op it has entries
    for, ``--algo auto --tuning FILE`` (another layout uses the nearest entry), and the backend and
    device when not mpi/cpu. ``colltune --command FILE`` prints it (slurm/sweep.sh --tune says it).

    ``--algo auto`` runs within one backend (an entry is per backend): a file with entries of several
    backends (an mpi and a gloo sweep tuned together) gives the command of ``backend``'s entries,
    by default the first of :func:`backends_of` (mpi when it has entries)."""
    t = load_tuning(path)
    backend = backend or next(iter(backends_of(t)), None)
    entries = [e for e in t.entries if e.backend == backend]
    if not entries:
        has = ", ".join(backends_of(t)) or "none"
        raise TuningFileError(f"{path}: no entry of backend {backend!r} (it has: {has})")
    ops = ",".join(dict.fromkeys(e.op for e in entries))
    big = max(entries, key=lambda e: e.layout.sort_key())
    cmd = ["mpirun", "-np", str(big.layout.world_size)]
    if big.layout.nodes > 1 and not big.layout.uneven:
        cmd += ["--map-by", f"ppr:{big.layout.per_node[0]}:node"]
    cmd += [collbench, "--op", ops, "--algo", "auto", "--tuning", str(path)]
    if (big.backend, big.device) != ("mpi", "cpu"):
        cmd += ["--backend", big.backend, "--device", big.device]
    return cmd


# --------------------------------------------------------------------------- what colltune prints

def _p50(c: Candidate | None) -> str:
    return "—" if c is None else fmt_num(c.p50)


def entry_table(e: Entry) -> Table:
    """Per measured size: the choice, the fastest, the runner-up and what the choice costs."""
    rows = [[format_bytes(ch.bytes), ch.choice.algo, ch.best.algo, _p50(ch.best), fmt_num(ch.best.p95),
             ch.runner_up.algo if ch.runner_up else "—", _p50(ch.runner_up), f"{ch.ratio:.2f}", ", ".join(ch.tied)]
            for ch in e.choices]
    return Table.of(f"{e.label} (world size {e.layout.world_size})",
                    ["size", "choice", "best", "best p50 µs", "best p95 µs", "runner-up", "runner-up p50 µs",
                     "choice/best", "tied with best"], rows, align="rllrrlrrl",
                    note="ranges: " + "; ".join(r.label for r in e.ranges))


def summary_lines(t: Tuning) -> list[str]:
    """How much of the input the choices rest on, and what was left out and why."""
    lines = [f"{len(t.entries)} entr{'y' if len(t.entries) == 1 else 'ies'}, "
             f"{sum(len(e.ranges) for e in t.entries)} range(s) from {t.used} result(s) of {len(t.runs)} run(s)"]
    if t.left_out:
        lines.append("left out: " + ", ".join(f"{n} {reason}" for reason, n in t.left_out.most_common()))
    lines += t.notes
    return lines
