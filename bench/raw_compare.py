#!/usr/bin/python3
"""collbench against a plain-MPI reference (bench/raw_mpi.cpp), side by side (issue 14, part 1).

For every comparison and size band, runs collbench (A) and collbench_raw (B) alternately,
A B, B A, A B ... (the first launch of a pair reads slower here, so the order alternates),
with the same mpirun settings, sizes, iterations and warm-up, REPS times, and
prints per size the time ratio collbench / raw: its median over the repetitions with the
min-max, the two tools' own p50 spreads, and whether the issue's target is met.

Comparisons (time ratios; > 1 means collbench reads slower than the plain loop):
  batch     collbench --algo library --batch (allreduce, broadcast, allgather, reduce_scatter),
            p50 of its batch samples (each: barrier, -n back-to-back calls, mean per call per
            rank, max over ranks)  vs  collbench_raw --method batch, the same statistic with as
            many samples as collbench took.       target: within 5 % at 8 B - 64 KiB; above, the
            two tools' p50 ranges over the repetitions overlap ("within the run-to-run spread")
  per_iter  collbench --algo library allreduce, default per-iteration mode, p50  vs
            collbench_raw --method per_call: the same calls back to back, each timed on its
            own, max over ranks, p50.             target: within 15 % at 8 B
            (informational: raw --method barrier = barrier before every call, p50; raw --method
            clock = the synchronized start in plain MPI with collbench's first window, p50: what
            the method itself costs over back to back on this machine)
  latency   collbench --op pingpong --algo latency --pairs 0-1, p50  vs  collbench_raw --op
            latency (blocking MPI_Send/MPI_Recv ping-pong, half round trip), p50
                                                  target: within 5 % up to 64 KiB
  bw        collbench --op pingpong --algo bw --pairs 0-1, p50 time per message  vs
            collbench_raw --op bw (64 MPI_Isend + 4-byte ack), p50
                                                  target: within 5 % up to 64 KiB
Sizes are split into bands with their own iteration counts (scaled by --iters-scale):
  <= 64 KiB: -n 2000 -w 200 (bw: -n 500 -w 50); <= 1 MiB: -n 200 -w 20 (bw: -n 50 -w 5);
  above: -n 20 -w 5 (bw: -n 5 -w 1).

It reports; it does not gate: exit status 0 whether or not targets are met, 1 when a run
failed, verified wrong or wrote no results, 2 on a bad command line. Only ratios from one
idle-machine run mean anything (uptime load < 0.5); --quick is a smoke run, not a measurement.
--aa runs the raw reference on both sides: the spread two identical launches give, against
which a collbench ratio is read (a target tighter than it cannot be shown met or missed).

Usage: bench/raw_compare.py [--build DIR] [--reps N] [-b 8] [-e 16M] [-f 2] [--only GROUPS]
                            [--aa] [--quick] [--keep DIR] [--json-out FILE] [--mpirun-args "..."]
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

# The same mpirun environment and result checks as bench/compare.sh (bench/ is on sys.path).
from targets import RunFailed, checked_results, launch, mpirun_env

KiB, MiB = 1 << 10, 1 << 20
COLL_OPS = ["allreduce", "broadcast", "allgather", "reduce_scatter"]
GROUPS = ["batch", "per_iter", "latency", "bw"]
# Band upper bounds and their (iters, warmup) for collectives / latency, and for bw windows.
BANDS = [(64 * KiB, (2000, 200), (500, 50)), (1 * MiB, (200, 20), (50, 5)), (None, (20, 5), (5, 1))]
QUICK_ITERS = ((50, 5), (20, 2))
SMALL_LIMIT = 64 * KiB  # the targets' "where harness overhead is visible"
TARGETS = {"batch": 0.05, "per_iter": 0.15, "latency": 0.05, "bw": 0.05}


def parse_size(text):
    """collbench's sizes: a whole number of bytes with an optional K/M/G/T suffix (powers of 1024)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)(?:i?B)?", text.strip(), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size '{text}' (e.g. 8, 64K, 16M)")
    scale = {"": 1, "K": KiB, "M": MiB, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    value = float(m.group(1)) * scale
    if value != int(value):
        raise argparse.ArgumentTypeError(f"bad size '{text}' (not a whole number of bytes)")
    return int(value)


def size_steps(lo, hi, factor):
    """harness/plan/sizes.cpp size_steps (geometric, max included)."""
    out, s = [], lo
    while True:
        out.append(s)
        if s == 0:
            nxt = 1
        elif s > hi // factor:
            break
        else:
            nxt = s * factor
        if nxt > hi:
            break
        s = nxt
    if out[-1] != hi:
        out.append(hi)
    return out


def size_name(b):
    if b >= MiB and b % MiB == 0:
        return f"{b // MiB} MiB"
    if b >= KiB and b % KiB == 0:
        return f"{b // KiB} KiB"
    return f"{b} B"


def size_arg(b):
    if b >= MiB and b % MiB == 0:
        return f"{b // MiB}M"
    if b >= KiB and b % KiB == 0:
        return f"{b // KiB}K"
    return str(b)


class Runner:
    def __init__(self, o, workdir):
        self.o, self.workdir = o, workdir
        self.mpirun = launch(o.mpirun, o.np) + shlex.split(o.mpirun_args)
        self.commands = {}  # (group, band, tool) -> shown command (first repetition)
        self.counter = 0

    def _exec(self, argv, label):
        self.counter += 1
        out = os.path.join(self.workdir, f"{self.counter:03d}_{label}.jsonl")
        if os.path.exists(out):
            os.remove(out)
        cmd = self.mpirun + argv + ["--json", out]
        shown = " ".join(shlex.quote(c) for c in cmd[:-2])  # without the scratch --json path
        p = subprocess.run(cmd, env=mpirun_env(self.o.np), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=self.o.run_timeout)
        if p.returncode != 0:
            sys.stderr.write(p.stdout[-4000:])
            raise RunFailed(f"exit {p.returncode}: {shown}")
        recs = []
        if os.path.exists(out):
            with open(out) as f:
                recs = [json.loads(line) for line in f if line.strip()]
        return shown, recs

    def collbench(self, args, label, key):
        shown, recs = self._exec([self.o.collbench] + args, label)
        self.commands.setdefault(key, shown)
        return checked_results(recs, shown)

    def raw(self, args, label, key):
        shown, recs = self._exec([self.o.raw] + args + (["--dup-comm"] if self.o.raw_dup_comm else []), label)
        self.commands.setdefault(key, shown)
        res = [r for r in recs if r.get("type") == "raw"]
        if not res:
            raise RunFailed(f"no raw records: {shown}")
        return res


class Row:
    """One (group, op, bytes): collbench and raw p50 per repetition, paired by repetition."""

    def __init__(self, group, op, nbytes):
        self.group, self.op, self.bytes = group, op, nbytes
        self.cb, self.raw, self.raw_barrier, self.raw_clock = [], [], [], []
        self.cb_modes = set()  # collbench's timing mode (and sync method, where recorded) seen

    def ratios(self):
        return [c / r for c, r in zip(self.cb, self.raw) if r > 0]

    def target(self):
        thr = TARGETS[self.group]
        if self.group == "per_iter":
            return thr if self.bytes <= 8 else None
        return thr if self.bytes <= SMALL_LIMIT else None

    def verdict(self):
        rs = self.ratios()
        if not rs:
            return "n/a (zero time)"
        thr = self.target()
        med = statistics.median(rs)
        if thr is not None:
            ok = abs(med - 1) <= thr
            all_ok = all(abs(r - 1) <= thr for r in rs)
            if ok:
                return "met" if all_ok else "met (spread crosses)"
            return "NOT met (" + ("slower" if med > 1 else "faster") + ")"
        if self.group == "batch":  # above 64 KiB: within the run-to-run spread
            overlap = min(self.cb) <= max(self.raw) and min(self.raw) <= max(self.cb)
            return "within spread" if overlap else "outside spread (" + ("slower" if med > 1 else "faster") + ")"
        return "-"

    def as_json(self):
        rs = self.ratios()
        return {"group": self.group, "op": self.op, "bytes": self.bytes, "collbench_p50_us": self.cb,
                "raw_p50_us": self.raw, "raw_barrier_p50_us": self.raw_barrier or None,
                "raw_clock_p50_us": self.raw_clock or None, "ratios": rs,
                "ratio_median": statistics.median(rs) if rs else None,
                "ratio_of_medians": (statistics.median(self.cb) / statistics.median(self.raw))
                if self.raw and statistics.median(self.raw) > 0 else None,
                "target_within": self.target(), "verdict": self.verdict(), "collbench_modes": sorted(self.cb_modes)}


def spread(vals, fmt="{:.3f}"):
    if not vals:
        return "-"
    return (fmt + " ({}-{})").format(statistics.median(vals), fmt.format(min(vals)), fmt.format(max(vals)))


def bootstrap_ci(cb, raw, n=2000, seed=1):
    """95 % percentile bootstrap CI of median(cb)/median(raw), reps resampled independently."""
    import random
    rnd = random.Random(seed)
    if len(cb) < 2 or len(raw) < 2:
        return None
    vals = []
    for _ in range(n):
        c = statistics.median(rnd.choice(cb) for _ in cb)
        r = statistics.median(rnd.choice(raw) for _ in raw)
        if r > 0:
            vals.append(c / r)
    vals.sort()
    return vals[int(0.025 * (len(vals) - 1))], vals[int(0.975 * (len(vals) - 1))]


def bands(sizes, quick):
    """Consecutive sizes grouped by band: [(lo, hi, (iters, warmup), (bw_iters, bw_warmup))]."""
    out = []
    for b in sizes:
        for i, (limit, it, bw) in enumerate(BANDS):
            if limit is None or b <= limit:
                break
        if quick:
            it, bw = QUICK_ITERS
        if out and out[-1][4] == i:
            out[-1][1] = b
        else:
            out.append([b, b, it, bw, i])
    return out


def scaled(pair, scale):
    n, w = pair
    return max(1, round(n * scale)), max(0, round(w * scale))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory (collbench, bench/collbench_raw); default build")
    ap.add_argument("--collbench", help="collbench executable (default BUILD/collbench)")
    ap.add_argument("--raw", help="collbench_raw executable (default BUILD/bench/collbench_raw)")
    ap.add_argument("--mpirun", default="mpirun",
                    help="mpirun executable (default mpirun; mpiexec.hydra for a build with COLLBENCH_MPI=mpich)")
    ap.add_argument("--mpirun-args", default="", help="extra mpirun arguments for BOTH tools, e.g. '--bind-to core'")
    ap.add_argument("--np", type=int, default=2, help="ranks (default 2; pingpong uses ranks 0 and 1)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions: A B, then B A, ... (default 3)")
    ap.add_argument("-b", "--minbytes", type=parse_size, default=8, help="smallest size (default 8)")
    ap.add_argument("-e", "--maxbytes", type=parse_size, default=16 * MiB, help="largest size (default 16M)")
    ap.add_argument("-f", "--stepfactor", type=int, default=2, help="size factor (default 2; 4 halves the time)")
    ap.add_argument("--only", default=",".join(GROUPS), help="comparisons to run: " + ",".join(GROUPS) + " (default all)")
    ap.add_argument("--iters-scale", type=float, default=1.0, help="multiply every band's -n and -w (default 1)")
    ap.add_argument("--raw-samples", default="match",
                    help="raw batch samples per point: 'match' (as many as collbench's batch took, default) or N")
    ap.add_argument("--raw-bcast-copy", action="store_true",
                    help="raw broadcast copies send->recv at the root first, as collbench's library broadcast does")
    ap.add_argument("--raw-dup-comm", action="store_true",
                    help="raw makes one plain MPI_Comm_dup first (Open MPI 4.1's libnbc progress tax, which collbench avoids)")
    ap.add_argument("--aa", action="store_true",
                    help="A/A: side A is the raw reference too (B's command run again): the ratios two identical "
                         "launches give, this machine's noise floor for every comparison and target")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 repetition, 8 B and 64 KiB, few iterations")
    ap.add_argument("--keep", help="keep every JSON Lines file in this directory")
    ap.add_argument("--json-out", help="also write the rows as JSON to this file")
    ap.add_argument("--run-timeout", type=float, default=600, help="seconds one mpirun may take (default 600)")
    o = ap.parse_args()

    only = [g.strip() for g in o.only.split(",") if g.strip()]
    bad = [g for g in only if g not in GROUPS]
    if bad or not only:
        ap.error(f"--only: unknown comparison {bad}; accepted: {','.join(GROUPS)}")
    if o.reps < 1 or o.np < 2 or o.stepfactor < 2 or o.minbytes > o.maxbytes:
        ap.error("need --reps >= 1, --np >= 2, -f >= 2 and -b <= -e")
    if o.raw_samples != "match" and not (o.raw_samples.isdigit() and int(o.raw_samples) >= 1):
        ap.error("--raw-samples: 'match' or an integer >= 1")
    if o.quick:
        o.reps, o.minbytes, o.maxbytes, o.stepfactor = 1, 8, 64 * KiB, 8192
    o.collbench = o.collbench or os.path.join(o.build, "collbench")
    o.raw = o.raw or os.path.join(o.build, "bench", "collbench_raw")
    for exe in (o.collbench, o.raw):
        if not os.access(exe, os.X_OK):
            print(f"raw_compare: {exe} not found; build first (cmake --build {o.build} --target collbench collbench_raw)",
                  file=sys.stderr)
            return 1

    workdir = o.keep or tempfile.mkdtemp(prefix="collbench-raw-compare-")
    os.makedirs(workdir, exist_ok=True)
    R = Runner(o, workdir)
    sizes = size_steps(o.minbytes, o.maxbytes, o.stepfactor)
    bl = bands(sizes, o.quick)
    common = ["--dtype", "float32", "--redop", "sum", "--inplace", "0", "-c", "1"]
    rows = {}

    def row(group, op, b):
        return rows.setdefault((group, op, b), Row(group, op, b))

    def in_turn(rep, run_a, run_b):
        """A then B on even repetitions, B then A on odd ones: the first launch of a pair reads
        slower here (--aa: 1.05-1.07 for allreduce 32 B - 2 KiB with a fixed A B order), so a
        fixed order would charge that to collbench."""
        if rep % 2 == 0:
            a = run_a()
            return a, run_b(a)
        b = run_b(None)
        return run_a(), b

    def side_a(cb_args, raw_args, raw_method, name, key):
        """Side A: collbench, or under --aa the raw command again, its records in collbench's shape."""
        if not o.aa:
            return R.collbench(cb_args, name, key)
        recs = R.raw(raw_args, "aa_" + name, key)
        mode = "batch" if raw_method == "batch" else "per_iter"
        return [{"op": r["op"], "bytes": r["bytes"], "time_us": {"p50": r["p50_us"]}, "mode": mode}
                for r in recs if r["method"] == raw_method]

    t_start = time.time()
    try:
        for rep in range(o.reps):
            print(f"repetition {rep + 1}/{o.reps} ...", file=sys.stderr, flush=True)
            for bi, (lo, hi, it, bw_it, _) in enumerate(bl):
                n, w = scaled(it, o.iters_scale)
                bn, bw_w = scaled(bw_it, o.iters_scale)
                rng = ["-b", size_arg(lo), "-e", size_arg(hi), "-f", str(o.stepfactor)]
                tag = f"r{rep}_b{bi}"
                if "batch" in only:
                    cb_args = ["--op", ",".join(COLL_OPS), "--algo", "library", "--batch"] + rng + \
                        ["-n", str(n), "-w", str(w)] + common
                    raw_args = ["--op", ",".join(COLL_OPS), "--method", "batch"] + rng + ["-n", str(n), "-w", str(w)] + \
                        (["--bcast-copy"] if o.raw_bcast_copy else [])
                    def raw_batch(cb):  # as many samples as collbench's batch took (1 unless adaptive)
                        samples = o.raw_samples if o.raw_samples != "match" else \
                            str(max([r.get("samples", 1) or 1 for r in cb] if cb else [1]))
                        return R.raw(raw_args + ["--samples", samples], f"raw_batch_{tag}", ("batch", bi, "B"))
                    cb, raw = in_turn(rep, lambda: side_a(
                        cb_args, raw_args + ["--samples", "1" if o.raw_samples == "match" else o.raw_samples],
                        "batch", f"cb_batch_{tag}", ("batch", bi, "A")), raw_batch)
                    pair(cb, raw, "batch", "batch", row)
                if "per_iter" in only:
                    raw_args = ["--op", "allreduce", "--method", "per_call,barrier,clock"] + rng + ["-n", str(n), "-w", str(w)]
                    cb, raw = in_turn(rep, lambda: side_a(
                        ["--op", "allreduce", "--algo", "library"] + rng + ["-n", str(n), "-w", str(w)] + common,
                        raw_args, "per_call", f"cb_periter_{tag}", ("per_iter", bi, "A")),
                        lambda _: R.raw(raw_args, f"raw_periter_{tag}", ("per_iter", bi, "B")))
                    pair(cb, raw, "per_iter", "per_call", row, info=True)
                for m in ("latency", "bw"):
                    if m not in only:
                        continue
                    nn, ww = (n, w) if m == "latency" else (bn, bw_w)
                    raw_args = ["--op", m] + rng + ["-n", str(nn), "-w", str(ww)]
                    cb, raw = in_turn(rep, lambda: side_a(
                        ["--op", "pingpong", "--algo", m, "--pairs", "0-1"] + rng +
                        ["-n", str(nn), "-w", str(ww), "-c", "1"], raw_args, m, f"cb_{m}_{tag}", (m, bi, "A")),
                        lambda _: R.raw(raw_args, f"raw_{m}_{tag}", (m, bi, "B")))
                    pair(cb, raw, m, m, row)
    except (RunFailed, subprocess.TimeoutExpired) as e:
        print(f"raw_compare: run failed: {e}", file=sys.stderr)
        return 1

    print_table(o, rows, R, bl, workdir, time.time() - t_start)
    if o.json_out:
        with open(o.json_out, "w") as f:
            json.dump({"reps": o.reps, "np": o.np, "commands": [{"group": k[0], "band": k[1], "tool": k[2], "command": v}
                                                                for k, v in R.commands.items()],
                       "rows": [r.as_json() for r in rows.values()]}, f, indent=1)
    return 0


def pair(cb, raw, group, raw_method, row, info=False):
    """Adds one repetition's collbench and raw p50 for every (op, bytes) present in both."""
    rawmap = {(r["op"], r["method"], r["bytes"]): r for r in raw}
    n = 0
    for r in cb:
        op = r["op"]
        if group == "batch" and r.get("mode") != "batch":
            continue
        rr = rawmap.get((op, raw_method, r["bytes"]))
        if rr is None:
            raise RunFailed(f"raw has no {op}/{raw_method} at {r['bytes']} B")
        x = row(group, op, r["bytes"])
        x.cb_modes.add(f"mode={r.get('mode')}" + (f" sync={r['sync']}" if r.get("sync") is not None else ""))
        x.cb.append(r["time_us"]["p50"])
        x.raw.append(rr["p50_us"])
        if info:  # per_iter: the raw barrier- and clock-started loops beside it
            for method, into in (("barrier", x.raw_barrier), ("clock", x.raw_clock)):
                if (ri := rawmap.get((op, method, r["bytes"]))) is not None:
                    into.append(ri["p50_us"])
        n += 1
    if n == 0:
        raise RunFailed(f"no {group} points to pair")


def print_table(o, rows, R, bl, workdir, seconds):
    head = ["comparison", "op", "size", "collbench p50 us", "raw p50 us", "ratio cb/raw", "95% CI", "target", "verdict"]
    lines = [head]
    for r in sorted(rows.values(), key=lambda x: (GROUPS.index(x.group), x.op, x.bytes)):
        rs = r.ratios()
        ci = bootstrap_ci(r.cb, r.raw)
        thr = r.target()
        raw_txt = spread(r.raw)
        if r.raw_barrier:
            raw_txt += f" [barrier-loop {statistics.median(r.raw_barrier):.3f}"
            raw_txt += f", clock-loop {statistics.median(r.raw_clock):.3f}]" if r.raw_clock else "]"
        lines.append([r.group, r.op, size_name(r.bytes), spread(r.cb), raw_txt,
                      spread(rs, "{:.3f}") if rs else "-", f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else "-",
                      f"within {thr * 100:.0f}%" if thr is not None else ("spread" if r.group == "batch" else "-"),
                      r.verdict()])
    widths = [max(len(l[i]) for l in lines) for i in range(len(head))]
    for i, l in enumerate(lines):
        print(" | ".join(c.ljust(w) for c, w in zip(l, widths)).rstrip())
        if i == 0:
            print("-+-".join("-" * w for w in widths))
    print()
    print(f"{o.reps} repetition(s), {seconds:.0f} s, {o.np} ranks. Ratio = collbench p50 / raw p50 (time; > 1: collbench "
          f"slower), median over the repetitions (min-max); 95% CI: bootstrap of the ratio of medians over the "
          f"repetitions (needs >= 2). 'met' = median within the target, '(spread crosses)' = some repetition was not; "
          f"batch above {size_name(SMALL_LIMIT)}: 'within spread' = the two p50 ranges overlap. JSON Lines in {workdir}.")
    modes = {}
    for r in rows.values():
        modes.setdefault(r.group, set()).update(r.cb_modes)
    if o.aa:
        print("--aa: side A is the raw reference itself (B's command run again): every ratio is two identical "
              "launches, the noise floor the targets are read against.")
    else:
        print("collbench records: " + "; ".join(f"{g}: {', '.join(sorted(m))}" for g, m in modes.items()))
    if o.quick:
        print("--quick: a smoke run (1 repetition, few iterations): the ratios mean nothing.")
    print("\nCommands (A = collbench, B = raw; per band A B on even repetitions, B A on odd ones; --json FILE appended):")
    for (group, band, tool), cmd in R.commands.items():
        print(f"  {group:8s} band {band} {tool}: {cmd}")


if __name__ == "__main__":
    sys.exit(main())
