"""MPICH's selection round trip (ctest mpich.selection, label mpich): a sweep of MPICH's own
recursive-doubling allreduce (library:recursive_doubling, so every size chooses it) -> colltune ->
the MPIR and CH4 selection files it writes (MPICH's built-in trees, read from its library, with
4-rank allreduce sent to MPIR and there to recursive doubling) -> bench/raw_mpi.cpp, a plain MPI
program with no collbench code, under mpiexec.hydra with both files: the UCX sends of one
MPI_Allreduce per pair of ranks (tests/mpich/test_mpich_forcing.py's counter and patterns) must
be recursive doubling's, and without the files they must not be (the control). MPICH loads both
files at MPI_Init, where an unknown key or name asserts: every file colltune writes is loaded here.
Not proven here: UCX counting needs MPIR_CVAR_NOLOCAL=1, under which the MPIR file alone reaches
MPIR; that the CH4 file moves a shared-memory one-node allreduce is not seen in messages.

    test_mpich_selection.py COLLBENCH RAW MPIEXEC_HYDRA WORKDIR COUNT_SHIM YIELD_SHIM
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[0] / "mpi"))
import test_mpich_forcing as mf  # noqa: E402
import test_ompi_rules as rt  # noqa: E402  (the round trip's sweep, colltune and per-call launches)
import test_tuned_forcing as tf  # noqa: E402


def main(collbench: str, raw: str, hydra: str, workdir: str, count_shim: str, yield_shim: str) -> None:
    wd = Path(workdir)
    shims = f"{count_shim}:{yield_shim}"
    tuning, said = rt.sweep_and_tune([hydra, "-np", str(rt.N), "-genv", "LD_PRELOAD", yield_shim], collbench,
                                     "library:recursive_doubling", wd)
    mpir, ch4 = wd / "tuning.mpich-mpir.json", wd / "tuning.mpich-ch4.json"
    if not (mpir.exists() and ch4.exists()) or f"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE {mpir}" not in said:
        tf.fail(f"colltune wrote no MPICH selection files and use line:\n{said}")
    files = ["-genv", "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", str(mpir),
             "-genv", "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE", str(ch4)]
    rn = mf.UcpRunner(raw, hydra, wd, shims, False)
    n = rt.N
    for nbytes in rt.SIZES:
        call = rt.raw_call(rn.monitored, raw, nbytes, files, "files", wd)
        tf.check(call == tf.rd_allreduce(n, nbytes), f"raw allreduce under the selection files, {nbytes} B: "
                 "recursive doubling (whole vectors to XOR partners)", call)
        print(f"ok: {nbytes} B: the sweep chose library:recursive_doubling; the plain program under the files ran it")
    control = rt.raw_call(rn.monitored, raw, rt.SIZES[1], [], "control", wd)
    tf.check(control != tf.rd_allreduce(n, rt.SIZES[1]),
             f"raw allreduce without the files, {rt.SIZES[1]} B: MPICH's own choice, not recursive doubling", control)
    print(f"ok: {rn.launches} counted launches")


if __name__ == "__main__":
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
