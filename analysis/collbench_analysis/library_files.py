"""The libraries' own tuning files from a tuning file: where a ``library:ALGO`` variant is the choice,
the file Open MPI, MPICH or NCCL reads, so that an unmodified application runs the winner.

What each variant ran is read from its result records' ``library_config`` (the settings the
library ran with: results/README.md), never from a copy of collbench's variant tables:

- Open MPI ``coll_tuned_<coll>_algorithm: NAME`` -> a coll/tuned dynamic rules file (4.1's classic
  format, ``coll_tuned_dynamic_file.c``), NAME numbered as Open MPI numbers it (OMPI_ALGORITHMS);
- MPICH ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM: NAME`` -> ``MPIR_<Coll>_intra_NAME`` in MPICH's MPIR
  selection JSON, plus a CH4 selection JSON that sends those sizes to MPIR (ch4 selects first);
- NCCL ``NCCL_ALGO``/``NCCL_PROTO`` -> lines of the CSV that NCCL's example tuner plugin reads.

Sizes: for every op here the libraries' own message size is collbench's ``bytes`` (Open MPI: the
buffer for allreduce/bcast/reduce, comm size x count for allgather/alltoall/reduce_scatter_block;
MPICH's avg_msg_size / total_msg_size likewise; NCCL's tuner nRanks x count for allgather and
reducescatter). docs/library-tuning.md says what each file does and how to use it.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from .tune import Entry, Layout, Range, Tuning, TuneError, layout_of

VARIANT_PREFIX = "library:"


class LibraryFileError(TuneError):
    """A library file that cannot be written or read (one line)."""


# --------------------------------------------------------------------------- what each variant ran

@dataclass(frozen=True)
class Forced:
    """One library:ALGO variant as its records say it ran: the library, its name of the collective
    (coll/tuned's, MPIR's, NCCL's) and of the algorithm, and the other settings it ran with."""

    library: str  # "openmpi", "mpich", "nccl"
    coll: str
    algorithm: str
    settings: tuple[tuple[str, str], ...] = ()

    def setting(self, key: str) -> str | None:
        return dict(self.settings).get(key)


_OMPI_VAR = re.compile(r"coll_tuned_(\w+?)_algorithm")
_MPICH_VAR = re.compile(r"MPIR_CVAR_(\w+?)_INTRA_ALGORITHM")


def forced_from_config(config: Mapping[str, Any] | None) -> Forced | None:
    """The library choice a record's ``library_config`` forced, or None (a library's own choice)."""
    if not isinstance(config, Mapping):
        return None
    settings = tuple((str(k), str(v)) for k, v in config.items())
    for key, value in config.items():
        if m := _OMPI_VAR.fullmatch(key):
            return Forced("openmpi", m.group(1), str(value), settings)
        if m := _MPICH_VAR.fullmatch(key):
            return Forced("mpich", m.group(1).lower(), str(value), settings)
    if "NCCL_ALGO" in config:
        return Forced("nccl", "", str(config["NCCL_ALGO"]), settings)
    return None


def variants_of(results: pd.DataFrame) -> dict[tuple[str, str, str, Layout, str], Forced]:
    """(op, backend, device, layout, algo) -> what the library:ALGO results there ran with (their most
    common ``library_config``); variants without one (older records) are left out."""
    rows = results[results["algo"].astype(str).str.startswith(VARIANT_PREFIX) & results["measured"]]
    seen: dict[tuple[str, str, str, Layout, str], Counter[Forced]] = {}
    for p in rows.itertuples(index=False):
        forced = forced_from_config(p.library_config)
        if forced is not None:
            key = (p.op, p.backend, p.device, layout_of(p), p.algo)
            seen.setdefault(key, Counter())[forced] += 1
    return {k: c.most_common(1)[0][0] for k, c in seen.items()}


# --------------------------------------------------------------------------- Open MPI coll/tuned rules

# Open MPI 4.1's collective ids (COLLTYPE in ompi/mca/coll/base/coll_base_functions.h) for the
# collectives collbench calls, by coll/tuned's name (the <coll> of coll_tuned_<coll>_algorithm).
OMPI_COLL_IDS = {"allgather": 0, "allreduce": 2, "alltoall": 3, "bcast": 7, "gather": 9, "reduce": 11,
                 "reduce_scatter_block": 13, "scatter": 15}
OMPI_COLLCOUNT = 22  # COLLCOUNT: a file naming more collectives, or an id at or above it, is dropped
# Open MPI 4.1.4's algorithm numbers: the enumerators of coll_tuned_<coll>_algorithm in order (0 is
# "ignore": tuned's own fixed decision). tests/analysis/test_library_files.py checks them against the
# installed Open MPI (ompi_info --parsable), and ctest mpi.ompi_rules that the written numbers run
# the algorithm collbench measured.
OMPI_ALGORITHMS = {
    "allgather": ("ignore", "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"),
    "allreduce": ("ignore", "basic_linear", "nonoverlapping", "recursive_doubling", "ring", "segmented_ring",
                  "rabenseifner"),
    "alltoall": ("ignore", "linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"),
    "bcast": ("ignore", "basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree", "binomial",
              "knomial", "scatter_allgather", "scatter_allgather_ring"),
    "reduce_scatter_block": ("ignore", "basic_linear", "recursive_doubling", "recursive_halving", "butterfly"),
}
# The fan-in/out a forced algorithm runs with (4.1's coll_tuned_decision_dynamic.c passes the
# forced tree_fanout or chain_fanout as faninout, by collective); the file's rule must say the same.
_OMPI_FANINOUT = {"allgather": "tree_fanout", "allreduce": "tree_fanout", "alltoall": "tree_fanout",
                  "bcast": "chain_fanout", "reduce": "chain_fanout", "reduce_scatter_block": "chain_fanout"}
OMPI_DEFAULT_RULE = (0, 0, 0, 0)  # message size 0, algorithm 0: coll/tuned's own fixed decision


@dataclass(frozen=True)
class OmpiRule:
    msg_size: int
    alg: int
    faninout: int = 0
    segsize: int = 0
    why: str = ""  # the comment written beside it

    @property
    def values(self) -> tuple[int, int, int, int]:
        return (self.msg_size, self.alg, self.faninout, self.segsize)


@dataclass
class OmpiComm:
    size: int
    rules: list[OmpiRule]
    why: str = ""


def _int_setting(forced: Forced, key: str) -> int:
    text = forced.setting(key)
    try:
        return max(int(text), 0) if text is not None else 0
    except ValueError:
        return 0


def ompi_rule(forced: Forced, min_bytes: int, algo: str) -> OmpiRule:
    names = OMPI_ALGORITHMS.get(forced.coll)
    if names is None or forced.coll not in OMPI_COLL_IDS:
        raise LibraryFileError(f"{algo}: Open MPI's coll/tuned collective {forced.coll!r} has no rules-file id here")
    if forced.algorithm not in names:
        raise LibraryFileError(f"{algo}: coll_tuned_{forced.coll}_algorithm {forced.algorithm!r} is not one of "
                               f"Open MPI 4.1's ({', '.join(names[1:])})")
    var = f"coll_tuned_{forced.coll}_algorithm"
    return OmpiRule(min_bytes, names.index(forced.algorithm),
                    _int_setting(forced, f"{var}_{_OMPI_FANINOUT.get(forced.coll, 'tree_fanout')}"),
                    _int_setting(forced, f"{var}_segmentsize"), f"{algo} from {min_bytes} B")


def _merge(rules: Iterable[OmpiRule]) -> list[OmpiRule]:
    out: list[OmpiRule] = []
    for r in rules:
        if out and out[-1].values[1:] == r.values[1:]:
            continue  # the same choice as the rule before: one rule covers both ranges
        out.append(r)
    return out


def ompi_comm_rules(entry: Entry, variants: Mapping[str, Forced]) -> list[OmpiRule]:
    """An entry's ranges as message-size rules: the variant's algorithm where one of Open MPI's own is
    the choice, 0 (tuned decides) elsewhere; the first at message size 0 (the reader requires it)."""
    rules = []
    for r in entry.ranges:
        forced = variants.get(r.algo)
        if forced is not None and forced.library == "openmpi":
            rules.append(ompi_rule(forced, r.min_bytes, r.algo))
        else:
            rules.append(OmpiRule(r.min_bytes, 0, why=f"{r.algo} from {r.min_bytes} B: Open MPI's own choice"))
    return _merge(rules)


def ompi_comms(by_size: Mapping[int, list[OmpiRule]]) -> list[OmpiComm]:
    """Communicator-size entries for the measured world sizes. Open MPI applies the last entry whose
    size is not above the communicator's (the first one below all of them), so every size that was not
    measured (smaller ones, sub-communicators between measured sizes) gets an entry of its own saying
    "tuned decides": only the measured sizes run what was measured there."""
    default = [OmpiRule(*OMPI_DEFAULT_RULE, why="coll/tuned's own choice")]
    out: list[OmpiComm] = []
    for size in sorted(by_size):
        if not out and size > 1:
            out.append(OmpiComm(1, default, f"1 to {size - 1} ranks: not measured"))
        out.append(OmpiComm(size, by_size[size], f"{size} ranks: measured"))
        if size + 1 not in by_size:
            out.append(OmpiComm(size + 1, default, f"from {size + 1} ranks: not measured"))
    return out


@dataclass
class LibraryFile:
    """One file to write: its library, name suffix, text, and the lines that make an application use it."""

    library: str
    suffix: str
    text: str
    use: Callable[[Path], list[str]]
    notes: list[str] = field(default_factory=list)


def _choose_layouts(entries: Sequence[Entry], notes: list[str], what: str) -> dict[int, Entry]:
    """One entry per world size (a rules file knows communicator sizes, not nodes): the most nodes."""
    by_size: dict[int, Entry] = {}
    for e in sorted(entries, key=lambda e: e.layout.sort_key()):
        kept = by_size.get(e.layout.world_size)
        if kept is not None:
            notes.append(f"{what} {e.op} at {e.layout.world_size} ranks: the {e.layout.label} entry "
                         f"(more nodes) is written, {kept.layout.label} left out")
        by_size[e.layout.world_size] = e
    return by_size


def ompi_rules_file(tuning: Tuning, variants: Mapping[tuple, Forced]) -> LibraryFile | None:
    """The coll/tuned dynamic rules file, or None when no Open MPI variant is a choice anywhere."""
    notes: list[str] = []
    per_coll: dict[str, list[Entry]] = {}
    for e in tuning.entries:
        if e.backend != "mpi":
            continue
        mine = {r.algo: variants[(e.op, e.backend, e.device, e.layout, r.algo)] for r in e.ranges
                if (e.op, e.backend, e.device, e.layout, r.algo) in variants}
        if not any(f.library == "openmpi" for f in mine.values()):
            continue
        if e.device != "cpu":
            notes.append(f"Open MPI rules: {e.label} left out (a rules file cannot tell devices apart; cpu kept)")
            continue
        coll = next(f.coll for f in mine.values() if f.library == "openmpi")
        per_coll.setdefault(coll, []).append(e)
    if not per_coll:
        return None
    colls = []
    for coll in sorted(per_coll, key=OMPI_COLL_IDS.__getitem__ if set(per_coll) <= set(OMPI_COLL_IDS) else str):
        if coll not in OMPI_COLL_IDS:
            raise LibraryFileError(f"Open MPI's coll/tuned collective {coll!r} has no rules-file id here")
        by_size = {}
        for size, e in _choose_layouts(per_coll[coll], notes, "Open MPI rules:").items():
            mine = {r.algo: variants[k] for r in e.ranges
                    if (k := (e.op, e.backend, e.device, e.layout, r.algo)) in variants}
            by_size[size] = ompi_comm_rules(e, mine)
        colls.append((coll, ompi_comms(by_size)))
    return LibraryFile("openmpi", "ompi-rules.conf", dump_ompi_rules(colls, tuning.sources),
                       lambda p: ompi_use_lines(p.resolve()), notes)


def dump_ompi_rules(colls: Sequence[tuple[str, Sequence[OmpiComm]]], sources: Sequence[str] = ()) -> str:
    """Open MPI 4.1's classic format: whitespace-separated decimal integers, ``#`` to the end of a line
    a comment (coll_tuned_dynamic_file.c). Decimal without leading zeros: the reader scans with %li,
    which takes 010 for 8."""
    out = ["# Open MPI coll/tuned dynamic rules written by colltune (docs/library-tuning.md)",
           "# use: --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename THIS_FILE",
           "# rule = message size (bytes, from), algorithm (coll_tuned_<coll>_algorithm's number; 0: tuned decides), "
           "fan-in/out, segment size"]
    out += [f"# from: {s}" for s in sources]
    out.append(f"{len(colls)}  # collectives")
    for coll, comms in colls:
        out.append(f"{OMPI_COLL_IDS[coll]}  # {coll}")
        out.append(f"{len(comms)}  # communicator sizes")
        for c in comms:
            out.append(f"{c.size} {len(c.rules)}  # {c.why}")
            for r in c.rules:
                alg = OMPI_ALGORITHMS.get(coll, ("ignore",))[r.alg] if r.alg < len(OMPI_ALGORITHMS.get(coll, ())) else r.alg
                out.append(f"{r.msg_size} {r.alg} {r.faninout} {r.segsize}  # {alg}: {r.why}")
    return "\n".join(out) + "\n"


def ompi_use_lines(path: Path) -> list[str]:
    return [f"mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename {path} ...",
            f"export OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename={path}"]


# --- Open MPI 4.1's reader, in Python (to test what the writer writes against the grammar)

_LI = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def _ompi_tokens(text: str) -> Iterable[int]:
    """The numbers ompi_coll_base_file_getnext_long returns: fscanf("%li") after whitespace; any other
    character is skipped one at a time, and ``#`` skips to the end of its line."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        m = _LI.match(text, i)
        if m:
            yield int(m.group(0), 0) if not re.fullmatch(r"[+-]?0[0-7]+", m.group(0)) else int(m.group(0), 8)
            i = m.end()
            continue
        if i < n and text[i] == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        else:
            i += 1


def parse_ompi_rules(text: str) -> dict[int, list[tuple[int, list[tuple[int, int, int, int]]]]]:
    """Open MPI 4.1's reading of a rules file: {collective id: [(comm size, [(msg, alg, fan, seg)])]}.
    Raises LibraryFileError where Open MPI would drop the whole file (it does so silently)."""
    toks = iter(_ompi_tokens(text))

    def nxt(what: str) -> int:
        v = next(toks, None)
        if v is None or v < 0:
            raise LibraryFileError(f"Open MPI would ignore this rules file: cannot read {what}")
        return v

    out: dict[int, list] = {}
    ncol = nxt("the number of collectives")
    if ncol > OMPI_COLLCOUNT:
        raise LibraryFileError(f"Open MPI would ignore this rules file: {ncol} collectives > {OMPI_COLLCOUNT}")
    for _ in range(ncol):
        cid = nxt("a collective id")
        if cid >= OMPI_COLLCOUNT:
            raise LibraryFileError(f"Open MPI would ignore this rules file: collective id {cid}")
        comms = []
        for _ in range(nxt("the number of communicator sizes")):
            size, rules = nxt("a communicator size"), []
            for k in range(nxt("the number of message sizes")):
                rule = (nxt("a message size"), nxt("an algorithm"), nxt("a fan-in/out"), nxt("a segment size"))
                if k == 0 and rule[0] != 0:
                    raise LibraryFileError("Open MPI would ignore this rules file: a first message size is not 0")
                rules.append(rule)
            comms.append((size, rules))
        out[cid] = comms
    return out


def ompi_lookup(rules: Mapping[int, list], coll: str, comm_size: int, msg_size: int) -> tuple[int, int, int]:
    """(algorithm, fan-in/out, segment size) coll/tuned uses (ompi_coll_tuned_get_com_rule_ptr and
    _get_target_method_params): the last communicator size not above comm_size, else the first; the
    last message size not above msg_size; algorithm 0 when the collective has no rules."""
    comms = rules.get(OMPI_COLL_IDS[coll])
    if not comms:
        return (0, 0, 0)
    best = comms[0]
    for c in comms:
        if c[0] > comm_size:
            break
        best = c
    if not best[1]:
        return (0, 0, 0)
    pick = best[1][0]
    for r in best[1]:
        if r[0] > msg_size:
            break
        pick = r
    return pick[1:]


# --------------------------------------------------------------------------- MPICH selection JSON

@dataclass
class MpichDefaults:
    """MPICH's built-in selection trees (as its library carries them), and every algorithm and
    composition name its parsers know: a name outside them makes MPICH assert when it starts."""

    mpir: dict[str, Any]
    ch4: dict[str, Any]
    names: frozenset[str]
    source: str = ""


def mpich_defaults(lib: str | Path) -> MpichDefaults:
    """MPICH's default MPIR and CH4 selection JSON, read from its shared library (MPICH compiles them
    in as strings): a file that replaces them must cover every collective (MPICH asserts on a
    collective its tree does not cover), so colltune writes MPICH's own trees with its changes."""
    try:
        data = Path(lib).read_bytes()
    except OSError as err:
        raise LibraryFileError(f"{lib}: cannot read MPICH's library ({err.strerror or err})") from None
    trees = []
    for m in re.finditer(rb'\{"collective=', data):
        end = data.find(b"\0", m.start())
        try:
            trees.append(json.loads(data[m.start():end].decode()))
        except (ValueError, UnicodeDecodeError):
            continue
    names = frozenset(s.decode() for s in re.findall(rb"(?:algorithm|composition)=(MPI[A-Za-z0-9_]+)", data))

    def leaves(tree: Any) -> Iterable[str]:
        for k, v in tree.items():
            yield k
            if isinstance(v, dict):
                yield from leaves(v)

    mpir = [t for t in trees if any(k.startswith("algorithm=MPIR_") for k in leaves(t))]
    ch4 = [t for t in trees if any(k.startswith("composition=MPIDI_") for k in leaves(t))]
    if len(mpir) != 1 or len(ch4) != 1:
        raise LibraryFileError(f"{lib}: not an MPICH 4 library with its selection trees (found {len(mpir)} MPIR "
                               f"and {len(ch4)} CH4 tree(s))")
    return MpichDefaults(mpir[0], ch4[0], names, str(lib))


def find_mpich_library() -> Path | None:
    """MPICH's shared library where Debian (and most packages) put it."""
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"):
        for name in ("libmpich.so.12", "libmpich.so"):
            if (Path(d) / name).exists():
                return Path(d) / name
    return None


# MPICH's size key per collective (csel.c): allreduce/bcast/reduce's avg_msg_size is the buffer;
# allgather/reduce_scatter_block/alltoall's total_msg_size is comm size x count: collbench's bytes.
_MPICH_SIZE_KEY = {"allreduce": "avg_msg_size", "bcast": "avg_msg_size", "reduce": "avg_msg_size",
                   "allgather": "total_msg_size", "reduce_scatter_block": "total_msg_size",
                   "alltoall": "total_msg_size"}


def mpich_algorithm(forced: Forced) -> str:
    return f"MPIR_{forced.coll.capitalize()}_intra_{forced.algorithm}"


def _flat_composition(ch4_intra: Mapping[str, Any], coll: str) -> str:
    """The composition MPICH's default CH4 tree gives a communicator without node hierarchy (under
    "comm_hierarchy=any", or the collective's only one): it hands the call to MPIR's selection."""
    found: list[str] = []

    def walk(tree: Mapping[str, Any], under_any: bool) -> None:
        for k, v in tree.items():
            if k.startswith("composition=") and under_any:
                found.append(k)
            if isinstance(v, dict):
                walk(v, under_any or k == "comm_hierarchy=any")

    walk(ch4_intra, False)
    if not found:
        comps = set()

        def all_comps(tree: Mapping[str, Any]) -> None:
            for k, v in tree.items():
                if k.startswith("composition="):
                    comps.add(k)
                if isinstance(v, dict):
                    all_comps(v)

        all_comps(ch4_intra)
        found = sorted(comps) if len(comps) == 1 else []
    if len(set(found)) != 1:
        raise LibraryFileError(f"cannot tell which of MPICH's CH4 compositions hands {coll} to MPIR")
    return found[0]


def _sized_chain(by_size: Mapping[int, list[tuple[Range, Any]]], size_key: str, default: Any) -> dict[str, Any]:
    """A csel subtree: per measured communicator size N, sizes below N (not measured) -> default,
    N -> the ranges (each its leaf, or the default), then every larger size -> default. Keys are
    tried in order (MPICH keeps the file's order); "<=" only (csel reads "comm_size<" as "<=")."""
    chain: dict[str, Any] = {}
    prev = 0
    for n in sorted(by_size):
        if n - 1 > prev:
            chain[f"comm_size<={n - 1}"] = default
        sizes: dict[str, Any] = {}
        for r, leaf in by_size[n]:
            sizes[f"{size_key}=any" if r.max_bytes is None else f"{size_key}<={r.max_bytes}"] = leaf
        chain[f"comm_size<={n}"] = sizes
        prev = n
    chain["comm_size=any"] = default
    return chain


def mpich_files(tuning: Tuning, variants: Mapping[tuple, Forced], defaults: MpichDefaults) -> LibraryFile | None:
    """MPICH's MPIR selection file (the variant's MPIR algorithm where it is the choice) and CH4
    selection file (those sizes sent to MPIR; ch4 decides first), as one LibraryFile whose text is
    a JSON object {"mpir": …, "ch4": …} split by write_library_files; None without MPICH variants."""
    notes: list[str] = []
    per_coll: dict[str, list[tuple[Entry, dict[str, Forced]]]] = {}
    for e in tuning.entries:
        if e.backend != "mpi":
            continue
        mine = {r.algo: f for r in e.ranges
                if (f := variants.get((e.op, e.backend, e.device, e.layout, r.algo))) and f.library == "mpich"}
        if mine:
            per_coll.setdefault(next(iter(mine.values())).coll, []).append((e, mine))
    if not per_coll:
        return None
    mpir, ch4 = json.loads(json.dumps(defaults.mpir)), json.loads(json.dumps(defaults.ch4))
    for coll, items in per_coll.items():
        key = f"collective={coll}"
        if key not in mpir or "comm_type=intra" not in mpir[key] or key not in ch4 or "comm_type=intra" not in ch4[key]:
            raise LibraryFileError(f"MPICH's default selection has no intra-communicator tree for {coll}")
        size_key = _MPICH_SIZE_KEY.get(coll)
        if size_key is None:
            raise LibraryFileError(f"MPICH {coll}: no message-size key known for it here")
        mpir_default, ch4_default = mpir[key]["comm_type=intra"], ch4[key]["comm_type=intra"]
        flat = _flat_composition(ch4_default, coll)
        chosen = _choose_layouts([e for e, _ in items], notes, "MPICH selection:")
        mine_of = {id(e): m for e, m in items}
        mpir_by, ch4_by = {}, {}
        for n, e in chosen.items():
            mine = mine_of[id(e)]
            mpir_by[n], ch4_by[n] = [], []
            for r in e.ranges:
                f = mine.get(r.algo)
                if f is None:
                    mpir_by[n].append((r, mpir_default))
                    ch4_by[n].append((r, ch4_default))
                    continue
                name = mpich_algorithm(f)
                if name not in defaults.names:
                    raise LibraryFileError(f"{r.algo}: MPICH ({defaults.source or 'its library'}) has no algorithm "
                                           f"{name} (an unknown name makes MPICH assert)")
                mpir_by[n].append((r, {f"algorithm={name}": {}}))
                ch4_by[n].append((r, {flat: {}}))
        mpir[key]["comm_type=intra"] = _sized_chain(mpir_by, size_key, mpir_default)
        ch4[key]["comm_type=intra"] = _sized_chain(ch4_by, size_key, ch4_default)
    text = json.dumps({"mpir": mpir, "ch4": ch4})
    return LibraryFile("mpich", "mpich", text, lambda p: mpich_use_lines(*mpich_paths(p.resolve())), notes)


def mpich_paths(base: Path) -> tuple[Path, Path]:
    return base.with_name(base.name + "-mpir.json"), base.with_name(base.name + "-ch4.json")


def mpich_use_lines(mpir: Path, ch4: Path) -> list[str]:
    return [f"mpiexec -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE {mpir} "
            f"-genv MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE {ch4} ...",
            f"export MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE={mpir} MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE={ch4}"]


# --------------------------------------------------------------------------- NCCL tuner CSV

NCCL_COLLECTIVES = {"allreduce": "allreduce", "broadcast": "broadcast", "reduce": "reduce",
                    "allgather": "allgather", "reduce_scatter": "reducescatter"}
NCCL_MAX_BYTES = 4294967295  # the example tuner's "every size" upper bound
NCCL_HEADER = "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff"


def nccl_csv(tuning: Tuning, variants: Mapping[tuple, Forced]) -> LibraryFile | None:
    """Lines of NCCL's example tuner CSV for the ranges a NCCL variant with a protocol wins (a variant
    that left the protocol to NCCL has no line: the plugin needs one); None when there are none."""
    lines, notes = [], []
    for e in tuning.entries:
        for r in e.ranges:
            f = variants.get((e.op, e.backend, e.device, e.layout, r.algo))
            if f is None or f.library != "nccl":
                continue
            proto = f.setting("NCCL_PROTO")
            if not proto or e.op not in NCCL_COLLECTIVES:
                notes.append(f"NCCL tuner: {e.label} {r.label}: no line (the variant left the protocol to NCCL)")
                continue
            hi = NCCL_MAX_BYTES if r.max_bytes is None else min(r.max_bytes, NCCL_MAX_BYTES)
            lines.append(f"{NCCL_COLLECTIVES[e.op]},{r.min_bytes},{hi},{f.algorithm.lower()},{proto.lower()},-1,"
                         f"{e.layout.nodes},{e.layout.world_size},-1,-1")
    if not lines:
        return None if not notes else LibraryFile("nccl", "", "", lambda p: [], notes)
    text = "\n".join(["# NCCL example tuner plugin configuration written by colltune (docs/library-tuning.md)",
                      f"# {NCCL_HEADER}", *lines]) + "\n"
    return LibraryFile("nccl", "nccl-tuner.csv", text,
                       lambda p: [f"NCCL_TUNER_PLUGIN=/path/to/libnccl-tuner-example.so NCCL_TUNER_CONFIG_FILE={p.resolve()} ..."],
                       notes)


def parse_nccl_csv(text: str) -> list[tuple[str, int, int, str, str, int, int, int, int, int]]:
    """The example tuner's reading: ``#`` lines and empty lines skipped, 8 to 10 comma-separated fields."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        f = line.split(",")
        if not 8 <= len(f) <= 10 or any(" " in x for x in f):
            raise LibraryFileError(f"line {i}: not a tuner line ({line!r})")
        f += ["-1"] * (10 - len(f))
        out.append((f[0], int(f[1]), int(f[2]), f[3], f[4], *map(int, f[5:])))
    return out


# --------------------------------------------------------------------------- writing them all

def library_files(tuning: Tuning, results: pd.DataFrame, mpich: MpichDefaults | Callable[[], MpichDefaults] | None
                  ) -> list[LibraryFile]:
    """Every library file the tuning's choices call for (``mpich``: MPICH's defaults, or a function
    that reads them, asked only when MPICH variants are chosen)."""
    variants = variants_of(results)
    out = [f for f in (ompi_rules_file(tuning, variants), nccl_csv(tuning, variants)) if f is not None]
    if any(f.library == "mpich" for f in variants.values()):
        defaults = mpich() if callable(mpich) else mpich
        if defaults is None:
            raise LibraryFileError("MPICH variants are chosen, but MPICH's library (its default selection trees) "
                                   "was not found: give --mpich-lib PATH")
        f = mpich_files(tuning, variants, defaults)
        if f is not None:
            out.append(f)
    return out


def write_library_files(files: Sequence[LibraryFile], base: Path) -> list[tuple[Path, list[str]]]:
    """Writes each file beside ``base`` (the tuning file): BASE.ompi-rules.conf, BASE.mpich-mpir.json and
    BASE.mpich-ch4.json, BASE.nccl-tuner.csv. Returns (path, use lines) per file."""
    out = []
    stem = base.with_suffix("") if base.suffix in (".yaml", ".yml") else base
    for f in files:
        if not f.suffix:
            continue
        if f.library == "mpich":
            mpir, ch4 = mpich_paths(stem.with_name(stem.name + "." + f.suffix))
            both = json.loads(f.text)
            mpir.write_text(json.dumps(both["mpir"], indent=1) + "\n")
            ch4.write_text(json.dumps(both["ch4"], indent=1) + "\n")
            out.append((mpir, f.use(stem.with_name(stem.name + "." + f.suffix))))
            out.append((ch4, []))
            continue
        path = stem.with_name(stem.name + "." + f.suffix)
        if f.library == "openmpi":
            parse_ompi_rules(f.text)  # what Open MPI would drop silently is never written
        path.write_text(f.text)
        out.append((path, f.use(path)))
    return out
