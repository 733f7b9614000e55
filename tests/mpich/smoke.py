#!/usr/bin/env python3
"""collbench built against MPICH (COLLBENCH_MPI=mpich, scripts/ci-extra.sh mpich): the first checks.

    smoke.py COLLBENCH MPIEXEC_HYDRA WORKDIR

1. Under mpiexec.hydra, 1 and 2 ranks: every op and algorithm over 8 B - 64 KiB, verified (0
   wrong), schema-valid records; the run record names MPICH (versions.mpi, and versions.mpi_library
   in full: its device), and the library's
   points record MPICH's own control variables (library_config: MPIR_CVAR_DEVICE_COLLECTIVES and
   the op's MPIR_CVAR_<OP>_INTRA_ALGORITHM), not Open MPI's.
2. --list names MPICH's library:ALGO entries, exactly those test_mpich_forcing.py proves by their
   message patterns, and no han; --algo han is refused in one line naming Open MPI (exit 2).
3. The MPICH binary under Open MPI's mpirun (each rank an MPICH singleton): one line naming
   Open MPI's mpirun and MPICH, exit non-zero, within 60 s.
World sizes stop at 2 here: 3-5 ranks run in MPICH's ctest suite (ctest -L mpich, with the yield
shim: tests/README.md).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import collbench_check as cc  # noqa: E402
import test_mpich_forcing as forcing  # noqa: E402  (the variants it proves)


class Failed(Exception):
    pass


def run(cmd: list[str], timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def check_runs(collbench: str, hydra: str, work: Path) -> None:
    for n in (1, 2):
        out = work / f"np{n}.jsonl"
        p = run([hydra, "-n", str(n), collbench, "--op", "all", "--algo", "all", "-b", "8", "-e", "64K", "-f", "64",
                 "-n", "2", "-w", "1", "-c", "1", "--quiet", "--json", str(out)])
        if p.returncode != 0:
            raise Failed(f"mpiexec.hydra -n {n}: exit {p.returncode}\n{p.stdout}{p.stderr}")
        cc.check_file(str(out))
        recs = [json.loads(line) for line in out.read_text().splitlines()]
        (runrec,) = [r for r in recs if r["type"] == "run"]
        if not str(runrec["versions"]["mpi"]).startswith("MPICH") or "MPICH Device:" not in str(
                runrec["versions"].get("mpi_library")) or runrec["world_size"] != n:
            raise Failed(f"np {n}: run record versions.mpi {runrec['versions']['mpi']!r}, world {runrec['world_size']}")
        res = [r for r in recs if r["type"] == "result" and not r["skipped"]]
        wrong = [(r["op"], r["algo"], r["bytes"]) for r in res if r["wrong"]]
        if not res or wrong:
            raise Failed(f"np {n}: {len(res)} points, wrong: {wrong[:5]}")
        lib = [r for r in res if r["algo"] == "library"]
        for r in lib:
            names = list(r.get("library_config") or {})  # an object: variable -> value
            if "MPIR_CVAR_DEVICE_COLLECTIVES" not in names or any(k.startswith("coll_tuned") for k in names):
                raise Failed(f"np {n}: {r['op']} library_config {r.get('library_config')} is not MPICH's")
        print(f"smoke: mpiexec.hydra -n {n}: {len(res)} points verified, 0 wrong, {len(lib)} library points with "
              f"MPICH's variables; versions.mpi {runrec['versions']['mpi']!r}")


def check_variants(collbench: str, hydra: str) -> None:
    """--list shows MPICH's library:ALGO entries and nothing of Open MPI's: exactly the set whose
    message patterns test_mpich_forcing.py proves (its checks at 4 ranks name every one)."""
    p = run([collbench, "--list"])
    rows = [line.split() for line in p.stdout.splitlines() if line.strip()]
    listed = {(r[0], r[1]) for r in rows if len(r) >= 3 and r[2] == "mpi" and (r[1].startswith("library:") or r[1] == "han")}
    proven = {(op, "library:" + algo) for op, algos in forcing.checks(4, 1).items() for algo in algos}
    if p.returncode != 0 or listed != proven:
        raise Failed(f"--list under MPICH: mpi variants {sorted(listed)}, the forcing test proves {sorted(proven)} "
                     f"(exit {p.returncode})")
    p = run([hydra, "-n", "1", collbench, "--op", "allreduce", "--algo", "han", "-b", "8", "-e", "8"])
    lines = p.stderr.strip().splitlines()
    if p.returncode != 2 or len(lines) != 1 or "Open MPI" not in lines[0] or "MPICH" not in lines[0]:
        raise Failed(f"--algo han under MPICH: exit {p.returncode}, stderr {p.stderr!r} (one line naming Open MPI, exit 2)")
    print(f"smoke: --list shows MPICH's {len(listed)} variants, no han; --algo han refused: {lines[0][:120]}")


def check_mismatch(collbench: str, work: Path) -> None:
    mpirun = shutil.which("mpirun.openmpi")
    if not mpirun:
        print("smoke: no Open MPI mpirun here: the mismatch check is skipped")
        return
    env_args = ["--allow-run-as-root", "--oversubscribe"]
    p = run([mpirun, *env_args, "-np", "2", collbench, "--op", "allreduce", "--algo", "ring", "-b", "8", "-e", "8",
             "-n", "2", "--json", str(work / "mismatch.jsonl")], timeout=60)
    said = [line for line in p.stderr.splitlines() if line.startswith("collbench: error:")]
    if p.returncode == 0 or not said or "set by Open MPI's mpirun" not in said[0] or "MPICH" not in said[0] \
            or "mpiexec.hydra" not in said[0]:
        raise Failed(f"MPICH binary under Open MPI's mpirun: exit {p.returncode}, {p.stderr!r}")
    print(f"smoke: under Open MPI's mpirun: {said[0][:160]}...")


def main(argv: list[str]) -> int:
    collbench, hydra, workdir = argv
    work = Path(workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        check_runs(collbench, hydra, work)
        check_variants(collbench, hydra)
        check_mismatch(collbench, work)
    except (Failed, cc.CheckError, subprocess.TimeoutExpired) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print("smoke: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
