"""The Open MPI rules round trip (ctest mpi.ompi_rules): a sweep of two of Open MPI's own allreduce
algorithms (library:ring, library:basic_linear) -> colltune -> the coll/tuned dynamic rules file
it writes -> bench/collbench_raw, a plain MPI program with no collbench code, launched with that
file: pml/monitoring's per-pair message counts of one MPI_Allreduce must be the pattern of the
algorithm colltune chose at that size (tests/mpi/test_tuned_forcing.py's patterns and per-call
method). Neither algorithm is coll/tuned's own choice at 4 ranks and these sizes (recursive
doubling), and the control run without the file must not show the chosen pattern: the file, not
chance, made MPI_Allreduce run the winner. Then collbench refuses to measure under the file.

    test_ompi_rules.py COLLBENCH COLLBENCH_RAW MPIEXEC WORKDIR
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "analysis"))
import test_tuned_forcing as tf  # noqa: E402
from collbench_analysis import library_files as lf  # noqa: E402
from collbench_analysis.tune import Layout, load_tuning  # noqa: E402

N = 4
SIZES = (1024, 16384)  # bytes of float32
K = 2                  # extra calls of the second launch


def sweep_and_tune(launch: list[str], collbench: str, algos: str, wd: Path) -> tuple[Path, str]:
    """Sweeps allreduce at SIZES with `algos` on N ranks (`launch`: the launcher and its flags), runs
    colltune on it; (the tuning file, colltune's stdout)."""
    wd.mkdir(parents=True, exist_ok=True)
    results = wd / "sweep.jsonl"
    results.unlink(missing_ok=True)
    sweep = [*launch, collbench, "--op", "allreduce", "--algo", algos, "--interleave", "-b", str(SIZES[0]),
             "-e", str(SIZES[1]), "-f", str(SIZES[1] // SIZES[0]), "-n", "10", "-w", "2", "--quiet", "--json", str(results)]
    p = subprocess.run(sweep, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        tf.fail(f"{' '.join(sweep)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    tuning = wd / "tuning.yaml"
    p = subprocess.run([sys.executable, str(HERE.parents[1] / "analysis" / "colltune"), str(results), "-o", str(tuning)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        tf.fail(f"colltune failed:\n{p.stdout}\n{p.stderr}")
    return tuning, p.stdout


def raw_call(monitored, raw: str, nbytes: int, extra: list[str], tag: str, wd: Path) -> dict:
    """One MPI_Allreduce of collbench_raw's, per pair of ranks: two launches K calls apart (batch: one
    barrier, the calls, one 8-byte max over ranks), `extra` the launcher flags that load the files."""
    runs = []
    for calls in (1, 1 + K):
        prog = [raw, "--op", "allreduce", "--method", "batch", "-b", str(nbytes), "-e", str(nbytes),
                "-n", str(calls), "-w", "0", "--samples", "1"]
        runs.append(monitored(N, wd / f"{tag}_{nbytes}_{calls}", prog, extra)[1])
    return tf.Runner.difference(runs[0], runs[1], K, f"collbench_raw allreduce {nbytes} B {tag}")


def main(collbench: str, raw: str, mpiexec: str, workdir: str) -> None:
    wd = Path(workdir)
    tuning, said = sweep_and_tune([mpiexec, "-np", str(N), "--oversubscribe"], collbench,
                                  "library:ring,library:basic_linear", wd)
    rules = wd / "tuning.ompi-rules.conf"
    if not rules.exists() or f"coll_tuned_dynamic_rules_filename {rules}" not in said:
        tf.fail(f"colltune wrote no rules file and use line:\n{said}")
    parsed = lf.parse_ompi_rules(rules.read_text())
    with_rules = ["--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", "coll_tuned_dynamic_rules_filename", str(rules)]
    rn = tf.Runner(raw, mpiexec, wd, False)

    def one_call(nbytes: int, mca: list[str], tag: str) -> dict:
        return raw_call(rn.monitored, raw, nbytes, mca, tag, wd)

    patterns = {"basic_linear": lambda call, b: call == tf.basic_linear_allreduce(N, b),
                "ring": lambda call, b: tf.is_ring_allreduce(N, b // tf.F32, call)}
    chosen = load_tuning(tuning)
    for nbytes in SIZES:
        algo = chosen.lookup("allreduce", "mpi", "cpu", Layout((N,)), nbytes).algo
        name = algo.removeprefix("library:")
        alg, _, _ = lf.ompi_lookup(parsed, "allreduce", N, nbytes)
        if lf.OMPI_ALGORITHMS["allreduce"][alg] != name:
            tf.fail(f"{nbytes} B: the tuning file chose {algo}, the rules file says algorithm {alg}")
        call = one_call(nbytes, with_rules, "rules")
        tf.check(patterns[name](call, nbytes), f"collbench_raw under the rules file, {nbytes} B: {name}'s pattern", call)
        print(f"ok: {nbytes} B: the sweep chose {algo}; collbench_raw under the rules file ran it")
        if nbytes == SIZES[0]:
            control = one_call(nbytes, [], "control")
            tf.check(not patterns[name](control, nbytes),
                     f"collbench_raw without the rules file, {nbytes} B: Open MPI's own choice, not {name}", control)
    # A sweep under a rules file would record the file's algorithms under other names: refused.
    p = subprocess.run([mpiexec, "-np", "2", "--oversubscribe", *with_rules, collbench, "--op", "allreduce",
                        "-b", "8", "-e", "8", "-n", "1", "-w", "0"], capture_output=True, text=True, timeout=60)
    said = [ln for ln in p.stderr.splitlines() if ln.startswith("collbench:")]
    if p.returncode != 2 or len(said) != 1 or "coll_tuned_dynamic_rules_filename" not in said[0]:
        tf.fail(f"collbench under a rules file must refuse with one line and exit 2: {p.returncode}\n{p.stderr}")
    print(f"ok: {rn.launches} monitored launches; collbench refuses to measure under the rules file")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
