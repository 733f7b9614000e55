"""MPICH's library:ALGO entries (collectives/backends/mpi/mpi_mpich.cpp) really run the algorithm
they name: every message each rank hands UCX is counted per destination (tests/mpich/ucp_count.cpp,
preloaded; MPIR_CVAR_NOLOCAL=1 so messages between ranks of this one machine go through UCX
too), and each algorithm's pattern is checked at 4 ranks and at 5 (not a power of two).
Stdlib only; the MPICH side of tests/mpi/test_tuned_forcing.py, whose per-call method it uses:
each case is launched with 1 and 1 + K calls and the difference is one call's messages.

    test_mpich_forcing.py RUNNER MPIEXEC_HYDRA WORKDIR COUNT_SHIM YIELD_SHIM COLLBENCH [--show]

The planted wrong forcing: every algorithm's check is applied to every other algorithm's
measured pattern of the same op (an entry that ran the wrong algorithm, or whose forcing did
nothing, looks exactly like that) and must reject it; MPICH's own choice ("library") must differ
from at least one forced pattern. Refusals: where MPICH's check refuses (recursive doubling
allgather and the noncommutative reduce-scatter at 5 ranks) the entry must refuse naming MPICH,
never run something else. Then collbench itself: the records' library_config (what MPICH chose
with, what each variant forced), MPICH's refusal as a skip with its reason, records valid by the
schema.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mpi"))
import test_tuned_forcing as tf  # noqa: E402  (Runner.per_call, the shared patterns, fail)

fail = tf.fail
F32 = 4


class UcpRunner(tf.Runner):
    def __init__(self, runner: str, mpiexec: str, workdir: Path, shims: str, show: bool) -> None:
        super().__init__(runner, mpiexec, workdir, show)
        self.shims = shims

    def launch(self, n: int, op: str, algo: str, count: int, calls: int, seg: int) -> tuple[str, dict]:
        d = self.workdir / f"n{n}_{op}_{algo.replace(':', '_')}_{calls}"
        return self.monitored(n, d, [self.runner, op, algo, str(count), str(calls)])

    def monitored(self, n: int, d: Path, program: list[str], env: list[str] = ()) -> tuple[str, dict]:
        """Runs `program` on n ranks counting UCX sends (`env`: more -genv NAME VALUE): (stdout, {(src, dst): (bytes, messages)})."""
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("rank*.txt"):
            f.unlink()
        cmd = [self.mpiexec, "-np", str(n), "-genv", "MPIR_CVAR_NOLOCAL", "1", "-genv", "COLLBENCH_UCP_COUNT_DIR", str(d),
               "-genv", "LD_PRELOAD", self.shims, *env, *program]
        self.launches += 1
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        files = {int(re.fullmatch(r"rank(\d+)\.txt", f.name).group(1)): f.read_text().split("\n")
                 for f in d.glob("rank*.txt")}
        if sorted(files) != list(range(n)):
            fail(f"ucp_count wrote files for ranks {sorted(files)} of {n} in {d}: is the shim preloaded?")
        rank_of = {}
        for r, lines in files.items():
            (self_line,) = [ln for ln in lines if ln.startswith("self ")]
            rank_of[self_line.split()[1]] = r
        sent: dict[tuple[int, int], tuple[int, int]] = {}
        for r, lines in files.items():
            for ln in lines:
                if ln.startswith("to "):
                    _, key, msgs, nbytes = ln.split()
                    if key not in rank_of:
                        fail(f"rank {r} sent to worker {key}, which is no rank's: the address layout changed?")
                    sent[(r, rank_of[key])] = (int(nbytes), int(msgs))
                elif ln.startswith("am ") and ln != "am 0":
                    fail(f"rank {r} sent active messages ({ln}): counted nowhere in the pattern")
        return p.stdout, sent


def xor_pattern(n: int, real, steps: list[tuple[int, int, int]]) -> dict:
    """steps: (partner mask, messages, bytes) between the pof2 'real' ranks v and v ^ mask."""
    pof2 = 1 << (n.bit_length() - 1)
    out = {}
    for v in range(pof2):
        for mask, m, b in steps:
            out[(real(v), real(v ^ mask))] = (m, b)
    return out


def folded(n: int):
    """MPICH's fold of the extra ranks (rank < 2*rem: even into odd): the real rank of pof2-rank v."""
    rem = n - (1 << (n.bit_length() - 1))
    return rem, (lambda v: v * 2 + 1 if v < rem else v + rem)


def checks(n: int, count: int) -> dict[str, dict[str, tuple[str, callable]]]:
    """Per op, per algorithm: (what it must look like, predicate on one call's {(src, dst): (msgs, bytes)})."""
    b = count * F32
    pof2 = n & (n - 1) == 0
    rem, real = folded(n)
    fold = {**{(2 * i, 2 * i + 1): (1, b) for i in range(rem)}, **{(2 * i + 1, 2 * i): (1, b) for i in range(rem)}}
    rsag = {**fold, **xor_pattern(n, real, [(1, 2, b), (2, 2, b // 2)])}
    binomial = tf.tree(n, lambda r: r & (r - 1), b)  # MPICH: parent = r with its lowest set bit cleared
    ring_next = {(r, (r + 1) % n) for r in range(n)}
    bruck: dict = {}
    d = 1
    while d < n:
        for r in range(n):
            bruck[(r, (r - d) % n)] = (1, min(d, n - d) * b)
        d *= 2
    c = {
        "allreduce": {
            "recursive_doubling": ("whole vectors to XOR partners, extra ranks folded",
                                   lambda x: x == tf.rd_allreduce(n, b)),
            "reduce_scatter_allgather": ("folded, then to partner 1 two halves and partner 2 two quarters",
                                         lambda x: x == rsag),
        },
        "broadcast": {
            "binomial": ("a binomial tree: parent = rank with its lowest set bit cleared", lambda x: x == binomial),
            # a binomial scatter of size/n chunks, then the chunks exchanged with XOR partners
            "scatter_recursive_doubling_allgather": (
                "a scatter, then recursive doubling: XOR partners both ways, no ring edge",
                lambda x: all((r, r ^ m) in x for r in range(4) for m in (1, 2)) and (1, 2) not in x),
            "scatter_ring_allgather": (
                "a scatter, then a ring: every rank to rank+1, n-1 chunks at least, no XOR edge 1->3",
                lambda x: ring_next <= set(x) and all(x[e][0] >= n - 1 for e in ring_next) and (1, 3) not in x),
        },
        "allgather": {
            "brucks": ("at distance 2^k to rank-2^k, min(2^k, n-2^k) chunks", lambda x: x == bruck),
            "ring": ("n-1 chunks to rank+1", lambda x: x == {e: (n - 1, (n - 1) * b) for e in ring_next}),
        },
        "reduce_scatter": {
            "pairwise": ("one chunk to every other rank", lambda x: x == {(r, s): (1, b) for r in range(n) for s in range(n) if r != s}),
        },
    }
    if pof2:
        xor = lambda m1, m2: {**{(r, r ^ 1): (1, m1 * b) for r in range(n)}, **{(r, r ^ 2): (1, m2 * b) for r in range(n)}}  # noqa: E731
        c["broadcast"]["scatter_recursive_doubling_allgather"] = (
            "binomial scatter of size/n chunks, then recursive doubling (exact at n = 4)",
            lambda x: x == {(0, 1): (2, b // 2), (0, 2): (2, b), (1, 0): (1, b // 4), (1, 3): (1, b // 2),
                            (2, 0): (1, b // 2), (2, 3): (2, b // 2), (3, 1): (1, b // 2), (3, 2): (1, b // 4)})
        c["allgather"]["recursive_doubling"] = ("1 then 2 chunks to XOR partners", lambda x: x == xor(1, 2))
        c["reduce_scatter"].update({
            "recursive_halving": ("half the vector to partner 2, then a quarter to partner 1", lambda x: x == xor(1, 2)),
            "noncommutative": ("half the vector to partner 1, then a quarter to partner 2", lambda x: x == xor(2, 1)),
            "recursive_doubling": ("all but its own chunk to partner 1, then half to partner 2", lambda x: x == xor(3, 2)),
        })
    else:
        c["reduce_scatter"].update({
            "recursive_halving": ("the extra rank folds the whole vector into its partner and gets its chunk back",
                                  lambda x: x.get((0, 1)) == (1, n * b) and x.get((1, 0)) == (1, b)),
            "recursive_doubling": ("a chunk-set exchange with XOR partners (more than pairwise's single chunks)",
                                   lambda x: any(m == 2 for m, _ in x.values()) and (0, 3) not in x),
        })
    return c


REFUSED_AT_5 = {("allgather", "recursive_doubling"), ("reduce_scatter", "noncommutative")}


def main(rn: UcpRunner) -> None:
    count = 4096  # elements per chunk (float32): 16 KiB
    for n in (4, 5):
        for op, algos in checks(n, count).items():
            measured = {}
            for algo, (what, ok) in algos.items():
                out, call = rn.per_call(n, op, "library:" + algo, count)
                if call is None:
                    fail(f"{op} library:{algo} refused at n={n}: {out}")
                if f"_INTRA_ALGORITHM={algo}" not in out or "MPIR_CVAR_DEVICE_COLLECTIVES=none" not in out:
                    fail(f"{op} library:{algo}: the runner's library_config does not name what was forced: {out}")
                tf.check(ok(call), f"{op} n={n} {algo}: {what}", call)
                measured[algo] = call
            # The planted wrong forcing: each check must reject every other algorithm's pattern.
            for algo, (what, ok) in algos.items():
                for other, call in measured.items():
                    if other != algo and ok(call):
                        fail(f"{op} n={n}: {algo}'s check accepts {other}'s pattern: it could not tell a wrong forcing")
            _, auto = rn.per_call(n, op, "library", count)
            if all(auto == call for call in measured.values()):
                fail(f"{op} n={n}: MPICH's own choice equals every forced pattern: forcing changes nothing")
        if n == 5:
            for op, algo in sorted(REFUSED_AT_5):
                why, call = rn.per_call(n, op, "library:" + algo, count)
                if call is not None or "MPICH cannot apply" not in why:
                    fail(f"{op} library:{algo} at 5 ranks must refuse naming MPICH's check: {why}")
    print(f"ok: {rn.launches} launches")


def check_collbench(collbench: str, hydra: str, workdir: Path, yield_shim: str) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "collbench.jsonl"
    out.unlink(missing_ok=True)
    cmd = [hydra, "-np", "4", "-genv", "LD_PRELOAD", yield_shim, collbench, "--op", "allreduce", "--algo",
           "ring,library,library:recursive_doubling,library:reduce_scatter_allgather", "--interleave",
           "-b", "8", "-e", "64K", "-f", "8192", "-n", "5", "-w", "2", "--json", str(out)]
    recs = tf.run_collbench(cmd, out)  # records valid by the JSON Schema and the contract
    cfg = lambda algo: recs[(algo, 65536)]["library_config"]  # noqa: E731
    if cfg("ring") is not None:
        fail(f"a custom algorithm's library_config must be null: {cfg('ring')}")
    want = {"MPIR_CVAR_DEVICE_COLLECTIVES": "percoll", "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "auto",
            "MPIR_CVAR_COLLECTIVE_FALLBACK": "silent"}
    if cfg("library") != want:
        fail(f"library's library_config must name MPICH's defaults {want}: {cfg('library')}")
    rd = cfg("library:recursive_doubling")
    if rd != {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling",
              "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}:
        fail(f"library:recursive_doubling's library_config must name what it forced: {rd}")
    small = recs[("library:reduce_scatter_allgather", 8)]  # 2 elements on 4 ranks: MPICH's check refuses
    if not small["skipped"] or "MPICH cannot apply its reduce_scatter_allgather" not in (small["skip_reason"] or ""):
        fail(f"library:reduce_scatter_allgather at 8 B must be skipped with MPICH's refusal: {small}")
    for algo in ("library:recursive_doubling", "library:reduce_scatter_allgather", "library"):
        r = recs[(algo, 65536)]
        if r["skipped"] or r["wrong"]:
            fail(f"{algo} at 64 KiB must run and verify: {r}")
    print("ok: collbench's library_config and MPICH's refusal as a skip")


if __name__ == "__main__":
    if len(sys.argv) < 7:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    runner, hydra, work, count_shim, yield_shim, collbench = sys.argv[1:7]
    check_collbench(collbench, hydra, Path(work), yield_shim)
    main(UcpRunner(runner, hydra, Path(work), f"{count_shim} {yield_shim}", "--show" in sys.argv[7:]))
