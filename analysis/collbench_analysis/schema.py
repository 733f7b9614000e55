"""The ``collbench/1`` JSON Schema (results/schema/collbench-1.json), as Python needs it.

The schema file is the one definition of a record, and its ``x-collbench-*`` annotations carry
the per-op facts (busbw factor, chunking, point identity) that C++ keeps in
collectives/op_traits.hpp; a C++ unit test checks the two agree. The analysis loader and the
harness' test checker (tests/harness/collbench_check.py) both validate through this module, so
neither holds a field table or an op fact of its own.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping

import jsonschema

# Beside this file: in the checkout a link to results/schema/, in an installed package (pip,
# cmake --install) a copy.
SCHEMA_FILE = Path(__file__).resolve().parent / "collbench-1.json"
RECORD_TYPES = ("run", "result", "workload", "end", "ddp_measured")

_VALIDATOR = jsonschema.Draft202012Validator
_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
               "object": "an object", "array": "a list", "null": "null"}


@lru_cache(maxsize=None)
def document() -> dict[str, Any]:
    """The parsed schema file (do not modify)."""
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        return json.load(f)


def schema_id() -> str:
    """The version string every record carries (``collbench/1``)."""
    return document()["properties"]["schema"]["const"]


@dataclass(frozen=True)
class OpFacts:
    """One row of ``x-collbench-ops``."""

    op: str
    kind: str  # "collective" or "p2p"
    reduces: bool
    rooted: bool
    size_chunks_per_rank: bool  # the size splits into n chunks (else one)
    busbw_mul: int
    busbw_sub: int

    def size_chunks(self, n: int) -> int:
        return n if self.size_chunks_per_rank else 1

    def busbw_factor(self, n: int) -> float:
        """busbw / algbw on n ranks: mul · (n − sub) / n (nccl-tests doc/PERFORMANCE.md)."""
        return self.busbw_mul * (n - self.busbw_sub) / n


@lru_cache(maxsize=None)
def ops() -> dict[str, OpFacts]:
    """Every op a record may name, in table order."""
    out = {}
    for row in document()["x-collbench-ops"]:
        out[row["op"]] = OpFacts(row["op"], row["kind"], row["reduces"], row["rooted"], row["size_chunks"] == "n",
                                 row["busbw_factor"]["mul"], row["busbw_factor"]["sub"])
    return out


def p2p_ops() -> frozenset[str]:
    return frozenset(name for name, f in ops().items() if f.kind == "p2p")


def point_identity() -> tuple[str, ...]:
    """The fields that identify a measured point (resume keys, dedupe, compare)."""
    return tuple(document()["x-collbench-point-identity"])


def dtype_sizes() -> dict[str, int]:
    return dict(document()["x-collbench-dtype-size"])


@lru_cache(maxsize=None)
def _validator(kind: str, strict: bool) -> Any:
    defs = copy.deepcopy(document()["$defs"])
    if strict:
        # The writer must write only declared fields, so a new field cannot skip the schema.
        for d in defs.values():
            if "properties" in d:
                d["unevaluatedProperties"] = False
        defs["run"]["properties"]["versions"]["unevaluatedProperties"] = False
    return _VALIDATOR({"$defs": defs, "$ref": f"#/$defs/{kind}"})


def _field(path: Iterator[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(err: jsonschema.ValidationError) -> str:
    """One line naming the field, in the loader's words."""
    field = _field(err.absolute_path)
    got = err.instance
    if err.validator == "required":
        missing = next(k for k in err.validator_value if k not in err.instance)
        return f"field {_field([*err.absolute_path, missing])!r} is missing"
    if err.validator == "unevaluatedProperties":
        return f"{field or 'record'}: {err.message}"
    if err.validator == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        return f"field {field!r} must be {' or '.join(_TYPE_WORDS.get(w, w) for w in want)}, got {got!r}"
    if err.validator in ("enum", "const"):
        allowed = err.validator_value if err.validator == "enum" else [err.validator_value]
        return f"field {field!r} must be one of {', '.join(json.dumps(a) for a in allowed)}, got {got!r}"
    if err.validator in ("minimum", "maximum"):
        op = ">=" if err.validator == "minimum" else "<="
        return f"field {field!r} must be {op} {err.validator_value}, got {got!r}"
    if err.validator == "pattern":
        return f"field {field!r} must match {err.validator_value}, got {got!r}"
    return f"field {field!r}: {err.message}"


def first_error(record: Mapping[str, Any], strict: bool = False) -> str | None:
    """Why ``record`` (a run, result or end record, by its ``type``) is not valid, or None.

    ``strict`` also refuses fields the schema does not declare: for checking the writer, not
    for reading (readers ignore unknown fields, which version 1 may add).
    """
    kind = record.get("type")
    if kind not in RECORD_TYPES:
        return f"field 'type' must be one of {', '.join(RECORD_TYPES)}, got {kind!r}"
    return definition_error(record, kind, strict)


def definition_error(instance: Any, name: str, strict: bool = False) -> str | None:
    """Why ``instance`` is not a valid ``$defs/<name>`` (``run``, ``algorithm``: an entry of
    ``collbench --list --json``, …), or None; ``strict`` as in :func:`first_error`."""
    # Lax first: a field that fails counts as unevaluated too, and its own error says more.
    for check in (False, True) if strict else (False,):
        err = jsonschema.exceptions.best_match(_validator(name, check).iter_errors(instance))
        if err is not None:
            return _describe(err)
    return None
