#!/usr/bin/python3
"""collbench's Gloo against PyTorch's own, side by side (issue 34, part 3).

Per repetition, alternating which goes first (A B, B A, ...): PyTorch (bench/torch_gloo.py: two
processes by mp.spawn, dist.init_process_group("gloo"), one thread each) times dist.all_reduce,
broadcast, all_gather, a send/recv ping-pong and dist.barrier; collbench times the same ops with
`--backend gloo --spawn 2 --algo library --sync barrier` (the same per-iteration method:
barrier, start, the call, stop; max over ranks; p50 over iterations) and `--op pingpong --algo
latency`. Same sizes, iterations and warm-up on both sides. Per (op, size): the ratio collbench
p50 / PyTorch p50, median over the repetitions with a 95 % bootstrap CI, and the difference in µs
(what PyTorch's own per-call path adds: Python, the dispatcher, the hand-off to its worker thread).
Then, once per repetition, collbench's custom algorithms against Gloo's library in one
interleaved run (`--algo ring,butterfly,rabenseifner,library --interleave`): custom / library p50.

It reports; it does not gate. Exit 0, or 1 when a run failed or verified wrong. Measure on an
idle machine only (uptime load < 0.5): nothing else may run meanwhile.

Usage: bench/torch_compare.py [--build DIR] [--reps 5] [--max-bytes 16777216] [--quick] [--keep DIR]
                              [--json-out FILE]
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from raw_compare import bootstrap_ci

HERE = os.path.dirname(os.path.abspath(__file__))
FACTOR = 4
SIZES = [16 << (2 * i) for i in range(11)]  # 16 B .. 16 MiB in steps of FACTOR
OPS = ["allreduce", "broadcast", "allgather", "pingpong"]
CUSTOM = ["ring", "butterfly", "rabenseifner"]
# (limit, iters, warmup): the same on both sides.
BANDS = [(64 << 10, 300, 30), (1 << 20, 100, 10), (None, 20, 5)]
QUICK = (20, 2)


def band_of(b):
    for limit, n, w in BANDS:
        if limit is None or b <= limit:
            return limit, n, w


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]


class Runner:
    def __init__(self, o, work):
        self.o, self.work, self.n = o, work, 0
        self.binary = os.path.join(o.build, "collbench")

    def _run(self, argv, label):
        self.n += 1
        p = subprocess.run(argv, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            sys.exit(f"torch_compare: {label} failed (exit {p.returncode}): {' '.join(argv)}\n{p.stderr[-3000:]}")

    def torch(self, sizes):
        out = os.path.join(self.work, f"torch-{self.n}.jsonl")
        n, w = (QUICK if self.o.quick else (None, None))
        by_band = {}
        for b in sizes:
            by_band.setdefault(band_of(b), []).append(b)
        recs = []
        for (_, bn, bw), group in by_band.items():
            argv = ["/usr/bin/python3", os.path.join(HERE, "torch_gloo.py"), "--sizes", ",".join(map(str, group)),
                    "--ops", ",".join(OPS + ["barrier"]), "--out", out]
            for k in ("small", "mid", "large"):
                argv += [f"--iters-{k}", str(n or bn), f"--warmup-{k}", str(w if w is not None else bw)]
            self._run(argv, "PyTorch")
            recs += load(out)
        return {(r["op"], r["bytes"]): r["p50"] for r in recs}

    def collbench_runs(self, sizes, algos, extra):
        """One collbench run per band (its own -n/-w), sizes -b..-e in steps of FACTOR."""
        out = os.path.join(self.work, f"collbench-{self.n}.jsonl")
        if os.path.exists(out):
            os.remove(out)
        by_band = {}
        for b in sizes:
            by_band.setdefault(band_of(b), []).append(b)
        for (_, bn, bw), group in by_band.items():
            n, w = QUICK if self.o.quick else (bn, bw)
            self._run([self.binary, "--backend", "gloo", "--spawn", "2", *algos, "-b", str(group[0]), "-e",
                       str(group[-1]), "-f", str(FACTOR), "-n", str(n), "-w", str(w), *extra, "--json", out, "--quiet"],
                      "collbench")
        recs = [r for r in load(out) if r["type"] == "result"]
        bad = [r for r in recs if r["skipped"] or r["wrong"]]
        if bad:
            sys.exit(f"torch_compare: collbench skipped or verified wrong: {bad[0]}")
        return recs

    def collbench(self, sizes):
        # PyTorch's all_reduce and broadcast work in place; its all_gather fills a list from an input.
        recs = self.collbench_runs(sizes, ["--op", "allreduce,broadcast,allgather", "--algo", "library"],
                                   ["--sync", "barrier", "--inplace", "both"])
        recs = [r for r in recs if r["in_place"] == (r["op"] != "allgather")]
        recs += self.collbench_runs(sizes, ["--op", "pingpong", "--algo", "latency", "--pairs", "0-1"], [])
        return {(r["op"], r["bytes"]): r["time_us"]["p50"] for r in recs}

    def torch_alone(self):
        """PyTorch's per-call path with nothing to move: the same calls in a world of 1 rank."""
        out = os.path.join(self.work, f"torch1-{self.n}.jsonl")
        self._run(["/usr/bin/python3", os.path.join(HERE, "torch_gloo.py"), "--ranks", "1", "--sizes", "16",
                   "--ops", "allreduce,broadcast,allgather,barrier", "--out", out], "PyTorch, 1 rank")
        return {r["op"]: r["p50"] for r in load(out)}

    def custom(self, sizes):
        recs = self.collbench_runs(sizes, ["--op", "allreduce", "--algo", ",".join(CUSTOM + ["library"]), "--interleave"], [])
        return {(r["algo"], r["bytes"]): r["time_us"]["p50"] for r in recs}


def fmt_us(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-bytes", type=int, default=SIZES[-1])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few iterations, not a measurement")
    ap.add_argument("--keep", help="keep the runs' files here")
    ap.add_argument("--json-out")
    o = ap.parse_args()
    sizes = [b for b in SIZES if b <= o.max_bytes]
    work = o.keep or tempfile.mkdtemp(prefix="torch_compare.")
    os.makedirs(work, exist_ok=True)
    r = Runner(o, work)
    t0 = time.time()
    cb, th, cu, alone = {}, {}, {}, {}
    for rep in range(o.reps):
        sides = [("cb", r.collbench), ("torch", r.torch)]
        if rep % 2:
            sides.reverse()
        for name, f in sides:
            for k, v in f(sizes).items():
                (cb if name == "cb" else th).setdefault(k, []).append(v)
        for k, v in r.custom(sizes).items():
            cu.setdefault(k, []).append(v)
        for k, v in r.torch_alone().items():
            alone.setdefault(k, []).append(v)
    print(f"# collbench --backend gloo vs PyTorch {torch_version()} Gloo, 2 ranks, {cpu_model()}, "
          f"{time.strftime('%Y-%m-%d')}, {o.reps} repetitions (A B / B A), {time.time() - t0:.0f} s")
    print("| op | size | PyTorch p50 µs | collbench p50 µs | collbench / PyTorch (95 % CI) | PyTorch − collbench µs | within ±10 % |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for op in OPS:
        for b in sizes:
            c, t = cb.get((op, b)), th.get((op, b))
            if not c or not t:
                continue
            ratio = statistics.median(c) / statistics.median(t)
            ci = bootstrap_ci(c, t)
            diff = statistics.median(t) - statistics.median(c)
            ok = "yes" if ci and 0.9 <= ci[0] and ci[1] <= 1.1 else ("no" if ci and (ci[1] < 0.9 or ci[0] > 1.1) else "overlaps")
            target = b >= 64 << 10
            rows.append({"op": op, "bytes": b, "torch_p50": statistics.median(t), "collbench_p50": statistics.median(c),
                         "ratio": ratio, "ci": ci, "torch_minus_collbench_us": diff})
            print(f"| {op} | {size_name(b)} | {fmt_us(statistics.median(t))} | {fmt_us(statistics.median(c))} | "
                  f"{ratio:.2f} ({ci[0]:.2f}–{ci[1]:.2f}) | {diff:+.0f} | {ok if target else '(below 64 KiB: overhead)'} |")
    if th.get(("barrier", sizes[0])):
        print(f"\nPyTorch dist.barrier() p50: {fmt_us(statistics.median(th[('barrier', sizes[0])]))} µs (collbench has no barrier op)")
    if alone:
        print("PyTorch's per-call path alone (world of 1 rank, 16 B, p50 µs): " +
              ", ".join(f"{op} {fmt_us(statistics.median(v))}" for op, v in alone.items()))
    print("\n| allreduce size | " + " | ".join(f"{a} / library" for a in CUSTOM) + " |")
    print("|---|" + "---|" * len(CUSTOM))
    for b in sizes:
        lib = cu.get(("library", b))
        if not lib:
            continue
        cells = []
        for a in CUSTOM:
            v = cu.get((a, b))
            cells.append(f"{statistics.median(v) / statistics.median(lib):.2f}" if v else "-")
        print(f"| {size_name(b)} | " + " | ".join(cells) + " |")
    if o.json_out:
        json.dump({"rows": rows, "custom": {f"{a}@{b}": v for (a, b), v in cu.items()}, "torch_alone": alone},
                  open(o.json_out, "w"), indent=1)
    if not o.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def size_name(b):
    for unit, s in ((1 << 20, "M"), (1 << 10, "K")):
        if b >= unit and b % unit == 0:
            return f"{b // unit}{s}"
    return str(b)


def torch_version():
    try:
        return subprocess.run(["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"], capture_output=True,
                              text=True, timeout=60).stdout.strip()
    except Exception:  # noqa: BLE001
        return "?"


if __name__ == "__main__":
    sys.exit(main())
