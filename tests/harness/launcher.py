"""How the harness tests start collbench under an MPI launcher: Open MPI's mpirun or MPICH's hydra
(mpiexec.hydra), told apart by the launcher's name with its links resolved (`mpirun` is an
alternatives link to one of them). Only what differs lives here; every test passes the MPIEXEC
its ctest was given (the build's COLLBENCH_MPI picked it). Stdlib only.

- flags: Open MPI's mpirun needs --oversubscribe for more ranks than cores and -x for a variable
  to reach the ranks of other nodes; hydra takes neither (it hands every rank the whole environment).
  A variable for the ranks alone (not the launcher: an LD_PRELOAD): -x NAME=VALUE, -genv NAME VALUE.
- rank processes: mpirun forks the ranks itself; hydra forks them from a hydra_pmi_proxy. Either
  way a rank is a descendant of the launcher whose environment names its rank (rank_var).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def mpi_of(mpiexec: str) -> str:
    """'mpich' for hydra (mpiexec.hydra, mpirun.mpich, mpiexec.mpich), else 'openmpi'."""
    name = Path(os.path.realpath(shutil.which(mpiexec) or mpiexec)).name
    return "mpich" if "hydra" in name or "mpich" in name else "openmpi"


def rank_var(mpiexec: str) -> str:
    """The variable that holds a rank's number in its environment."""
    return "PMI_RANK" if mpi_of(mpiexec) == "mpich" else "OMPI_COMM_WORLD_RANK"


def mpirun(mpiexec: str, np: int, args: list[str], export: tuple[str, ...] = (),
           env: dict[str, str] | None = None) -> list[str]:
    """The command line for `np` ranks of `args`; `export`: variables every rank must see; `env`:
    variables set for the ranks only, not the launcher (an LD_PRELOAD meant for the program):
    Open MPI's -x NAME=VALUE, hydra's -genv NAME VALUE."""
    if mpi_of(mpiexec) == "mpich":
        return [mpiexec, "-np", str(np), *(f for k, v in (env or {}).items() for f in ("-genv", k, v)), *args]
    return [mpiexec, "-np", str(np), "--allow-run-as-root", "--oversubscribe",
            *(f for v in export for f in ("-x", v)), *(f for k, v in (env or {}).items() for f in ("-x", f"{k}={v}")),
            *args]


def exited_with(mpiexec: str, returncode: int, status: int) -> bool:
    """Whether the launcher's exit status says a rank failed with `status`. Open MPI's mpirun
    returns the failing rank's status. Hydra returns that of whichever process it reports first
    once one fails: the rank's own, or one it then killed (9, 15: 3 of 5 and 1 of 20 runs of
    harness.timeout), or a peer that UCX aborted when its transfer to the exited rank failed (6,
    1 of ~8). So under hydra any failure counts; the failing rank's own status is in its error line
    and end record, which the tests check anyway."""
    if returncode == status:
        return True
    if mpi_of(mpiexec) == "mpich" and returncode != 0:
        print(f"launcher exit {returncode}, not {status}: hydra reported another process of the job first")
        return True
    return False


def rank_pids(mpiexec: str, launcher_pid: int, want: int, wait: float = 20) -> list[int]:
    """The pids of ranks 0..want-1 under the launcher process, waiting up to `wait` s for them
    (a rank counts once it has exec'd: its environment then names its rank)."""
    var = rank_var(mpiexec).encode() + b"="
    deadline = time.monotonic() + wait
    found: dict[int, int] = {}
    while time.monotonic() < deadline:
        found = {}
        for pid in descendants(launcher_pid):
            try:
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:  # gone, or not readable yet
                continue
            for e in env:
                if e.startswith(var) and e[len(var):].isdigit():
                    found[int(e[len(var):])] = pid
        if sorted(found) == list(range(want)):
            return [found[r] for r in range(want)]
        time.sleep(0.05)
    print(f"FAIL: want ranks 0..{want - 1} under launcher {launcher_pid}, found {found}", file=sys.stderr)
    sys.exit(1)


def descendants(pid: int) -> list[int]:
    out, pending = [], [pid]
    while pending:
        kids = subprocess.run(["pgrep", "-P", str(pending.pop())], capture_output=True, text=True).stdout.split()
        out += [int(k) for k in kids]
        pending += [int(k) for k in kids]
    return out
