#!/usr/bin/python3
"""Side-by-side performance targets of issue #8, measured by collbench itself.

Runs each comparison REPS times (custom and library interleaved in ONE invocation, or two
cases of one YAML config), parses the JSON Lines, and prints one row per target:
ratio median (min-max over repetitions), threshold, met / not met, and the exact command.
Standard library only (Debian's /usr/bin/python3). Exit status: 0 when every run
succeeded (met or not), 1 when a collbench run failed or wrote no result.

Interleaved algorithms call on buffers of their own (docs/measurement.md): the op right after an
out-of-place library call used to pay for the lines the library's CMA single copy left in the peer's
cache, which "isolated" rows with a third algorithm after the library measured until 2026-11-27.

Usage: bench/targets.py [--build DIR] [--reps N] [--quick] [--keep DIR]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

# The launcher's flags, shared with the harness tests (stdlib only, in the checkout).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "harness"))
import launcher  # noqa: E402

MiB = 1 << 20


class RunFailed(Exception):
    pass


def launch(mpirun, np_):
    """The launch prefix for np_ ranks, by the launcher's MPI (tests/harness/launcher.py, the one
    place that tells Open MPI's mpirun from MPICH's mpiexec.hydra)."""
    return launcher.mpirun(mpirun, np_, [])


def mpirun_env(np_):
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    if np_ > (os.cpu_count() or 1):
        # More ranks than cores: spinning ranks would starve the one that holds the data.
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    return env


def run(collbench, np_, args, workdir, label, mpiexec="mpirun"):
    """Runs one collbench invocation (np_ ranks under mpiexec; np_ 0: no launcher, as --spawn
    runs); returns (command string, result records)."""
    out = os.path.join(workdir, label + ".jsonl")
    if os.path.exists(out):
        os.remove(out)
    cmd = (launch(mpiexec, np_) if np_ else []) + [collbench] + args + ["--json", out]
    shown = " ".join(shlex.quote(c) for c in cmd[:-2])  # without the scratch --json path
    p = subprocess.run(cmd, env=mpirun_env(np_), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-4000:])
        raise RunFailed(f"exit {p.returncode}: {shown}")
    with open(out) as f:
        return shown, checked_results((json.loads(line) for line in f), shown)


def checked_results(records, shown):
    """The result records of a run; RunFailed on a skipped or wrong point, or on none at all."""
    recs = []
    for r in records:
        if r.get("type") != "result":
            continue
        if r.get("skipped"):
            raise RunFailed(f"skipped point ({r.get('skip_reason')}): {shown}")
        if r.get("wrong"):
            raise RunFailed(f"{r['wrong']} wrong elements ({r['op']}/{r['algo']} {r['bytes']} B): {shown}")
        recs.append(r)
    if not recs:
        raise RunFailed(f"no result records: {shown}")
    return recs


def pick(recs, op, algo, nbytes, mode=None):
    for r in recs:
        if r["op"] == op and r["algo"] == algo and r["bytes"] == nbytes and (mode is None or r["mode"] == mode):
            return r
    raise RunFailed(f"no result for {op}/{algo} at {nbytes} B (mode {mode})")


def busbw_ratio(recs, op, algo, nbytes):
    return pick(recs, op, algo, nbytes)["busbw_GBps"] / pick(recs, op, "library", nbytes)["busbw_GBps"]


def size_name(b):
    if b >= MiB and b % MiB == 0:
        return f"{b // MiB} MiB"
    if b >= 1024 and b % 1024 == 0:
        return f"{b // 1024} KiB"
    return f"{b} B"


class Target:
    """One row: a ratio measured once per repetition, compared with a threshold."""

    def __init__(self, name, threshold, higher_is_better=True, note=False):
        self.name, self.threshold, self.higher, self.note = name, threshold, higher_is_better, note
        self.values, self.command = [], ""

    def add(self, value, command):
        self.values.append(value)
        self.command = command

    def row(self):
        med = statistics.median(self.values)
        lo, hi = min(self.values), max(self.values)
        met = med >= self.threshold if self.higher else med <= self.threshold
        cmp_ = ">=" if self.higher else "<="
        verdict = ("met" if met else "NOT met") + (" (note)" if self.note else "")
        return [self.name, f"{med:.2f} ({lo:.2f}-{hi:.2f})", f"{cmp_} {self.threshold:.2f}", verdict, self.command]


def shm_ops(collbench):
    """The ops with a zero-copy ("shm") algorithm in this build."""
    out = subprocess.run([collbench, "--list"], stdout=subprocess.PIPE, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if len(line.split()) > 1 and line.split()[1] == "shm"}


def zero_copy_targets(collbench, target, rep, workdir, bw_iters, lat_iters, common):
    """Issue 18: the shm algorithms against the library in one interleaved run each, 2 ranks."""
    sizes = [1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB, 64 * MiB]
    # 6. registered allreduce: >= 2.0x from 1 to 64 MiB, >= 2.5x at 16 MiB, >= 1.0x from 8 KiB.
    cmd, recs = run(collbench, 2, ["--op", "allreduce", "--algo", "shm,library", "--interleave", "--buffers",
                                   "registered", "-b", "8K", "-e", "64M", "-f", "2"] + bw_iters + common,
                    workdir, f"zc_allreduce_registered_{rep}")
    for b in [8 << 10, 64 << 10, 512 << 10] + sizes:
        thr = 2.5 if b == 16 * MiB else 2.0 if b >= MiB else 1.0
        target(f"6 {b}", f"6. allreduce shm / library busbw, registered, 2 ranks, {size_name(b)}", thr).add(
            busbw_ratio(recs, "allreduce", "shm", b), cmd)
    # 7. staged (plain buffers): >= 1.5x from 64 KiB to 4 MiB; above that, reported.
    cmd, recs = run(collbench, 2, ["--op", "allreduce", "--algo", "shm,library", "--interleave", "-b", "64K",
                                   "-e", "64M", "-f", "4"] + bw_iters + common, workdir, f"zc_allreduce_staged_{rep}")
    for b in (64 << 10, 256 << 10, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB):
        target(f"7 {b}", f"7. allreduce shm / library busbw, staged, 2 ranks, {size_name(b)}", 1.5,
               note=b > 4 * MiB).add(busbw_ratio(recs, "allreduce", "shm", b), cmd)
    # 8. latency at 8 B: <= 0.7x MPI_Allreduce (time ratio), per iteration (clock-started, interleaved) and
    # back to back (--batch, as nccl-tests and OSU's loop time it; the algorithms run one after the other).
    for mode, flag in (("per-iteration", "--interleave"), ("batch", "--batch")):
        cmd, recs = run(collbench, 2, ["--op", "allreduce", "--algo", "shm,library", flag, "-b", "8", "-e", "8"]
                        + lat_iters + common, workdir, f"zc_latency_{mode}_{rep}")
        ratio = (pick(recs, "allreduce", "shm", 8)["time_us"]["p50"] /
                 pick(recs, "allreduce", "library", 8)["time_us"]["p50"])
        target(f"8 {mode}", f"8. allreduce shm / library latency (p50), 2 ranks, 8 B, {mode}", 0.7,
               higher_is_better=False).add(ratio, cmd)
    # 9. broadcast, allgather, reduce_scatter, registered: >= 1.5x from 1 to 64 MiB.
    for op in ("broadcast", "allgather", "reduce_scatter"):
        if op not in shm_ops(collbench):
            continue
        cmd, recs = run(collbench, 2, ["--op", op, "--algo", "shm,library", "--interleave", "--buffers", "registered",
                                       "-b", "1M", "-e", "64M", "-f", "4"] + bw_iters + common,
                        workdir, f"zc_{op}_{rep}")
        for b in (1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB):
            target(f"9 {op}{b}", f"9. {op} shm / library busbw, registered, 2 ranks, {size_name(b)}", 1.5).add(
                busbw_ratio(recs, op, "shm", b), cmd)
    # 11. Issue 38: every shm op ahead of the library at every size from 8 B, registered and staged:
    # the smallest speed-up over the sizes (8 B - 16 MiB, x4) of each repetition. Up to 2 KiB a call
    # takes about a microsecond, where the p50 of 20 samples moves by 10-20 % between runs: those
    # sizes take the latency iterations, in a run of their own.
    for op in sorted(shm_ops(collbench)):
        for buffers in ("registered", "plain"):
            args = ["--op", op, "--algo", "shm,library", "--interleave", "--buffers", buffers, "-f", "4"]
            cmd_small, small = run(collbench, 2, args + ["-b", "8", "-e", "2K"] + lat_iters + common,
                                   workdir, f"zc_every_small_{op}_{buffers}_{rep}")
            cmd_big, big = run(collbench, 2, args + ["-b", "8K", "-e", "16M"] + bw_iters + common,
                               workdir, f"zc_every_{op}_{buffers}_{rep}")
            recs, cmd = small + big, f"{cmd_small}; {cmd_big}"
            sizes = sorted({r["bytes"] for r in recs if r["op"] == op})
            worst, at = min((pick(recs, op, "library", b)["time_us"]["p50"] / pick(recs, op, "shm", b)["time_us"]["p50"], b)
                            for b in sizes)
            staged = "staged" if buffers == "plain" else buffers
            print(f"  11. {op} {staged}: smallest {worst:.2f} at {size_name(at)}", file=sys.stderr, flush=True)
            target(f"11 {op}{buffers}", f"11. {op} shm / library p50, {staged}, 2 ranks, smallest over 8 B-16 MiB",
                   1.0).add(worst, cmd)
    # 10. 4 ranks, oversubscribed on a 2-core machine (staged): reported, no threshold of its own.
    cmd, recs = run(collbench, 4, ["--op", "allreduce", "--algo", "shm,library", "--interleave", "-b", "2K",
                                   "-e", "16M", "-f", "8"] + bw_iters + common, workdir, f"zc_allreduce_np4_{rep}")
    for b in (2 << 10, 16 << 10, 128 << 10, 1 * MiB, 8 * MiB):
        target(f"10 {b}", f"10. allreduce shm / library busbw, staged, 4 ranks (oversubscribed), {size_name(b)}", 1.0,
               note=True).add(busbw_ratio(recs, "allreduce", "shm", b), cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory holding the collbench executable (default build)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of every comparison (default 3; median reported)")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run, not for reporting)")
    ap.add_argument("--keep", help="keep the JSON Lines files in this directory")
    ap.add_argument("--json-out", help="also write the table as JSON to this file")
    ap.add_argument("--only", choices=["seed", "zero-copy"],
                    help="only the seed algorithms' targets (issue 8) or only the zero-copy ones (issue 18)")
    o = ap.parse_args()

    collbench = os.path.join(o.build, "collbench")
    if not os.access(collbench, os.X_OK):
        sys.exit(f"targets.py: {collbench} not found; build first (cmake --build {o.build})")
    workdir = o.keep or tempfile.mkdtemp(prefix="collbench-targets-")
    os.makedirs(workdir, exist_ok=True)
    q = o.quick
    bw_iters = ["-n", "5" if q else "20", "-w", "2" if q else "5"]
    lat_iters = ["-n", "200" if q else "2000", "-w", "50" if q else "200"]
    big = [1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB]
    common = ["-c", "1", "--dtype", "float32", "--redop", "sum", "--inplace", "0"]

    T = {}

    def target(key, *a, **k):
        if key not in T:
            T[key] = Target(*a, **k)
        return T[key]

    # Target 2's YAML config: the allreduce ring and osu_bw in ONE invocation.
    cfg_bw = os.path.join(workdir, "ring_vs_pingpong.yaml")
    with open(cfg_bw, "w") as f:
        f.write(
            "name: ring_vs_pingpong\n"
            "defaults: {min_bytes: 16M, max_bytes: 16M, dtype: float32, redop: sum, check: 1}\n"
            "cases:\n"
            f"  - {{op: allreduce, algo: ring, iters: {bw_iters[1]}, warmup: {bw_iters[3]}}}\n"
            f"  - {{op: pingpong, algo: bw, iters: {3 if q else 5}, warmup: 1}}\n"
        )
    # Target 5's YAML config: library allreduce at 8 B, per-iteration and batch (OSU) in ONE run.
    cfg_lat = os.path.join(workdir, "library_per_iter_vs_batch.yaml")
    with open(cfg_lat, "w") as f:
        f.write(
            "name: library_per_iter_vs_batch\n"
            f"defaults: {{min_bytes: 8, max_bytes: 8, dtype: float32, redop: sum, check: 1, "
            f"iters: {lat_iters[1]}, warmup: {lat_iters[3]}}}\n"
            "cases:\n"
            "  - {op: allreduce, algo: library}\n"
            "  - {op: allreduce, algo: library, batch: 1}\n"
            "  - {op: allreduce, algo: library}\n"
        )

    t_start = time.time()
    try:
        for rep in range(o.reps):
            print(f"repetition {rep + 1}/{o.reps} ...", file=sys.stderr, flush=True)
            if o.only != "seed":
                zero_copy_targets(collbench, target, rep, workdir, bw_iters, lat_iters, common)
            if o.only == "zero-copy":
                continue
            # 1. allreduce ring vs library, 2 ranks, 1-16 MiB; 4 ranks, 4-16 MiB.
            for np_, lo in ((2, 1 * MiB), (4, 4 * MiB)):
                cmd, recs = run(collbench, np_, ["--op", "allreduce", "--algo", "ring,library", "--interleave",
                                                 "-b", size_name(lo).replace(" MiB", "M"), "-e", "16M", "-f", "2"]
                                + bw_iters + common, workdir, f"allreduce_np{np_}_{rep}")
                for b in (s for s in big if s >= lo):
                    thr = 1.3 if (np_ == 2 and b == 16 * MiB) else 1.0
                    target(f"1 ar{np_}{b}", f"1. allreduce ring / library busbw, {np_} ranks, {size_name(b)}", thr).add(
                        busbw_ratio(recs, "allreduce", "ring", b), cmd)
            # 2. ring busbw vs pingpong bw, same invocation.
            cmd, recs = run(collbench, 2, ["--config", cfg_bw], workdir, f"ring_vs_pingpong_{rep}")
            ring = pick(recs, "allreduce", "ring", 16 * MiB)["busbw_GBps"]
            pp = pick(recs, "pingpong", "bw", 16 * MiB)["busbw_GBps"]
            target("2", "2. allreduce ring busbw / pingpong bw (osu_bw), 2 ranks, 16 MiB", 0.70).add(ring / pp, cmd)
            # 3. broadcast ring|tree and allgather ring vs library, 2 ranks (targets) and 4 ranks (notes).
            # Each custom algorithm is paired with the library alone.
            for np_ in (2, 4):
                for op, algos in (("broadcast", ("ring", "tree")), ("allgather", ("ring",))):
                    for algo in algos:
                        cmd, recs = run(collbench, np_, ["--op", op, "--algo", f"{algo},library", "--interleave",
                                                         "-b", "1M", "-e", "16M", "-f", "4"] + bw_iters + common,
                                        workdir, f"{op}_{algo}_np{np_}_{rep}")
                        for b in (1 * MiB, 4 * MiB, 16 * MiB):
                            target(f"3 {op}{algo}{np_}{b}", f"3. {op} {algo} / library, {np_} ranks, {size_name(b)}",
                                   1.0, note=np_ != 2).add(busbw_ratio(recs, op, algo, b), cmd)
            # 4. small-message latency: butterfly vs library at 8 B (time ratio, lower is better).
            cmd, recs = run(collbench, 2, ["--op", "allreduce", "--algo", "butterfly,library", "--interleave",
                                           "-b", "8", "-e", "8"] + lat_iters + common, workdir, f"latency_{rep}")
            ratio = pick(recs, "allreduce", "butterfly", 8)["time_us"]["p50"] / pick(recs, "allreduce", "library", 8)["time_us"]["p50"]
            target("4", "4. allreduce butterfly / library latency (p50), 2 ranks, 8 B", 1.5, higher_is_better=False).add(ratio, cmd)
            # 5. harness overhead: per-iteration p50 vs batch (OSU: back-to-back, barrier outside).
            cmd, recs = run(collbench, 2, ["--config", cfg_lat], workdir, f"overhead_{rep}")
            per_iter = [r["time_us"]["p50"] for r in recs if r["mode"] == "per_iter"]
            batch = pick(recs, "allreduce", "library", 8, mode="batch")["time_us"]["p50"]
            target("5", "5. library latency per-iteration p50 / batch (OSU method), 2 ranks, 8 B", 1.10,
                   higher_is_better=False).add(statistics.median(per_iter) / batch, cmd)
    except RunFailed as e:
        print(f"targets.py: run failed: {e}", file=sys.stderr)
        return 1

    rows = [["target", "ratio median (min-max)", "threshold", "verdict", "command"]] + [t.row() for t in T.values()]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, r in enumerate(rows):
        print(" | ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + " | " + r[4])
        if i == 0:
            print("-+-".join("-" * w for w in widths) + "-+-" + "-" * 7)
    print(f"\n{o.reps} repetitions, {time.time() - t_start:.0f} s; ratios are custom/library busbw unless the "
          f"threshold says <= (time ratios). Targets 2 and 5 compare cases of one YAML config "
          f"({os.path.basename(cfg_bw)}, {os.path.basename(cfg_lat)} in {workdir}).")
    if o.json_out:
        with open(o.json_out, "w") as f:
            json.dump([{"target": t.name, "values": t.values, "median": statistics.median(t.values),
                        "threshold": t.threshold, "higher_is_better": t.higher, "note": t.note,
                        "command": t.command} for t in T.values()], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
