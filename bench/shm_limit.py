#!/usr/bin/python3
"""The zero-copy `shm` algorithms against the memory bound and their in-node peers (bench/README.md,
"Zero-copy at the memory limit"): every op with a `shm` algorithm, registered and staged, 2 ranks,
interleaved in one run with the library, REPS repetitions (Open MPI's coll/han is no peer in one node:
it refuses, "Open MPI uses it only across nodes"). Per op, buffers and size: the speed-up over each peer (peer p50 / shm p50, median
(min-max) over the repetitions), shm's `efficiency` (its loads + stores at the memcpy rate the run
measured at that point, recorded by collbench), and below 256 KiB the latency ratio: shm's p50 over
two flag handshakes plus that same traffic at the point's copy rate (the handshake from
bench/flag_latency's symmetric exchange, measured here first).

Targets (issue 38): registered efficiency >= 0.7 from 1 MiB and >= 0.5 from 256 KiB; staged >= 0.8;
the latency ratio <= 1.5 below 256 KiB; speed-up > 1 over every peer at every size.
Stdlib only. Usage: bench/shm_limit.py [--build DIR] [--reps N] [-b 8] [-e 16M] [-f 4] [-n 30]
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
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="16M")
    ap.add_argument("-f", default="4")
    ap.add_argument("-n", default="30")
    ap.add_argument("--ops", help="comma-separated (default: every op with a shm algorithm)")
    o = ap.parse_args()
    collbench = os.path.abspath(os.path.join(o.build, "collbench"))
    handshakes = []
    ops = o.ops.split(",") if o.ops else sorted(targets.shm_ops(collbench))
    rows = {}  # (op, buffers, bytes) -> {"speedup:<peer>": [...], "eff": [...], "lat": [...]}
    with tempfile.TemporaryDirectory() as work:
        for rep in range(o.reps):
            for op in ops:
                peers = ["library"]
                for buffers in ("registered", "plain"):
                    h = handshake_us(o.build)
                    handshakes.append(h)
                    cmd, recs = targets.run(collbench, 2, ["--op", op, "--algo", ",".join(["shm"] + peers),
                                                           "--interleave", "--buffers", buffers, "-b", o.b, "-e", o.e,
                                                           "-f", o.f, "-n", o.n, "-w", "5"], work, f"{op}_{buffers}")
                    if rep == 0:
                        print(f"  {cmd}")
                    for b in sorted({r["bytes"] for r in recs if r["op"] == op}):
                        shm = targets.pick(recs, op, "shm", b)
                        row = rows.setdefault((op, "staged" if buffers == "plain" else buffers, b), {})
                        for p in peers:
                            row.setdefault(f"speedup:{p}", []).append(
                                targets.pick(recs, op, p, b)["time_us"]["p50"] / shm["time_us"]["p50"])
                        if shm.get("efficiency") is not None:
                            row.setdefault("eff", []).append(shm["efficiency"])
                            if b < 256 * KiB:
                                p50 = shm["time_us"]["p50"]
                                row.setdefault("lat", []).append(p50 / (2 * h + shm["efficiency"] * p50))
    print(f"\nflag handshake before each run (ns): {' '.join(f'{h * 1000:.0f}' for h in handshakes)}")
    print("\n| op | buffers | size | shm / library | efficiency | latency ratio |")
    print("|---|---|---|---|---|---|")
    for (op, buffers, b), row in sorted(rows.items()):
        print(f"| {op} | {buffers} | {targets.size_name(b)} | {cell(row.get('speedup:library', []))} | "
              f"{cell(row.get('eff', []))} | {cell(row.get('lat', []))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
