#!/usr/bin/python3
"""What the preload library (docs/preload.md) buys an unmodified MPI program: collbench_raw's plain
MPI loops with and without libcollbench-pmpi.so, per op and size, on the tuning file colltune
writes from a sweep on this machine.

  1. collbench --op OPS --algo all --interleave (every algorithm, NP ranks) -> DIR/sweep.jsonl;
     analysis/colltune -> DIR/tuning.yaml            (skipped with --tuning FILE)
  2. REPS times, alternated: collbench_raw --method batch without, then with the preload
     (COLLBENCH_TUNING=the file) -> DIR/plain.jsonl, DIR/preload.jsonl; 7 samples of 2000 calls
     up to 64 KiB, of 50 above
  3. per (op, size): the median over repetitions of each launch's p50, the algorithm the file
     names (what the preload served; "library": passed through), and without / with -> a
     markdown table on stdout (and DIR/table.md).

Usage: bench/preload_speedup.py [--build build] [--np 2] [--reps 3] [-b 8] [-e 16M] [-f 4]
                                [--ops allreduce,broadcast,allgather,reduce_scatter] [--out DIR]
                                [--tuning FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "harness"))
sys.path.insert(0, str(ROOT / "analysis"))
sys.path.insert(0, str(ROOT / "bench"))
import launcher  # noqa: E402
from collbench_analysis import tune  # noqa: E402
from collbench_analysis.load import parse_size  # noqa: E402  (collbench's -b/-e sizes)
from targets import size_name  # noqa: E402  (bench tables' size labels)


def run(cmd, **kw):
    print("$", " ".join(map(str, cmd)), flush=True)
    subprocess.run(list(map(str, cmd)), check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="16M")
    ap.add_argument("-f", default="4")
    ap.add_argument("--ops", default="allreduce,broadcast,allgather,reduce_scatter")
    ap.add_argument("--out", default="results/local/preload-speedup")
    ap.add_argument("--tuning", help="use this tuning file instead of sweeping")
    a = ap.parse_args()
    build, out = Path(a.build).resolve(), Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    mpiexec = "mpirun"
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    sizes = ["-b", a.b, "-e", a.e, "-f", a.f]
    tuning = Path(a.tuning).resolve() if a.tuning else out / "tuning.yaml"
    if not a.tuning:
        sweep = out / "sweep.jsonl"
        sweep.unlink(missing_ok=True)
        run(launcher.mpirun(mpiexec, a.np, [build / "collbench", "--op", a.ops, "--algo", "all", "--interleave",
                                            "-n", "40", *sizes, "--json", sweep]), env=env, stdout=subprocess.DEVNULL)
        run(["/usr/bin/python3", ROOT / "analysis" / "colltune", sweep, "-o", tuning], stdout=subprocess.DEVNULL)
    # Small sizes back to back many times (a sample of 50 calls of 0.1 us is the timer's noise),
    # large ones fewer: the geometric series split at the first size above 64 KiB.
    series = [int(parse_size(a.b))]
    while series[-1] * int(a.f) <= parse_size(a.e):
        series.append(series[-1] * int(a.f))
    if series[-1] != parse_size(a.e):  # the largest size is measured too, as collbench's -e
        series.append(parse_size(a.e))
    small = [x for x in series if x <= 64 << 10]
    large = [x for x in series if x > 64 << 10]
    raws = [(small, "2000", "100"), (large, "50", "5")]
    for f in ("plain.jsonl", "preload.jsonl"):
        (out / f).unlink(missing_ok=True)
    # No COLLBENCH_PMPI_SUMMARY: its clock reads would be timed too.
    preload = {"LD_PRELOAD": str(build / "libcollbench-pmpi.so"), "COLLBENCH_TUNING": str(tuning)}
    for k in range(a.reps):
        for part, iters, warmup in raws:
            if not part:
                continue
            raw = [build / "bench" / "collbench_raw", "--op", a.ops, "--method", "batch", "--samples", "7", "-b",
                   part[0], "-e", part[-1], "-f", a.f, "-n", iters, "-w", warmup]
            run(launcher.mpirun(mpiexec, a.np, [*raw, "--json", out / "plain.jsonl"]), env=env)
            run(launcher.mpirun(mpiexec, a.np, [*raw, "--json", out / "preload.jsonl"], env=preload), env=env)

    def p50s(name):
        d = defaultdict(list)
        for line in (out / name).read_text().splitlines():
            r = json.loads(line)
            d[(r["op"], r["bytes"])].append(r["p50_us"])
        return d

    plain, pre = p50s("plain.jsonl"), p50s("preload.jsonl")
    t = tune.load_tuning(tuning)
    lines = ["| op | size | preload serves | without (µs) | with (µs) | speed-up |", "|---|---:|---|---:|---:|---:|"]
    for op in a.ops.split(","):
        for (o, b) in sorted(k for k in plain if k[0] == op):
            without, with_ = statistics.median(plain[(o, b)]), statistics.median(pre[(o, b)])
            r = t.lookup(op, "mpi", "cpu", tune.Layout((a.np,)), b)
            lines.append(f"| {op} | {size_name(b)} | {r.algo if r else 'library'} | {without:.2f} | {with_:.2f} | "
                         f"{without / with_:.2f}× |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
