#!/usr/bin/python3
"""The zero-copy `shm` algorithms against the memory bound and their in-node peers (bench/README.md,
"Zero-copy at the memory limit"): every op with a `shm` algorithm, registered and staged, 2 ranks,
interleaved in one run with the library, REPS repetitions (Open MPI's coll/han is no peer in one node:
it refuses, "Open MPI uses it only across nodes"). Per op, buffers and size: the speed-up over each peer
(peer p50 / shm p50, median (min-max) over the repetitions), whether the readers claimed what they read
(the result's peer_claim), shm's `efficiency` (its loads + stores at the memcpy rate the run measured
at that point), and below 256 KiB the latency ratio: shm's p50 over two flag handshakes plus that same
traffic at the point's copy rate (the handshake from bench/flag_latency's symmetric exchange, measured
before every run). With --bound, staged points below 256 KiB are also priced at the rate their data can
cross between the two cores (crossing_us): shm's and the library's p50 over that bound.

Peers, each measured in every repetition:
- library: Open MPI's, interleaved with shm (shm, library, shm, ...), each on buffers of its own.
- mpich (--mpich-build DIR): DIR/collbench (built against MPICH) under mpiexec.hydra, shm interleaved with
  MPICH's library: shm's speed-up in that run.
- gloo (--gloo): `--backend gloo --spawn 2 --algo library` (plain buffers only: Gloo has no peer memory),
  a run of its own right after the staged shm run; its p50 over that run's shm p50 (not interleaved).

Targets (issue 38): registered efficiency >= 0.7 from 1 MiB and >= 0.5 from 256 KiB; staged >= 0.8;
the latency ratio <= 1.5 below 256 KiB; speed-up > 1 over every peer at every size.
Stdlib only. Usage: bench/shm_limit.py [--build DIR] [--reps N] [--mpich-build DIR] [--gloo] [--bound]
                    [-b 8] [-e 16M] [-f 4] [-n 30] [--ops LIST]
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import targets  # noqa: E402  (run, pick, size_name, shm_ops)

KiB, MiB = 1 << 10, 1 << 20
SMALL = 16 * KiB  # schedules::peer::kSmallBytes: below it the reductions read every peer's whole input


def handshake_us(build):
    """One symmetric flag exchange (both raise, both wait), in us: bench/flag_latency. Measured before
    every collbench run: a VM's two vCPUs can move between sharing a core's caches (~55 ns) and not
    (~250 ns) from one second to the next (bench/README.md), and the bound moves with them."""
    out = subprocess.run([os.path.join(build, "bench", "flag_latency"), "20000"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return float(re.search(r"symmetric exchange: ([\d.]+) ns", out).group(1)) / 1000


def cross_rates(build):
    """bench/cross_core_copy's rates by size, GB/s: {"remote": ..., "kernel": ...}, the reader's copy
    of lines the other core has just written and the kernel's copy (process_vm_readv) of a buffer no
    round rewrites. Measured before every staged run with --bound (7-8 s): they move with the VM's
    placement of the vCPUs, as the handshake does."""
    out = subprocess.run([os.path.join(build, "bench", "cross_core_copy")], stdout=subprocess.PIPE, text=True,
                         check=True).stdout.splitlines()
    rates = {"remote": {}, "kernel": {}}
    # (a line of the table's head, rows from it to its first row, column, key)
    for title, skip, col, key in (("median GB/s of the copy", 2, 2, "remote"), ("kernel, cached", 1, 4, "kernel")):
        first = next(i for i, line in enumerate(out) if title in line) + skip
        for line in out[first:]:
            if not line.strip():
                break
            f = line.split()
            rates[key][int(f[0])] = float(f[col])
    return rates


def rate_at(table, nbytes):
    """GB/s at nbytes, log-linear between the sizes measured, the end ones' outside them."""
    sizes = sorted(table)
    if nbytes <= sizes[0]:
        return table[sizes[0]]
    for lo, hi in zip(sizes, sizes[1:]):
        if nbytes <= hi:
            f = math.log(nbytes / lo) / math.log(hi / lo)
            return table[lo] + f * (table[hi] - table[lo])
    return table[sizes[-1]]


def crossing_us(op, nbytes, kernel, h, rates):
    """A model of the least time a staged 2-rank call of nbytes can take (rates from other runs, so
    a call can beat it by a little): two flag handshakes, then each part of its data that crosses
    between the cores on its critical path, one after the other, at the rate cross_core_copy
    measured for a copy of that size (the kernel's where the call read the peer's
    send by process_vm_readv). The parts: allgather, the peer's block (nbytes is the whole recv);
    allreduce and reduce, the peer's half of the input and then its reduced half (below SMALL off
    the kernel's path, the peer's whole input); broadcast, the message; reduce_scatter, the block
    (nbytes is the recv)."""
    if op == "allgather":
        parts = [nbytes / 2]
    elif op in ("allreduce", "reduce") and (kernel or nbytes >= SMALL):
        parts = [nbytes / 2, nbytes / 2]
    else:
        parts = [nbytes]
    table = rates["kernel" if kernel else "remote"]
    return 2 * h + sum(x / (rate_at(table, x) * 1e3) for x in parts)


def yes_no(flags, empty):
    """"yes" where every repetition said so, "no" where none did, else "mixed"; `empty` without any."""
    if not flags:
        return empty
    return "yes" if flags == {True} else "no" if flags <= {False, None} else "mixed"


def cell(values, fmt="{:.2f}"):
    if not values:
        return "-"
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--mpich-build", help="a build against MPICH: its shm interleaved with MPICH's library")
    ap.add_argument("--gloo", action="store_true")
    ap.add_argument("--bound", action="store_true",
                    help="staged points below 256 KiB against the cross-core bound (crossing_us)")
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="16M")
    ap.add_argument("-f", default="4")
    ap.add_argument("-n", default="30")
    ap.add_argument("--ops", help="comma-separated (default: every op with a shm algorithm)")
    o = ap.parse_args()
    collbench = os.path.abspath(os.path.join(o.build, "collbench"))
    sizes = ["-b", o.b, "-e", o.e, "-f", o.f, "-n", o.n, "-w", "5"]
    handshakes = []
    ops = o.ops.split(",") if o.ops else sorted(targets.shm_ops(collbench))
    rows = {}  # (op, buffers, bytes) -> {"<peer>": [speed-ups], "eff": [...], "lat": [...], "claims": {...}}
    shown = set()

    def measure(label, cmd_recs, op, buffers, peers, h=None, rates=None):
        cmd, recs = cmd_recs
        if label not in shown:
            shown.add(label)
            print(f"  {cmd}")
        for b in sorted({r["bytes"] for r in recs if r["op"] == op}):
            shm = targets.pick(recs, op, "shm", b)
            row = rows.setdefault((op, "staged" if buffers == "plain" else buffers, b), {})
            for p, algo in peers.items():
                row.setdefault(p, []).append(targets.pick(recs, op, algo, b)["time_us"]["p50"] / shm["time_us"]["p50"])
            if h is None:
                continue
            row.setdefault("claims", set()).add((shm.get("peer_claim") or {}).get("claims"))
            if shm.get("efficiency") is not None:
                row.setdefault("eff", []).append(shm["efficiency"])
                if b < 256 * KiB:
                    p50 = shm["time_us"]["p50"]
                    row.setdefault("lat", []).append(p50 / (2 * h + shm["efficiency"] * p50))
            if rates and b < 256 * KiB:
                kernel = bool((shm.get("peer_claim") or {}).get("kernel_copy"))
                bound = crossing_us(op, b, kernel, h, rates)
                row.setdefault("kernel", set()).add(kernel)
                row.setdefault("bound", []).append(shm["time_us"]["p50"] / bound)
                row.setdefault("lib_bound", []).append(targets.pick(recs, op, "library", b)["time_us"]["p50"] / bound)
        return recs

    with tempfile.TemporaryDirectory() as work:
        for _ in range(o.reps):
            for op in ops:
                for buffers in ("registered", "plain"):
                    h = handshake_us(o.build)
                    handshakes.append(h)
                    rates = cross_rates(o.build) if o.bound and buffers == "plain" else None
                    args = ["--op", op, "--interleave", "--buffers", buffers] + sizes
                    recs = measure(f"{op} {buffers}", targets.run(collbench, 2, ["--algo", "shm,library"] + args, work,
                                                                  f"{op}_{buffers}"), op, buffers,
                                   {"library": "library"}, h, rates)
                    if o.mpich_build:
                        measure(f"{op} {buffers} mpich",
                                targets.run(os.path.abspath(os.path.join(o.mpich_build, "collbench")), 2,
                                            ["--algo", "shm,library"] + args, work, "mpich", "mpiexec.hydra"), op,
                                buffers, {"mpich": "library"})
                    if o.gloo and buffers == "plain":
                        cmd, gloo = targets.run(collbench, 0, ["--backend", "gloo", "--spawn", "2", "--op", op, "--algo",
                                                               "library"] + sizes, work, "gloo")
                        renamed = [dict(r, algo="gloo") for r in gloo] + [r for r in recs if r["algo"] == "shm"]
                        measure(f"{op} gloo", (cmd, renamed), op, buffers, {"gloo": "gloo"})
    print(f"\nflag handshake before each run (ns): {' '.join(f'{h * 1000:.0f}' for h in handshakes)}")
    peers = ["library"] + (["mpich"] if o.mpich_build else []) + (
        ["gloo"] if o.gloo else [])
    bound_cols = " | kernel's copy | shm / crossing bound | library / crossing bound" if o.bound else ""
    print("\n| op | buffers | size | claimed | " + " | ".join(f"shm / {p}" for p in peers) +
          " | efficiency | latency ratio" + bound_cols + " |")
    print("|---|---|---|---|" + "---|" * len(peers) + "---|---|" + ("---|---|---|" if o.bound else ""))
    for (op, buffers, b), row in sorted(rows.items()):
        print(f"| {op} | {buffers} | {targets.size_name(b)} | {yes_no(row.get('claims'), 'no')} | " +
              " | ".join(cell(row.get(p, [])) for p in peers) +
              f" | {cell(row.get('eff', []))} | {cell(row.get('lat', []))}" +
              (f" | {yes_no(row.get('kernel'), '-')} | {cell(row.get('bound', []))} | {cell(row.get('lib_bound', []))}"
               if o.bound else "") + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
