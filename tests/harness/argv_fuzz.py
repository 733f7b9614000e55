"""argv fuzzing (issue 15; ctest harness.argv_fuzz): a bounded, seeded run of random option/value
combinations against `collbench --dry-run` (parse, plan, check memory, print the plan: no MPI, so a
valid combination costs milliseconds, not a sweep).

    argv_fuzz.py COLLBENCH WORKDIR [CASES [SEED]]      defaults: 3000 cases, seed 15

Every case must end with exit 0 (the plan on stdout, nothing on stderr) or exit 2 with exactly ONE
line on stderr, "collbench: error: ..."; nothing may crash (a signal, exit 134 ...), print a second
line, or run past its own timeout. A failing case is printed as a command line to reproduce it.
The libFuzzer targets (tests/fuzz/: size parser, YAML loader) cover the parsers byte by byte; this
covers the whole command line: option interplay, sweep files, plans, memory checks.
"""
from __future__ import annotations

import concurrent.futures
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

CASE_TIMEOUT_S = 10
REPO = Path(__file__).resolve().parents[2]

SIZES = ["8", "0", "1", "64K", "16M", "1G", "1T", "1.5M", "3kb", "2MiB", "18446744073709551615", "99999999999999999999",
         "-8", "8X", "", "0x10", "1e3", "nan", "K", " 8"]
INTS = ["0", "1", "2", "3", "7", "-1", "65536", "2147483647", "2147483648", "-2147483649", "1e9", "x", "", "3.5"]
SECONDS = ["0", "0.001", "1", "60", "1e7", "1e8", "-1", "inf", "nan", "abc", ""]
OPS = ["allreduce", "broadcast", "reduce", "gather", "allgather", "scatter", "reduce_scatter", "alltoall", "pingpong",
       "all", "allreduce,pingpong", "bogus", "", ",", "allreduce,allreduce"]
ALGOS = ["ring", "naive", "library", "tree", "butterfly", "rabenseifner", "recursive_doubling", "pairwise", "all",
         "latency", "bw", "bibw", "ring,library", "nope", "", "auto"]
DTYPES = ["float32", "float64", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "all", "float32,int8",
          "complex", ""]
REDOPS = ["sum", "prod", "max", "min", "all", "sum,max", "avg", ""]

# option -> values it is tried with (None: a flag without a value)
OPTIONS: dict[str, list[str] | None] = {
    "--op": OPS, "--algo": ALGOS, "--backend": ["mpi", "nccl", "gloo", ""], "--device": ["cpu", "cuda", "tpu"],
    "--pairs": ["auto", "all", "0-1", "0-1,0-4", "1-1", "0-", "a-b", "0-99999"],
    "-b": SIZES, "-e": SIZES, "-f": INTS, "-i": SIZES, "--segment": SIZES, "-c": ["0", "1", "2", "yes"],
    "-d": DTYPES, "-o": REDOPS, "-r": INTS, "--root": INTS, "--inplace": ["0", "1", "both", "2"], "-n": INTS,
    "-w": INTS, "--batch": None, "--interleave": None, "--sync": ["clock", "barrier", "none"], "-T": SECONDS,
    "--timeout": SECONDS, "--min-time": SECONDS, "--max-noise": ["0", "0.01", "1", "-0.5", "2"],
    "--max-iters": INTS, "--json": ["r.jsonl", "", "/", "/nonexistent/dir/r.jsonl"], "--overwrite": None,
    "--resume": None, "--quiet": None, "--ranks": INTS, "--list": None, "--print-layouts": None, "--help": None,
    "--min-bytes": SIZES, "--max-bytes": SIZES, "--step-factor": INTS, "--step-bytes": SIZES, "--iters": INTS,
    "--warmup": INTS, "--dtype": DTYPES, "--redop": REDOPS, "--check": ["0", "1"],
    "--cache": ["hot", "cold", "warm", ""], "--cache-pool": SIZES, "--per-rank": None,
}

YAML_PIECES = [
    "name: fuzz\n", "layouts: [1x2, 2x2]\n", "layouts: bogus\n", "defaults:\n  max_bytes: 64K\n  iters: 3\n",
    "defaults:\n  max_bytes: 1T\n", "defaults:\n  no_such_key: 1\n", "cases:\n  - op: allreduce\n    algo: ring\n",
    "cases:\n  - op: pingpong\n    algo: latency\n", "cases:\n  - op: nope\n", "cases: []\n", "cases: 7\n",
    "json: r.jsonl\n", "backend: nccl\n", "device: cuda\n", "quiet: maybe\n", ": : :\n", "- [\n", "\t\x00\n",
    "cases:\n  - op: broadcast\n    root: 99\n", "defaults:\n  step_bytes: 1\n  max_bytes: 1G\n",
]


def random_value(rng: random.Random, values: list[str]) -> str:
    r = rng.random()
    if r < 0.8:
        return rng.choice(values)
    if r < 0.9:  # mutate a valid one
        v = list(rng.choice(values) or "x")
        v[rng.randrange(len(v))] = chr(rng.choice([0x01, 0x0A, 0x1B, 0x22, 0x2C, 0x2D, 0x7F, 0xE9, 0x30 + rng.randrange(10)]))
        return "".join(v)
    return "".join(chr(rng.randrange(1, 0x250)) for _ in range(rng.randrange(0, 12)))


def make_case(rng: random.Random, workdir: Path, n: int) -> list[str]:
    argv: list[str] = []
    for _ in range(rng.randrange(0, 7)):
        opt = rng.choice(list(OPTIONS))
        values = OPTIONS[opt]
        if values is None:
            argv.append(opt)
        elif rng.random() < 0.05:
            argv.append(opt)  # the value missing
        elif rng.random() < 0.3 and opt.startswith("--"):
            argv.append(f"{opt}={random_value(rng, values)}")
        else:
            argv += [opt, random_value(rng, values)]
    if rng.random() < 0.15:  # a sweep file built from pieces, some broken
        f = workdir / f"case{n}.yaml"
        f.write_bytes("".join(rng.sample(YAML_PIECES, rng.randrange(1, 5))).encode("utf-8", "surrogatepass"))
        argv += ["--config", str(f)]
    if rng.random() < 0.03:
        argv.append(rng.choice(["stray", "-", "--", "-zz", "--no-such-option"]))
    # Always a dry run (never a real sweep), at a random place where no option takes it as its value.
    # (CLI11 also takes the next word as the value of "--opt=" with nothing after the '='.)
    places = [i for i in range(len(argv) + 1)
              if i == 0 or (OPTIONS.get(argv[i - 1], None) is None and not argv[i - 1].endswith("="))]
    argv.insert(rng.choice(places), "--dry-run")
    return argv


def run_case(collbench: str, argv: list[str], cwd: Path) -> tuple[list[str], str | None, float, int | None]:
    t0 = time.monotonic()
    try:
        p = subprocess.run([collbench, *argv], capture_output=True, timeout=CASE_TIMEOUT_S, cwd=cwd)
    except subprocess.TimeoutExpired:
        return argv, f"no exit within {CASE_TIMEOUT_S} s", time.monotonic() - t0, None
    secs = time.monotonic() - t0
    err = p.stderr.decode(errors="replace")
    lines = err.splitlines()
    if p.returncode == 2:
        if len(lines) != 1 or not lines[0].startswith("collbench: error: ") or not err.endswith("\n"):
            return argv, f"exit 2 with {len(lines)} stderr line(s): {err[:300]!r}", secs, 2
        return argv, None, secs, 2
    if p.returncode == 0:
        if err:
            return argv, f"exit 0 but stderr: {err[:300]!r}", secs, 0
        return argv, None, secs, 0
    return argv, f"exit {p.returncode} (a crash or an unexpected status): {err[-300:]!r}", secs, p.returncode


def main(args: list[str]) -> None:
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    collbench, workdir = str(Path(args[0]).resolve()), Path(args[1]).resolve()
    cases = int(args[2]) if len(args) > 2 else 3000
    seed = int(args[3]) if len(args) > 3 else 15
    workdir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    argvs = [make_case(rng, workdir, n) for n in range(cases)]
    t0 = time.monotonic()
    failures, exits, slowest = [], {}, (0.0, [])
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for argv, problem, secs, rc in pool.map(lambda a: run_case(collbench, a, workdir), argvs):
            exits[rc] = exits.get(rc, 0) + 1
            if secs > slowest[0]:
                slowest = (secs, argv)
            if problem:
                failures.append((argv, problem))
    total = time.monotonic() - t0
    leftovers = [p for p in workdir.iterdir() if not (p.name.startswith("case") and p.suffix == ".yaml")]
    for argv, problem in failures[:20]:
        print(f"FAIL: {problem}\n  collbench {shlex.join(argv)}", file=sys.stderr)
    if leftovers:
        print(f"FAIL: a dry run wrote {leftovers}", file=sys.stderr)
    print(f"argv_fuzz: {cases} cases (seed {seed}) in {total:.1f} s: "
          f"{', '.join(f'exit {k}: {v}' for k, v in sorted(exits.items(), key=str))}; {len(failures)} failures; slowest "
          f"{slowest[0] * 1000:.0f} ms: collbench {shlex.join(slowest[1])}")
    sys.exit(1 if failures or leftovers else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
