"""The library:ALGO entries (collectives/backends/mpi/mpi_tuned.cpp) really run the algorithm they
name: Open MPI's pml/monitoring counts the messages each pair of ranks exchanged, and each
algorithm's pattern is checked (ctest mpi.tuned_forcing). Stdlib only.

    test_tuned_forcing.py RUNNER MPIEXEC WORKDIR COLLBENCH [--show]

RUNNER (tuned_forcing_runner) runs one registry entry CALLS times and nothing else; each case
is launched twice, with 1 and 1 + K calls, and the difference of the per-pair counts divided by
K is one call's messages: what comm creation, MPI_Init and MPI_Finalize send cancels out.
Why files and not MPI_T: in Open MPI 4.1 the pml_monitoring_messages_count/_size performance
variables are unregistered when the monitoring PML interposes itself (MPI_T_pvar_handle_alloc
then returns MPI_T_ERR_INVALID; open-mpi/ompi#9260), but the same counters are written per
rank at MPI_Finalize with --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3.

The patterns are mutually exclusive per op (ring: only to rank+1; recursive doubling: XOR
partners; basic_linear: all through rank 0; binomial: parent = rank with its highest bit
cleared ...), so if forcing silently did nothing every entry would show Open MPI's default
choice and all but at most one check would fail. `library` itself is checked to differ from
at least one forced pattern. Run at 4 ranks and at 5 (not a power of two). --show prints every
matrix. Then collbench itself: the records' library_config (what each entry ran with, also when
the launch forces the library's choice with --mca), refusals as skips, records valid by the schema.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import collbench_check as cc  # noqa: E402

K = 2  # extra calls of the second launch
F32 = 4


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Runner:
    def __init__(self, runner: str, mpiexec: str, workdir: Path, show: bool) -> None:
        self.runner, self.mpiexec, self.workdir, self.show = runner, mpiexec, workdir, show
        self.launches = 0
        self.lock = threading.Lock()

    def launch(self, n: int, op: str, algo: str, count: int, calls: int, seg: int) -> tuple[str, dict]:
        d = self.workdir / f"n{n}_{op}_{algo.replace(':', '_')}_{calls}"
        return self.monitored(n, d, [self.runner, op, algo, str(count), str(calls)] + ([str(seg)] if seg else []))

    def monitored(self, n: int, d: Path, program: list[str], mca: list[str] = ()) -> tuple[str, dict]:
        """Runs `program` on n ranks under pml/monitoring: (stdout, {(src, dst): (bytes, messages)})."""
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("*.prof"):
            f.unlink()
        cmd = [self.mpiexec, "-np", str(n), "--oversubscribe",
               "--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
               "--mca", "pml_monitoring_filename", str(d / "p"), *mca, *program]
        with self.lock:
            self.launches += 1
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        sent: dict[tuple[int, int], tuple[int, int]] = {}
        files = sorted(d.glob("p.*.prof"))
        if "refused:" not in p.stdout and not files:  # a rank that sent nothing writes none
            fail(f"pml/monitoring wrote no file in {d}: is pml/monitoring missing?")
        for f in files:
            for line in f.read_text().splitlines():
                # "E|I <src> <dst> <bytes> bytes <msgs> msgs sent <histogram>": external (user) and
                # internal (collective, tag < 0) point-to-point messages.
                if line[:1] in ("E", "I"):
                    kind, src, dst, nbytes, msgs = line.split("\t")[:5]
                    key = (int(src), int(dst))
                    b0, m0 = sent.get(key, (0, 0))
                    sent[key] = (b0 + int(nbytes.split()[0]), m0 + int(msgs.split()[0]))
        return p.stdout, sent

    @staticmethod
    def difference(one: dict, more: dict, calls: int, what: str) -> dict:
        """One call's {(src, dst): (messages, bytes)} from two launches `calls` calls apart."""
        call = {}
        for key in set(one) | set(more):
            b1, m1 = one.get(key, (0, 0))
            b2, m2 = more.get(key, (0, 0))
            db, dm = b2 - b1, m2 - m1
            if db % calls or dm % calls or db < 0 or dm < 0:
                fail(f"{what}: {key}: {dm} messages / {db} bytes over {calls} calls do not divide")
            if dm:
                call[key] = (dm // calls, db // calls)
        return call

    def per_call(self, n: int, op: str, algo: str, count: int, seg: int = 0) -> tuple[str, dict] | tuple[str, None]:
        """(stdout, {(src, dst): (messages, bytes)} of one call) or (refusal, None)."""
        # The two launches at once: each is mostly mpirun's start and end, not its ranks' work.
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(self.launch, n, op, algo, count, 1, seg)
            second = pool.submit(self.launch, n, op, algo, count, 1 + K, seg)
            (out1, one), (out2, more) = first.result(), second.result()
        if "refused:" in out1:
            return out1.split("refused:", 1)[1].strip(), None
        for out in (out1, out2):
            if "wrong: 0" not in out:
                fail(f"{op}/{algo} n={n}: wrong result: {out}")
        call = self.difference(one, more, K, f"{op}/{algo} n={n}")
        if self.show:
            print(f"{op}/{algo} n={n} count={count}: " + ", ".join(f"{s}->{d}: {m} x {b}B" for (s, d), (m, b) in sorted(call.items())))
        return out2, call


def star_out(n: int, b: int) -> dict:  # root 0 sends once to every rank
    return {(0, r): (1, b) for r in range(1, n)}


def tree(n: int, parent, b: int) -> dict:
    return {(parent(r), r): (1, b) for r in range(1, n)}


def ompi_tree_parent(r: int, fanout: int) -> int:
    """Parent in Open MPI's k-ary tree (coll_base_topo.c, root 0): levels of fanout^L ranks in
    rank order; the k-th rank of a level hangs under the (k mod width)-th rank of the level above."""
    prev_first, prev_width, first, width = 0, 1, 1, fanout
    while r >= first + width:
        prev_first, prev_width, first, width = first, width, first + width, width * fanout
    return prev_first + (r - first) % prev_width


def rd_allreduce(n: int, b: int) -> dict:
    """Open MPI's recursive doubling allreduce: the first 2*extra ranks fold pairwise (even into
    odd), the rest exchange whole vectors with XOR partners, the folded get the result back."""
    pof2 = 1 << (n.bit_length() - 1)
    extra = n - pof2
    out: dict = {}
    def add(s, d):
        m, by = out.get((s, d), (0, 0))
        out[(s, d)] = (m + 1, by + b)
    def real(v):
        return v * 2 + 1 if v < extra else v + extra
    for r in range(2 * extra):
        if r % 2 == 0:
            add(r, r + 1)
            add(r + 1, r)
    for v in range(pof2):
        d = 1
        while d < pof2:
            add(real(v), real(v ^ d))
            d *= 2
    return out


def basic_linear_allreduce(n: int, b: int) -> dict:
    """Every rank sends its vector to 0, 0 sends the result to every rank."""
    return {**star_out(n, b), **{(r, 0): (1, b) for r in range(1, n)}}


def is_ring_allreduce(n: int, count: int, call: dict) -> bool:
    """Each rank sends 2(n-1) blocks of ~size/n, only to rank+1."""
    return set(call) == {(r, (r + 1) % n) for r in range(n)} and all(m == 2 * (n - 1) for m, _ in call.values()) \
        and all(by <= 2 * (n - 1) * -(-count // n) * F32 for _, by in call.values())


def check(cond: bool, what: str, call: dict) -> None:
    if not cond:
        fail(f"{what}; measured per call: " + ", ".join(f"{s}->{d}: {m} x {b}B" for (s, d), (m, b) in sorted(call.items())))


def by_sender(call: dict) -> dict:
    out: dict = {}
    for (s, d), v in call.items():
        out.setdefault(s, {})[d] = v
    return out


def main(runner: str, mpiexec: str, workdir: str, show: bool) -> None:
    rn = Runner(runner, mpiexec, Path(workdir), show)
    count = 4096            # elements per chunk (float32): 16 KiB
    b = count * F32
    seg = 1024               # segmented_ring: 4 segments per ring block at n = 4

    for n in (4, 5):
        pof2 = n & (n - 1) == 0

        # ---- allreduce
        _, default = rn.per_call(n, "allreduce", "library", count)
        forced = {}
        for algo in ("basic_linear", "ring", "recursive_doubling", "segmented_ring", "rabenseifner", "nonoverlapping"):
            out, call = rn.per_call(n, "allreduce", "library:" + algo, count, seg if algo == "segmented_ring" else 0)
            if call is None:
                fail(f"allreduce library:{algo} refused at n={n}: {out}")
            if f"coll_tuned_allreduce_algorithm={algo}" not in out:
                fail(f"allreduce library:{algo}: the runner's library_config does not name it: {out}")
            forced[algo] = call
        what = f"allreduce n={n}"
        check(forced["basic_linear"] == basic_linear_allreduce(n, b),
              f"{what} basic_linear: every rank sends its vector to 0, 0 sends the result to every rank", forced["basic_linear"])
        ring = forced["ring"]
        check(is_ring_allreduce(n, count, ring),
              f"{what} ring: each rank sends 2(n-1) blocks of ~size/n, only to rank+1", ring)
        check(forced["recursive_doubling"] == rd_allreduce(n, b),
              f"{what} recursive_doubling: whole vectors to XOR partners (extra ranks folded)", forced["recursive_doubling"])
        sring = forced["segmented_ring"]
        check(set(sring) == {(r, (r + 1) % n) for r in range(n)} and all(m > 2 * (n - 1) for m, _ in sring.values()),
              f"{what} segmented_ring: only to rank+1, more than 2(n-1) messages (segments of {seg} B)", sring)
        if pof2:
            check(forced["rabenseifner"] == {**{(r, r ^ 1): (2, b) for r in range(n)}, **{(r, r ^ 2): (2, b // 2) for r in range(n)}},
                  f"{what} rabenseifner: to XOR partner 1 two halves, to partner 2 two quarters", forced["rabenseifner"])
        check(sum(by for _, by in forced["nonoverlapping"].values()) == 2 * (n - 1) * b
              and forced["nonoverlapping"] != ring and any(d == 0 for (_, d) in forced["nonoverlapping"]),
              f"{what} nonoverlapping: a reduce tree into 0 and a broadcast tree, each edge carrying the vector once",
              forced["nonoverlapping"])
        check(any(default != c for c in forced.values()), f"{what}: library's own choice differs from every forced one", default)

        # ---- broadcast (root 0)
        what = f"broadcast n={n}"
        bc = {}
        for algo in ("basic_linear", "pipeline", "binary_tree", "binomial", "chain", "scatter_allgather_ring"):
            out, call = rn.per_call(n, "broadcast", "library:" + algo, count)
            if call is None:
                fail(f"broadcast library:{algo} refused at n={n}: {out}")
            bc[algo] = call
        check(bc["basic_linear"] == star_out(n, b), f"{what} basic_linear: the root sends to every rank", bc["basic_linear"])
        check(bc["pipeline"] == tree(n, lambda r: r - 1, b), f"{what} pipeline: one chain 0 -> 1 -> ... -> n-1", bc["pipeline"])
        check(bc["binary_tree"] == tree(n, lambda r: ompi_tree_parent(r, 2), b),
              f"{what} binary_tree: Open MPI's fanout-2 tree (the k-th rank of a level under the (k mod width)-th above)",
              bc["binary_tree"])
        # Open MPI's binomial tree: the children of r are r + 2^k above its highest bit (at n = 4 the
        # same edges as the binary tree; n = 5 tells them apart: 0 -> 4 against 1 -> 4).
        check(bc["binomial"] == tree(n, lambda r: r - (1 << (r.bit_length() - 1)), b),
              f"{what} binomial: parent = r with its highest set bit cleared", bc["binomial"])
        # coll_tuned_bcast_algorithm_chain_fanout is 4 by default: at n <= 5 every chain has one rank.
        check(bc["chain"] == star_out(n, b), f"{what} chain (fanout 4): n-1 chains of one rank each", bc["chain"])
        sag = bc["scatter_allgather_ring"]
        check(all((r, (r + 1) % n) in sag for r in range(n)) and max(by for _, by in sag.values()) < b * n // 2 + b,
              f"{what} scatter_allgather_ring: a scatter, then a ring (every rank sends to rank+1) of ~size/n blocks", sag)

        # ---- allgather (chunk b per rank)
        what = f"allgather n={n}"
        out, ag_ring = rn.per_call(n, "allgather", "library:ring", count)
        check(ag_ring == {(r, (r + 1) % n): (n - 1, (n - 1) * b) for r in range(n)},
              f"{what} ring: n-1 chunks to rank+1", ag_ring or {})
        out, bruck = rn.per_call(n, "allgather", "library:bruck", count)
        want: dict = {}
        d = 1
        while d < n:
            for r in range(n):
                want[(r, (r - d) % n)] = (1, min(d, n - d) * b)
            d *= 2
        check(bruck == want, f"{what} bruck: at distance 2^k to rank-2^k, min(2^k, n-2^k) chunks", bruck or {})
        out, rd = rn.per_call(n, "allgather", "library:recursive_doubling", count)
        if pof2:
            check(rd == {**{(r, r ^ 1): (1, b) for r in range(n)}, **{(r, r ^ 2): (1, 2 * b) for r in range(n)}},
                  f"{what} recursive_doubling: 1 then 2 chunks to XOR partners", rd or {})
        elif rd is not None or "bruck" not in out:
            fail(f"{what} recursive_doubling must refuse a non-power-of-two world (Open MPI runs bruck): {out}")
        out, nb = rn.per_call(n, "allgather", "library:neighbor", count)
        if n % 2 == 0:
            check(nb is not None and set(nb) == {(r, (r + s) % n) for r in range(n) for s in (1, -1)}
                  and all(sum(by for (s, _), (_, by) in nb.items() if s == r) == (n - 1) * b for r in range(n)),
                  f"{what} neighbor: only to rank+1 and rank-1, n-1 chunks in all", nb or {})
        elif nb is not None:
            fail(f"{what} neighbor must refuse an odd world (Open MPI runs ring): {out}")
        out, two = rn.per_call(n, "allgather", "library:two_proc", count)
        if two is not None:
            fail(f"{what} two_proc must refuse {n} ranks: {out}")

        # ---- reduce_scatter (MPI_Reduce_scatter_block; chunk b per rank, vector n*b)
        what = f"reduce_scatter n={n}"
        rs = {}
        for algo in ("basic_linear", "recursive_halving", "recursive_doubling", "butterfly"):
            out, call = rn.per_call(n, "reduce_scatter", "library:" + algo, count)
            if call is None:
                fail(f"reduce_scatter library:{algo} refused at n={n}: {out}")
            rs[algo] = call
        lin = by_sender(rs["basic_linear"])
        check(all(len(lin.get(r, {})) == 1 and list(lin[r].values()) == [(1, n * b)] for r in range(1, n))
              and lin.get(0) == {r: (1, b) for r in range(1, n)},
              f"{what} basic_linear: a reduce tree of the whole vector into 0, then 0 sends each rank its chunk",
              rs["basic_linear"])
        if pof2:  # who sends how much to which XOR partner tells the three apart
            xor = lambda m1, m2: {**{(r, r ^ 1): (1, m1 * b) for r in range(n)}, **{(r, r ^ 2): (1, m2 * b) for r in range(n)}}
            check(rs["recursive_halving"] == xor(1, 2),
                  f"{what} recursive_halving: half the vector to partner 2, then a quarter to partner 1", rs["recursive_halving"])
            check(rs["butterfly"] == xor(2, 1),
                  f"{what} butterfly: half the vector to partner 1, then a quarter to partner 2", rs["butterfly"])
            check(rs["recursive_doubling"] == xor(3, 2),
                  f"{what} recursive_doubling: all but its own chunk to partner 1, then half to partner 2",
                  rs["recursive_doubling"])
        check(len({repr(sorted(c.items())) for c in rs.values()}) == len(rs),
              f"{what}: the four algorithms exchange four different patterns", {k: 0 for k in rs})

    print(f"ok: {rn.launches} launches")


def collbench_records(collbench: str, mpiexec: str, workdir: Path, mca: list[str]) -> dict:
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / f"collbench{len(mca)}.jsonl"
    out.unlink(missing_ok=True)
    cmd = [mpiexec, "-np", "4", "--oversubscribe", *mca, collbench, "--op", "allreduce", "--algo",
           "ring,library,library:ring,library:segmented_ring,library:rabenseifner", "--interleave",
           "-b", "8", "-e", "64K", "-f", "8192", "-n", "5", "-w", "2", "--json", str(out)]
    return run_collbench(cmd, out)


def run_collbench(cmd: list[str], out: Path) -> dict:
    """Runs a collbench launch writing --json `out` (one run); {(algo, bytes): result record}."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    cc.check_file(str(out), runs=1)  # every record valid by the JSON Schema and the contract
    return {(r["algo"], r["bytes"]): r for r in map(json.loads, out.read_text().splitlines()) if r["type"] == "result"}


def check_collbench(collbench: str, mpiexec: str, workdir: Path) -> None:
    recs = collbench_records(collbench, mpiexec, workdir, [])
    cfg = lambda algo, size=65536: recs[(algo, size)]["library_config"]  # noqa: E731
    if cfg("ring") is not None:
        fail(f"a custom algorithm's library_config must be null: {cfg('ring')}")
    if cfg("library") != {"coll_tuned_use_dynamic_rules": "false", "coll_tuned_allreduce_algorithm": "ignore"}:
        fail(f"library's library_config must say Open MPI chooses (dynamic rules off, ignore): {cfg('library')}")
    lr = cfg("library:ring")
    if not lr or lr.get("coll_tuned_use_dynamic_rules") != "true" or lr.get("coll_tuned_allreduce_algorithm") != "ring" \
            or lr.get("coll_tuned_allreduce_algorithm_segmentsize") != "0":
        fail(f"library:ring's library_config must name the forced algorithm: {lr}")
    for algo, size, why in (("library:ring", 8, "count < world size"), ("library:segmented_ring", 65536, "--segment"),
                            ("library:rabenseifner", 8, "power-of-two")):
        r = recs[(algo, size)]
        if not r["skipped"] or why not in (r["skip_reason"] or ""):
            fail(f"{algo} at {size} B must be skipped naming '{why}': {r['skip_reason']}")
    if recs[("library:ring", 65536)]["skipped"] or recs[("library:ring", 65536)]["wrong"]:
        fail(f"library:ring at 64 KiB must run and verify: {recs[('library:ring', 65536)]}")
    # A tuning file may name a library variant: --algo auto runs it (the entry renamed "auto") and the
    # record's library_config still names the forced algorithm, not "auto".
    tuning = workdir / "library_ring.yaml"
    tuning.write_text("schema: collbench-tuning/1\nentries:\n  - op: allreduce\n    backend: mpi\n    device: cpu\n"
                      "    layout: {nodes: 1, ranks_per_node: 4, world_size: 4}\n    ranges:\n"
                      "      - {min_bytes: 0, max_bytes: null, algo: \"library:ring\"}\n")
    out = workdir / "auto.jsonl"
    out.unlink(missing_ok=True)
    cmd = [mpiexec, "-np", "4", "--oversubscribe", collbench, "--op", "allreduce", "--algo", "auto", "--tuning",
           str(tuning), "-b", "64K", "-e", "64K", "-n", "5", "-w", "2", "--quiet", "--json", str(out)]
    (auto,) = run_collbench(cmd, out).values()
    if auto["algo"] != "auto" or auto["chosen"] != "library:ring" or auto["skipped"] or auto["wrong"] \
            or (auto["library_config"] or {}).get("coll_tuned_allreduce_algorithm") != "ring":
        fail(f"--algo auto with a tuning file naming library:ring must run it and record ring: {auto}")
    # Forced for the whole job at launch: library records what was in force.
    recs = collbench_records(collbench, mpiexec, workdir, ["--mca", "coll_tuned_use_dynamic_rules", "1",
                                                           "--mca", "coll_tuned_allreduce_algorithm", "3"])
    if cfg("library") != {"coll_tuned_use_dynamic_rules": "true", "coll_tuned_allreduce_algorithm": "recursive_doubling"}:
        fail(f"library under --mca ... algorithm 3 must record recursive_doubling: {cfg('library')}")
    print("ok: collbench's library_config")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    check_collbench(sys.argv[4], sys.argv[2], Path(sys.argv[3]))
    main(sys.argv[1], sys.argv[2], sys.argv[3], "--show" in sys.argv[5:])
