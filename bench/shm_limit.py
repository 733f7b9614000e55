#!/usr/bin/python3
"""The zero-copy `shm` algorithms against the memory bound and their in-node peers (bench/README.md,
"Zero-copy at the memory limit"): every op with a `shm` algorithm, registered and staged, 2 ranks,
interleaved in one run with the library, REPS repetitions (Open MPI's coll/han is no peer in one node:
it refuses, "Open MPI uses it only across nodes"). Per op, buffers and size: the speed-up over each peer
(peer p50 / shm p50, median (min-max) over the repetitions), whether the readers claimed what they read
(the result's peer_claim), shm's `efficiency` (its loads + stores at the memcpy rate the run measured
at that point), and below 256 KiB the latency ratio: shm's p50 over two flag handshakes plus that same
traffic at the point's copy rate (the handshake from bench/flag_latency's symmetric exchange, measured
before every run).

Peers, each measured in every repetition:
- library: Open MPI's, interleaved with shm (shm, library, shm, ...), each on buffers of its own.
- mpich (--mpich-build DIR): DIR/collbench (built against MPICH) under mpiexec.hydra, shm interleaved with
  MPICH's library: shm's speed-up in that run.
- gloo (--gloo): `--backend gloo --spawn 2 --algo library` (plain buffers only: Gloo has no peer memory),
  a run of its own right after the staged shm run; its p50 over that run's shm p50 (not interleaved).

Targets (issue 38): registered efficiency >= 0.7 from 1 MiB and >= 0.5 from 256 KiB; staged >= 0.8;
the latency ratio <= 1.5 below 256 KiB; speed-up > 1 over every peer at every size.
Stdlib only. Usage: bench/shm_limit.py [--build DIR] [--reps N] [--mpich-build DIR] [--gloo]
                    [-b 8] [-e 16M] [-f 4] [-n 30] [--ops LIST]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import targets  # noqa: E402  (run, pick, size_name, shm_ops)

KiB, MiB = 1 << 10, 1 << 20


def handshake_us(build):
    """One symmetric flag exchange (both raise, both wait), in us: bench/flag_latency. Measured before
    every collbench run: a VM's two vCPUs can move between sharing a core's caches (~55 ns) and not
    (~250 ns) from one second to the next (bench/README.md), and the bound moves with them."""
    out = subprocess.run([os.path.join(build, "bench", "flag_latency"), "20000"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return float(re.search(r"symmetric exchange: ([\d.]+) ns", out).group(1)) / 1000


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

    def measure(label, cmd_recs, op, buffers, peers, h=None):
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
        return recs

    with tempfile.TemporaryDirectory() as work:
        for _ in range(o.reps):
            for op in ops:
                for buffers in ("registered", "plain"):
                    h = handshake_us(o.build)
                    handshakes.append(h)
                    args = ["--op", op, "--interleave", "--buffers", buffers] + sizes
                    recs = measure(f"{op} {buffers}", targets.run(collbench, 2, ["--algo", "shm,library"] + args, work,
                                                                  f"{op}_{buffers}"), op, buffers,
                                   {"library": "library"}, h)
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
    print("\n| op | buffers | size | claimed | " + " | ".join(f"shm / {p}" for p in peers) +
          " | efficiency | latency ratio |")
    print("|---|---|---|---|" + "---|" * len(peers) + "---|---|")
    for (op, buffers, b), row in sorted(rows.items()):
        claims = row.get("claims", set())
        claimed = "yes" if claims == {True} else "no" if claims <= {False, None} else "mixed"
        print(f"| {op} | {buffers} | {targets.size_name(b)} | {claimed} | " +
              " | ".join(cell(row.get(p, [])) for p in peers) +
              f" | {cell(row.get('eff', []))} | {cell(row.get('lat', []))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
