"""colltune's library files (collbench_analysis.library_files): Open MPI's coll/tuned rules (its 4.1
grammar and lookup, in Python), MPICH's selection JSON and NCCL's example tuner CSV, each written
where a library:ALGO variant wins. The round trips under the real libraries: ctest mpi.ompi_rules
and mpich.selection."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cb_synth import RunCtx, result, write_jsonl
from collbench_analysis import library_files as lf
from collbench_analysis.cli import colltune_main

R4, R2 = RunCtx("lf4", 1, 4), RunCtx("lf2", 1, 2)


def ompi(algo: str, coll: str = "allreduce", **more: str) -> dict[str, Any]:
    var = f"coll_tuned_{coll}_algorithm"
    return {"library_config": {"coll_tuned_use_dynamic_rules": "true", var: algo, f"{var}_segmentsize": "0",
                               f"{var}_tree_fanout": "4", f"{var}_chain_fanout": "4", **more}}


def sweep(ctx: RunCtx, op: str, times: dict[int, dict[str, float]], configs: dict[str, dict]) -> list[dict]:
    return [ctx.record()] + [result(ctx, op, algo, n, t, **configs.get(algo, {}))
                             for n, row in times.items() for algo, t in row.items()]


def colltune(tmp_path: Path, records: list[dict], *extra: str) -> tuple[int, Path]:
    src = write_jsonl(tmp_path / "in.jsonl", records)
    out = tmp_path / "tuning.yaml"
    return colltune_main([str(src), "-o", str(out), *extra]), out


# --------------------------------------------------------------------------- Open MPI

def ompi_sweep() -> list[dict]:
    cfg = {"library:ring": ompi("ring"), "library:basic_linear": ompi("basic_linear"),
           "library": {"library_config": {"coll_tuned_use_dynamic_rules": "false",
                                          "coll_tuned_allreduce_algorithm": "ignore"}}}
    four = {1024: {"library": 20.0, "library:ring": 30.0, "library:basic_linear": 10.0},
            1 << 20: {"library": 900.0, "library:ring": 500.0, "library:basic_linear": 2000.0},
            1 << 26: {"library": 9e4, "library:ring": 2e5, "library:basic_linear": 4e5}}
    two = {1024: {"library": 20.0, "library:ring": 10.0}, 1 << 20: {"library": 900.0, "library:ring": 500.0}}
    return sweep(R4, "allreduce", four, cfg) + sweep(R2, "allreduce", two, cfg)


def test_open_mpi_rules_run_the_winners_at_the_measured_sizes_only(tmp_path: Path, capsys) -> None:
    status, out = colltune(tmp_path, ompi_sweep())
    assert status == 0
    path = tmp_path / "tuning.ompi-rules.conf"
    said = capsys.readouterr().out
    assert f"--mca coll_tuned_dynamic_rules_filename {path}" in said
    assert f"OMPI_MCA_coll_tuned_dynamic_rules_filename={path}" in said
    rules = lf.parse_ompi_rules(path.read_text())
    assert list(rules) == [lf.OMPI_COLL_IDS["allreduce"]]
    look = lambda n, b: lf.ompi_lookup(rules, "allreduce", n, b)[0]  # noqa: E731
    ring, linear = lf.OMPI_ALGORITHMS["allreduce"].index("ring"), lf.OMPI_ALGORITHMS["allreduce"].index("basic_linear")
    assert (look(4, 1024), look(4, 1 << 20), look(4, 1 << 26)) == (linear, ring, 0)  # library won 64 MiB: tuned decides
    assert (look(2, 0), look(2, 1 << 30)) == (ring, ring)
    # Sizes not measured (1, 3: between 2 and 4; 5 and up) get tuned's own choice, not a neighbour's.
    assert [look(n, 1 << 20) for n in (1, 3, 5, 64)] == [0, 0, 0, 0]
    assert lf.ompi_lookup(rules, "allreduce", 4, 1 << 20) == (ring, 4, 0)  # the fan-out it ran with


def test_no_variant_won_no_rules_file(tmp_path: Path) -> None:
    recs = sweep(R4, "allreduce", {1024: {"library": 10.0, "library:ring": 30.0}}, {"library:ring": ompi("ring")})
    assert colltune(tmp_path, recs)[0] == 0
    assert not (tmp_path / "tuning.ompi-rules.conf").exists()
    assert colltune(tmp_path, ompi_sweep(), "--no-library-files")[0] == 0
    assert not (tmp_path / "tuning.ompi-rules.conf").exists()


def test_open_mpi_grammar_edge_cases() -> None:
    # Open MPI 4.1 scans numbers with %li (0x10 is 16, 010 is 8), skips any other character one at
    # a time and a '#' to the end of its line; the writer writes plain decimals and line comments.
    text = "# 9 9 9\n1 2 # allreduce 7\n 1\n 0x4 word 2\n0 0 0 0\n 010 3 0 0\n"
    assert lf.parse_ompi_rules(text) == {2: [(4, [(0, 0, 0, 0), (8, 3, 0, 0)])]}
    # Below the first communicator size, Open MPI uses the first entry: why colltune writes one at 1.
    assert lf.ompi_lookup(lf.parse_ompi_rules(text), "allreduce", 2, 100) == (3, 0, 0)
    for bad, why in (("1 2 1 4 1 64 3 0 0", "first message size"), ("1 2 1 4 1 0 -3 0 0", "algorithm"),
                     ("1 2 1 4 2 0 3 0 0", "message size"), ("23", "collectives"), ("1 22", "collective id"), ("", "")):
        with pytest.raises(lf.LibraryFileError, match=why):
            lf.parse_ompi_rules(bad)


def test_written_rules_are_plain_decimals_with_line_comments(tmp_path: Path) -> None:
    assert colltune(tmp_path, ompi_sweep())[0] == 0
    for line in (tmp_path / "tuning.ompi-rules.conf").read_text().splitlines():
        data = line.split("#", 1)[0].split()
        assert all(t.isdigit() and (t == "0" or not t.startswith("0")) for t in data), line


@pytest.mark.skipif(shutil.which("ompi_info") is None, reason="no Open MPI here")
def test_algorithm_numbers_are_the_installed_open_mpis() -> None:
    out = subprocess.run(["ompi_info", "--param", "coll", "tuned", "--level", "9", "--parsable"],
                         capture_output=True, text=True, check=True).stdout
    for coll, names in lf.OMPI_ALGORITHMS.items():
        prefix = f"mca:coll:tuned:param:coll_tuned_{coll}_algorithm:enumerator:value:"
        have = dict(line[len(prefix):].split(":", 1) for line in out.splitlines() if line.startswith(prefix))
        assert {int(k): v for k, v in have.items()} == dict(enumerate(names)), coll


# --------------------------------------------------------------------------- MPICH

def mpich(algo: str, coll: str = "ALLREDUCE") -> dict[str, Any]:
    return {"library_config": {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", f"MPIR_CVAR_{coll}_INTRA_ALGORITHM": algo,
                               "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}}


DEFAULTS = lf.MpichDefaults(
    mpir={"collective=allreduce": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_x": {}}},
                                   "comm_type=inter": {"algorithm=MPIR_Allreduce_inter_y": {}}},
          "collective=barrier": {"algorithm=MPIR_Barrier_intra_smp": {}}},
    ch4={"collective=allreduce": {"comm_type=intra": {
        "comm_size=node_comm_size": {"composition=MPIDI_Allreduce_intra_composition_gamma": {}},
        "comm_size=any": {"comm_hierarchy=parent": {"composition=MPIDI_Allreduce_intra_composition_alpha": {}},
                          "comm_hierarchy=any": {"composition=MPIDI_Allreduce_intra_composition_beta": {}}}}}},
    names=frozenset({"MPIR_Allreduce_intra_recursive_doubling", "MPIR_Allreduce_intra_x"}))


def test_mpich_selection_sends_the_winning_sizes_to_the_mpir_algorithm() -> None:
    from collbench_analysis.load import load
    from collbench_analysis import tune
    import tempfile

    recs = sweep(R4, "allreduce", {1024: {"library": 20.0, "library:recursive_doubling": 10.0},
                                   1 << 20: {"library": 500.0, "library:recursive_doubling": 900.0}},
                 {"library:recursive_doubling": mpich("recursive_doubling")})
    with tempfile.TemporaryDirectory() as d:
        ds = load([write_jsonl(Path(d) / "in.jsonl", recs)])
        t = tune.tune(ds)
        (f,) = lf.library_files(t, ds.results, DEFAULTS)
    both = __import__("json").loads(f.text)
    intra = both["mpir"]["collective=allreduce"]["comm_type=intra"]
    default = DEFAULTS.mpir["collective=allreduce"]["comm_type=intra"]
    # Keys are tried in order: 1-3 ranks MPICH's own, 4 ranks the ranges, then MPICH's own again.
    assert list(intra) == ["comm_size<=3", "comm_size<=4", "comm_size=any"]
    assert intra["comm_size<=3"] == default and intra["comm_size=any"] == default
    four = intra["comm_size<=4"]
    (small, rest) = list(four)
    assert small.startswith("avg_msg_size<=") and rest == "avg_msg_size=any"
    assert four[small] == {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}} and four[rest] == default
    assert both["mpir"]["collective=barrier"] == DEFAULTS.mpir["collective=barrier"]  # every collective kept
    assert both["mpir"]["collective=allreduce"]["comm_type=inter"] == DEFAULTS.mpir["collective=allreduce"]["comm_type=inter"]
    ch4 = both["ch4"]["collective=allreduce"]["comm_type=intra"]["comm_size<=4"]
    assert ch4[small] == {"composition=MPIDI_Allreduce_intra_composition_beta": {}}  # the flat one: to MPIR
    # A name MPICH's library does not know would make MPICH assert at MPI_Init: refused instead.
    unknown = lf.MpichDefaults(DEFAULTS.mpir, DEFAULTS.ch4, frozenset())
    with pytest.raises(lf.LibraryFileError, match="no algorithm MPIR_Allreduce_intra_recursive_doubling"):
        lf.mpich_files(t, lf.variants_of(ds.results), unknown)


def test_mpich_without_its_library_is_one_line_and_status_2(tmp_path: Path, capsys) -> None:
    recs = sweep(R4, "allreduce", {1024: {"library": 20.0, "library:recursive_doubling": 10.0}},
                 {"library:recursive_doubling": mpich("recursive_doubling")})
    not_mpich = tmp_path / "libnot.so"
    not_mpich.write_bytes(b"\0not a library\0")
    status, _ = colltune(tmp_path, recs, "--mpich-lib", str(not_mpich))
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "not an MPICH 4 library" in err[0]


@pytest.mark.skipif(lf.find_mpich_library() is None, reason="no MPICH here")
def test_mpich_defaults_come_from_its_library() -> None:
    d = lf.mpich_defaults(lf.find_mpich_library())
    assert "collective=allreduce" in d.mpir and "collective=allreduce" in d.ch4
    assert {"MPIR_Allreduce_intra_recursive_doubling", "MPIDI_Allreduce_intra_composition_beta"} <= d.names


# --------------------------------------------------------------------------- NCCL

def test_nccl_tuner_csv_lines_for_the_variants_with_a_protocol(tmp_path: Path, capsys) -> None:
    g = RunCtx("nccl8", 2, 4, backend="nccl", device="cuda")
    nccl = lambda a, p=None: {"library_config": {"NCCL_ALGO": a, **({"NCCL_PROTO": p} if p else {})}}  # noqa: E731
    recs = sweep(g, "allgather", {1 << 10: {"library": 30.0, "library:ring_ll": 10.0},
                                  1 << 20: {"library": 300.0, "library:ring_ll": 400.0}},
                 {"library:ring_ll": nccl("Ring", "LL")})
    recs += sweep(g, "allreduce", {1 << 10: {"library": 30.0, "library:ring": 10.0}}, {"library:ring": nccl("Ring")})
    assert colltune(tmp_path, recs)[0] == 0
    said = capsys.readouterr().out
    lines = lf.parse_nccl_csv((tmp_path / "tuning.nccl-tuner.csv").read_text())
    # allgather's bytes are the whole n-chunk array: what the example tuner compares (nRanks x count x size).
    assert lines == [("allgather", 0, 32768, "ring", "ll", -1, 2, 8, -1, -1)]
    assert "left the protocol to NCCL" in said and "NCCL_TUNER_CONFIG_FILE=" in said
    with pytest.raises(lf.LibraryFileError):
        lf.parse_nccl_csv("allreduce,0,1,ring,ll\n")
