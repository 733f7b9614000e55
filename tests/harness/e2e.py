"""End-to-end tests of the collbench executable (ctest label "harness"). Stdlib only.

    e2e.py cli       COLLBENCH WORKDIR                bad input -> one line, exit 2, no file
    e2e.py allreduce COLLBENCH MPIEXEC WORKDIR        -np 4 all allreduce algos; a second run appends;
                                                      a planted corruption -> exit 1; --segment 256
    e2e.py modes     COLLBENCH MPIEXEC WORKDIR        batch / interleaved / adaptive / in-place / rooted
    e2e.py sweep     COLLBENCH MPIEXEC WORKDIR YAML   a sweep file end to end, and --print-layouts;
                                                      every shipped sweep file's --dry-run plan
    e2e.py nvtx      COLLBENCH MPIEXEC WORKDIR LIB DOC  NVTX ranges seen by an injected tool, per rank,
                                                      each one in DOC's table, every row seen
    e2e.py timeout   COLLBENCH MPIEXEC WORKDIR        a timeout aborts the job with status 3, naming the peer
    e2e.py sync      COLLBENCH MPIEXEC WORKDIR        clock-synchronized start (injected offsets recovered) vs --sync barrier

Every run's points are checked as an exact set (op, algo, dtype, redop, placement, bytes): a
point missing, or skipped where no refusal is expected, fails. The sweep files are read with
PyYAML (Debian's python3-yaml, installed by scripts/deps.sh); the rest is stdlib.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402
from launcher import exited_with, mpi_of, mpirun  # noqa: E402


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd: list[str], timeout: int = 240, env: dict | None = None) -> subprocess.CompletedProcess:
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.stdout:
        print(p.stdout[-4000:])
    if p.stderr:
        print(p.stderr[-4000:], file=sys.stderr)
    return p


def fresh_dir(path: str) -> Path:
    d = Path(path)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d


def algos_for(collbench: str, op: str) -> list[str]:
    """Algorithms --list shows for an op on the mpi backend that `--algo all` runs: the
    library's forced internals (library:ALGO) are on request only (`library:all`)."""
    p = run([collbench, "--list"])
    if p.returncode != 0:
        fail("--list failed")
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == op and f[2] in ("any", "mpi") and not f[1].startswith("library:"):
            out.append(f[1])
    if not out:
        fail(f"--list shows no algorithm for {op}")
    return out


def parse_size(text) -> int:
    """8, 64K, 16M, 1G -> bytes (the sweep files' sizes)."""
    t = str(text).strip()
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(t[:-1]) * units[t[-1].upper()] if t[-1].upper() in units else int(t)


def sizes_for(op: str, n: int, dtype: str, lo: int, hi: int, factor: int) -> list[int]:
    """The message sizes collbench measures for -b lo -e hi -f factor (harness/plan/sizes.cpp):
    lo, lo x factor ... while <= hi, then hi itself; each rounded down to whole chunks (n
    chunks for the n-chunk ops) of whole elements, a size below one element per rank raised to
    one (0 only when asked), repeats dropped."""
    steps, s = [], lo
    while True:
        steps.append(s)
        nxt = 1 if s == 0 else s * factor
        if nxt > hi:
            break
        s = nxt
    if steps[-1] != hi:
        steps.append(hi)
    granule = cc.schema.ops()[op].size_chunks(n) * cc.schema.dtype_sizes()[dtype]
    out: list[int] = []
    for req in steps:
        b = max(req // granule, 1 if req else 0) * granule
        if not out or out[-1] != b:
            out.append(b)
    return out


def point(r: dict) -> tuple:
    return (r["op"], r["algo"], r["dtype"], r["redop"], r["in_place"], r["bytes"])


def expect_points(what: str, results: list[dict], want: set[tuple]) -> None:
    """The results are exactly the points `want`, each once; none wrong; none skipped except
    han on one node (refused with its reason)."""
    got = [point(r) for r in results]
    if len(got) != len(set(got)):
        fail(f"{what}: a point recorded twice: {sorted(p for p in set(got) if got.count(p) > 1)[:4]}")
    if set(got) != want:
        fail(f"{what}: {len(set(got))} points, want {len(want)}: missing {sorted(want - set(got))[:5]}, "
             f"extra {sorted(set(got) - want)[:5]}")
    for r in results:
        if r["wrong"] != 0:
            fail(f"{what}: wrong elements: {r}")
        if r["skipped"] and not cc.skipped_as_expected(r):
            fail(f"{what}: skipped where no refusal is expected: {point(r)}: {r.get('skip_reason')}")
        if not r["skipped"] and r["algo"] == "han" and r["nodes"] == 1:
            fail(f"{what}: han ran on one node: {point(r)}")


# ------------------------------------------------------------------ cli

BAD_INPUTS = [
    (["--op", "allreduc"], "unknown op 'allreduc'"),
    (["--op", "allreduce", "--algo", "nope"], "unknown algo 'nope'"),
    (["-b", "-1"], "negative"),
    (["-e", "1Q"], "unknown suffix"),
    (["-b", "99999999999999999999G"], "too large"),
    (["-b", "1.5"], "not a whole number"),
    (["-n", "0"], "--iters"),
    (["-c", "maybe"], "--check"),
    (["--dtype", "float33"], "unknown dtype"),
    (["--redop", "mean"], "unknown redop"),
    (["--inplace", "2"], "--inplace"),
    (["--backend", "nccl"], "--backend nccl moves device memory only"),
    (["--batch", "--interleave"], "cannot be combined"),
    (["-b", "2M", "-e", "1M"], "larger than"),
    (["--timeout", "0"], "--timeout"),
    (["--sync", "sometimes"], "--sync"),
    (["--no-such-flag"], "--no-such-flag"),
    (["--config", "/nonexistent.yaml"], "cannot read"),
    (["--print-layouts"], "needs a sweep file"),
    (["--root", "5", "--op", "broadcast", "--algo", "library", "-b", "8", "-e", "8"], "out of range"),
]


def has_gpu() -> bool:
    return os.path.exists("/dev/nvidia0") or shutil.which("nvidia-smi") is not None


def test_cli(collbench: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    bad = BAD_INPUTS + ([] if has_gpu() else [(["--device", "cuda"], "--device cuda: ")])
    for args, expect in bad:
        out = d / "out.jsonl"
        p = run([collbench, *args, "--json", str(out)])
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2:
            fail(f"{args}: exit {p.returncode}, want 2")
        if len(lines) != 1 or not lines[0].startswith("collbench: error: ") or "; accepted: " not in lines[0]:
            fail(f"{args}: want one 'collbench: error: ...; accepted: ...' line, got {lines}")
        if expect not in lines[0]:
            fail(f"{args}: {expect!r} not in {lines[0]!r}")
        if out.exists():
            fail(f"{args}: {out} was created")
        if p.stdout:
            fail(f"{args}: printed on stdout: {p.stdout!r}")
    # An existing results file is not touched by a failing invocation.
    keep = d / "keep.jsonl"
    keep.write_text('{"type":"run"}\n')
    before = keep.stat().st_mtime_ns
    p = run([collbench, "--op", "nope", "--json", str(keep), "--overwrite"])
    if p.returncode != 2 or keep.read_text() != '{"type":"run"}\n' or keep.stat().st_mtime_ns != before:
        fail("a failing invocation touched an existing --json file")
    bad_dir = d / "no" / "such" / "dir" / "x.jsonl"
    p = run([collbench, "--op", "broadcast", "--algo", "library", "-b", "8", "-e", "8", "--json", str(bad_dir)])
    if p.returncode != 2 or "cannot open" not in p.stderr or bad_dir.parent.exists():
        fail("an unwritable --json path must fail with exit 2 before measuring")
    for args in (["--help"], ["--list"]):
        p = run([collbench, *args])
        if p.returncode != 0 or not p.stdout or p.stderr:
            fail(f"{args}: exit {p.returncode}, stdout {len(p.stdout)} chars, stderr {p.stderr!r}")
    print("cli: OK")


# ------------------------------------------------------------------ allreduce

def test_allreduce(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "allreduce.jsonl"
    p = run(mpirun(mpiexec, 4, [collbench, "--op", "allreduce", "--algo", "all", "-b", "8", "-e", "1M",
                                "--json", str(out)]))
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    if "# Out of bounds values : 0 OK" not in p.stdout or "# Avg bus bandwidth" not in p.stdout:
        fail("the table lacks the nccl-tests footer")
    runs = cc.check_file(str(out), runs=1)
    (results,) = runs.values()
    algos = algos_for(collbench, "allreduce")
    sizes = [8 << k for k in range(18)]  # 8 B .. 1 MiB; all divisible by 4 B
    got = sorted((r["algo"], r["bytes"]) for r in results)
    want = sorted((a, s) for a in algos for s in sizes)
    if got != want:
        fail(f"want one result per (algo, size): missing {sorted(set(want) - set(got))[:5]}, "
             f"extra {sorted(set(got) - set(want))[:5]}, {len(got)} vs {len(want)}")
    for r in results:
        if r["world_size"] != 4 or r["op"] != "allreduce" or r["mode"] != "per_iter" or r["wrong"] != 0:
            fail(f"unexpected result {r}")
        if r["algo"] == "han":  # one node: refused with its reason, at every size
            if not cc.skipped_as_expected(r):
                fail(f"han on one node must be skipped with its reason: {r}")
            continue
        if r["skipped"] or r["iters"] != 20 or r["warmup"] != 5 or r["count"] != r["bytes"] // 4:
            fail(f"unexpected result {r}")
    first = out.read_text()
    p = run(mpirun(mpiexec, 4, [collbench, "--op", "allreduce", "--algo", "ring,library", "-b", "64K", "-e", "64K",
                                "--json", str(out), "--quiet"]))
    if p.returncode != 0 or p.stdout:
        fail(f"second run: exit {p.returncode}, stdout {p.stdout!r} (--quiet prints nothing)")
    if not out.read_text().startswith(first):
        fail("the second run did not append (earlier lines changed)")
    runs = cc.check_file(str(out), runs=2)
    second = list(runs.values())[1]
    if sorted((r["algo"], r["bytes"]) for r in second) != [("library", 65536), ("ring", 65536)]:
        fail(f"second run results: {second}")

    # Wrong results end to end: the test-only fault flips a bit of every message rank 1 receives
    # (harness/runtime/fault.hpp). Verification must count wrong elements, the table say FAILED,
    # and the exit status be 1 (with the end record saying so).
    bad = d / "corrupt.jsonl"
    env = dict(os.environ, COLLBENCH_TEST_FAULT="corrupt:rank=1:after=0")
    p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "ring", "-b", "4K", "-e", "4K", "-n", "2",
                                "-w", "1", "--json", str(bad)]), env=env)
    if p.returncode != 1:
        fail(f"a planted corruption: exit {p.returncode}, want 1 (some point had wrong results)")
    recs = [r for _, r in cc.load(str(bad))]
    res = [r for r in recs if r["type"] == "result"]
    if len(res) != 1 or res[0]["skipped"] or not res[0]["wrong"] > 0:
        fail(f"a planted corruption: want one measured point with wrong > 0, got {res}")
    if recs[-1]["type"] != "end" or recs[-1]["exit_status"] != 1:
        fail(f"a planted corruption: the end record says {recs[-1]}")
    if "# Out of bounds values : 0 OK" in p.stdout or "Out of bounds values" not in p.stdout:
        fail("a planted corruption: the table's footer does not report the wrong values")

    # --segment reaches the algorithms that pipeline (ring, tree, pairwise ...): every custom
    # algorithm of four ops, 256 B segments (many pipeline steps at 64 KiB), exact results, and
    # the records carry the segment.
    seg = d / "segment.jsonl"
    ops = ["allreduce", "broadcast", "reduce_scatter", "alltoall"]
    p = run(mpirun(mpiexec, 2, [collbench, "--op", ",".join(ops), "--algo", "all", "--segment", "256", "-b", "1K",
                                "-e", "64K", "-f", "64", "-n", "2", "-w", "1", "--json", str(seg), "--quiet"]))
    if p.returncode != 0:
        fail(f"--segment 256: exit {p.returncode}")
    (res,) = cc.check_file(str(seg), runs=1).values()
    want = {(op, a, "float32", "sum" if cc.schema.ops()[op].reduces else None, False, b)
            for op in ops for a in algos_for(collbench, op) for b in sizes_for(op, 2, "float32", 1024, 65536, 64)}
    expect_points("--segment 256", res, want)
    run_rec = next(r for _, r in cc.load(str(seg)) if r["type"] == "run")
    if [c["settings"]["segment"] for c in run_rec["config"]["cases"]] != [256]:
        fail(f"--segment 256 is not in the run record's case settings: {run_rec['config']['cases']}")
    print("allreduce: OK")


# ------------------------------------------------------------------ modes

def test_modes(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "modes.jsonl"
    common = ["-b", "8", "-e", "64K", "-f", "8", "--json", str(out), "--quiet"]
    cases = [
        (["--op", "allgather,reduce_scatter", "--algo", "all", "--interleave", "--inplace", "both", "-n", "5"],
         "interleaved"),
        (["--op", "broadcast,gather,scatter,reduce", "--algo", "all", "--root", "2", "--batch", "-n", "4"], "batch"),
        (["--op", "alltoall", "--algo", "all", "--min-time", "0.001", "--max-noise", "0.9", "-n", "4",
          "--max-iters", "64", "--dtype", "int32,float64", "--redop", "all", "--keep-samples", "8"], "per_iter"),
        (["--op", "allreduce", "--algo", "all", "--dtype", "int8,bfloat16", "--redop", "all", "-n", "3", "-w", "0",
          "-c", "1", "--keep-samples", "0"], "per_iter"),
    ]
    for args, mode in cases:
        p = run(mpirun(mpiexec, 3, [collbench, *args, *common]))
        if p.returncode != 0:
            fail(f"{args}: exit {p.returncode}")
    runs = list(cc.check_file(str(out), runs=len(cases)).values())
    for (args, mode), results in zip(cases, runs):
        if not results or any(r["mode"] != mode for r in results if not r["skipped"]):
            fail(f"{args}: modes {set(r['mode'] for r in results)} != {mode}")
    inter, batch, adaptive, small = runs
    # The exact points of each run: every op x algorithm (--algo all) x size x dtype x redop x placement.
    n = 3
    sz = lambda op, dt: sizes_for(op, n, dt, 8, 65536, 8)  # noqa: E731
    red = lambda op, rs: rs if cc.schema.ops()[op].reduces else [None]  # noqa: E731
    want = [
        {(op, a, "float32", rd, ip, b) for op in ("allgather", "reduce_scatter") for a in algos_for(collbench, op)
         for rd in red(op, ["sum"]) for ip in (False, True) for b in sz(op, "float32")},
        {(op, a, "float32", rd, False, b) for op in ("broadcast", "gather", "scatter", "reduce")
         for a in algos_for(collbench, op) for rd in red(op, ["sum"]) for b in sz(op, "float32")},
        {("alltoall", a, dt, None, False, b) for a in algos_for(collbench, "alltoall") for dt in ("int32", "float64")
         for b in sz("alltoall", dt)},
        {("allreduce", a, dt, rd, False, b) for a in algos_for(collbench, "allreduce") for dt in ("int8", "bfloat16")
         for rd in ("sum", "prod", "max", "min", "avg") for b in sz("allreduce", dt)},
    ]
    for (args, _), results, w in zip(cases, runs, want):
        expect_points(" ".join(args[:4]), results, w)
    if {r["in_place"] for r in inter} != {False, True}:
        fail("--inplace both did not run both placements")
    for r in inter:  # n-chunk sizes: 3 ranks x 4 B granule
        if r["bytes"] % 12:
            fail(f"{r['op']} bytes {r['bytes']} not rounded to whole chunks")
    if any(r["root"] != 2 for r in batch) or any(r["iters"] != 4 for r in batch if not r["skipped"]):
        fail("batch run: root or iters wrong")
    for r in adaptive:
        if not r["skipped"] and not (4 <= r["iters"] <= 64):
            fail(f"adaptive iters {r['iters']} outside [4, 64]")
        if r["redop"] is not None:
            fail("alltoall does not reduce: redop must be null")
    # samples_us: kept up to --keep-samples (default 1000), its count and span checked by check_file
    measured = lambda rs: [r for r in rs if not r["skipped"]]  # noqa: E731
    if not all(len(r.get("samples_us", [])) == r["samples"] for r in measured(inter) + measured(batch)):
        fail("default --keep-samples: every measured point must carry its samples_us")
    if any(("samples_us" in r) != (r["samples"] <= 8) for r in measured(adaptive)):
        fail("--keep-samples 8: samples_us only on points with at most 8 samples")
    if any("samples_us" in r for r in small):
        fail("--keep-samples 0: no samples_us")
    if {r["dtype"] for r in small} != {"int8", "bfloat16"} or {r["redop"] for r in small} != {"sum", "prod", "max", "min", "avg"}:
        fail("dtype x redop sweep incomplete")
    print("modes: OK")


# ------------------------------------------------------------------ sweep file

def test_sweep(collbench: str, mpiexec: str, workdir: str, sweep_file: str) -> None:
    d = fresh_dir(workdir)
    p = run([collbench, "--config", sweep_file, "--print-layouts"])
    layouts = p.stdout.split()
    if p.returncode != 0 or not layouts or not all(re.fullmatch(r"\d+x\d+", l) for l in layouts):
        fail(f"--print-layouts: {p.returncode} {p.stdout!r}")
    out = d / "sweep.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--config", sweep_file, "--json", str(out)]))
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    (results,) = cc.check_file(str(out), runs=1).values()
    run_rec = next(r for _, r in cc.load(str(out)) if r["type"] == "run")
    if run_rec["config"]["config_file"] != sweep_file or run_rec["config"]["layouts"] != layouts:
        fail("the run record does not carry the resolved sweep file")
    import yaml as pyyaml  # Debian's python3-yaml (scripts/deps.sh)
    spec = pyyaml.safe_load(Path(sweep_file).read_text())
    want = set()
    for case in spec["cases"]:
        c = {**spec["defaults"], **case}
        algos = c["algo"] if isinstance(c["algo"], list) else [c["algo"]]
        rd = c["redop"] if cc.schema.ops()[c["op"]].reduces else None
        for a in algos:
            for b in sizes_for(c["op"], 2, c["dtype"], parse_size(c["min_bytes"]), parse_size(c["max_bytes"]),
                               int(c["step_factor"])):
                want.add((c["op"], a, c["dtype"], rd, False, b))
    expect_points(f"sweep {sweep_file}", results, want)
    dry_runs(collbench, mpiexec, Path(sweep_file).parent)
    print(f"sweep: OK ({len(results)} results, every (op, algo, size) of the file, layouts {layouts})")


# The shipped sweep files (slurm/sweeps/*.yaml) planned with --dry-run (no MPI, no file), at
# the first layout's rank count: one block per (op, dtype, redop, placement) of each case, in
# the file's order, with the case's algorithms (every one --list shows for "all"), its size
# range (first, last, count) and iterations; DDP cases a workload block with their algorithms;
# pingpong a block per method.
SHIPPED_SWEEPS = ["default.yaml", "full.yaml", "tuning.yaml", "ddp.yaml", "hier.yaml", "small.yaml"]


def listed(v) -> list:
    return v if isinstance(v, list) else [v]


def dry_runs(collbench: str, mpiexec: str, sweeps: Path) -> None:
    import yaml as pyyaml
    all_dtypes = sorted(cc.schema.dtype_sizes())
    for name in SHIPPED_SWEEPS:
        path = sweeps / name
        spec = pyyaml.safe_load(path.read_text())
        nodes, per = (int(x) for x in spec.get("layouts", ["1x1"])[0].split("x"))
        n = nodes * per
        p = run([collbench, "--dry-run", "--config", str(path), "--ranks", str(n)])
        # Open MPI's components (coll/tuned's library:ALGO, coll/han) are not built against MPICH:
        # a file that names one is refused there, in one line naming it (default.yaml, hier.yaml).
        refused = re.fullmatch(r"collbench: error: (?:unknown algo '(library:\w+)' for op \w+ .*"
                               r"|--algo (han): han is Open MPI's .*)\n", p.stderr)
        what = refused and (refused[1] or refused[2])
        if mpi_of(mpiexec) == "mpich" and p.returncode == 2 and what and what in path.read_text():
            print(f"--dry-run {name}: refused under MPICH (names Open MPI's {what}), as it must be")
            continue
        if p.returncode != 0 or p.stderr:
            fail(f"--dry-run {name} --ranks {n}: exit {p.returncode}, stderr {p.stderr!r}")
        lines = p.stdout.splitlines()
        blocks = [(l.split(": ", 1)[1], lines[i + 1] if i + 1 < len(lines) else "")
                  for i, l in enumerate(lines) if re.match(r"block \d+: ", l)]
        fields = lambda head: dict(f.split("=", 1) for f in head.split() if "=" in f)  # noqa: E731
        bi = 0
        for case in spec["cases"]:
            c = {**spec.get("defaults", {}), **case}
            op, algos = c["op"], listed(c["algo"])
            if op == "pingpong":
                got = []
                while bi < len(blocks) and blocks[bi][0].startswith("pingpong "):
                    got.append(fields(blocks[bi][0])["algo"])
                    bi += 1
                if sorted(got) != sorted(algos):
                    fail(f"--dry-run {name}: pingpong methods {got}, the file says {algos}")
                continue
            if algos == ["all"]:
                algos = algos_for(collbench, op)
            if c.get("workload") == "ddp":
                head = blocks[bi][0] if bi < len(blocks) else ""
                if (not head.startswith(f"workload ddp model={c['model']} ")
                        or sorted(fields(head).get("algo", "").split(",")) != sorted(algos)):
                    fail(f"--dry-run {name}: want the {c['model']} DDP block with algo={','.join(algos)}, got {head!r}")
                bi += 1
                continue
            dtypes = listed(c.get("dtype", "float32"))
            dtypes = all_dtypes if dtypes == ["all"] else dtypes
            reduces = cc.schema.ops()[op].reduces
            redops = listed(c.get("redop", "sum")) if reduces else [None]
            placements = {"0": [0], "1": [1], "both": [0, 1]}[str(c.get("inplace", "0"))]
            want = sorted((dt, rd, ip) for dt in dtypes for rd in redops for ip in placements)
            got = []
            for _ in want:
                if bi >= len(blocks):
                    fail(f"--dry-run {name}: no block left for case {case}")
                head, detail = blocks[bi]
                f = fields(head)
                # --list's order (library first) is not the plan's: the set must match
                if head.split()[0] != op or sorted(f.get("algo", "").split(",")) != sorted(algos):
                    fail(f"--dry-run {name}: want {op} algo={','.join(algos)}, got {head!r}")
                got.append((f["dtype"], f.get("redop"), int(f["in_place"])))
                sz = sizes_for(op, n, f["dtype"], parse_size(c["min_bytes"]), parse_size(c["max_bytes"]),
                               int(c["step_factor"]))
                if not detail.startswith(f"  {sz[0]} .. {sz[-1]} B ({len(sz)} sizes); iters {c['iters']},"):
                    fail(f"--dry-run {name}: {op} block {head!r}: want {sz[0]} .. {sz[-1]} B ({len(sz)} sizes), "
                         f"iters {c['iters']}; got {detail!r}")
                bi += 1
            if sorted(got) != want:
                fail(f"--dry-run {name}: {op} blocks (dtype, redop, in place) {sorted(got)}, the file says {want}")
        if bi != len(blocks):
            fail(f"--dry-run {name}: blocks no case of the file asks for: {blocks[bi:]}")
        total = re.search(r"^total: (\d+) block\(s\), (\d+) point", p.stdout, re.M)
        if not total or int(total.group(1)) != len(blocks):
            fail(f"--dry-run {name}: the total line does not count {len(blocks)} blocks:\n{p.stdout}")
        if not re.search(r"^estimated time: about [\d.]+ (s|min|h) \(assumed ", p.stdout, re.M):
            fail(f"--dry-run {name}: no estimated time:\n{p.stdout}")
        print(f"dry run {name} at {n} ranks: {len(blocks)} blocks, {total.group(2)} points, as the file says")


# ------------------------------------------------------------------ nvtx

def parse_nvtx(path: Path) -> list[tuple[int, str, str, str]]:
    """(depth, domain, name, payload) of every push, checking pushes and pops balance."""
    pushes, depth = [], {}
    for line in path.read_text().splitlines():
        f = line.split("\t")
        if f[0] == "push":
            d = int(f[1])
            if d != depth.get(f[2], 0):
                fail(f"{path}: bad nesting at {line!r}")
            depth[f[2]] = d + 1
            pushes.append((d, f[2], f[3], f[4]))
        elif f[0] == "pop":
            depth[f[2]] = depth.get(f[2], 0) - 1
            if int(f[1]) != depth[f[2]] or depth[f[2]] < 0:
                fail(f"{path}: unbalanced pop {line!r}")
    if any(depth.values()):
        fail(f"{path}: ranges left open: {depth}")
    return pushes


def documented_ranges(doc: str) -> list[tuple[str, set[int]]]:
    """(pattern, levels) of each row of the docs' "What the timeline shows" table (docs/profiling.md;
    unit.harness checks it against harness/runtime/nvtx.hpp's kRanges): | `pattern` | levels | ... |."""
    lines = Path(doc).read_text().splitlines()
    at = next((i for i, l in enumerate(lines)
               if l.startswith("#") and l.lstrip("#").strip().startswith("What the timeline shows")), None)
    if at is None:
        fail(f"{doc}: no section 'What the timeline shows'")
    rows, table = [], False
    for line in lines[at + 1:]:
        if not line.startswith("|"):
            if table or line.startswith("#"):
                break
            continue
        table = True
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].startswith("`"):
            levels = set() if cells[1] == "—" else {int(x) for x in cells[1].split(",")}
            rows.append((cells[0].strip("`"), levels))
    if not rows:
        fail(f"{doc}: no range table under 'What the timeline shows'")
    return rows


def range_matcher(rows: list[tuple[str, set[int]]]):
    """name, depth -> the documented pattern it is an instance of (at a documented level), or None.
    A "<key>" is one space-free word; "<point>" is a point's name: any row without "<point>"."""
    def rx(pattern: str, point: str = "") -> str:
        return re.sub(r"<[a-z]+>", lambda m: point if m.group(0) == "<point>" else r"\S+", re.escape(pattern))
    points = "(?:" + "|".join(rx(p) for p, _ in rows if "<point>" not in p) + ")"
    compiled = [(p, levels, re.compile(rx(p, points))) for p, levels in rows]

    def match(name: str, depth: int) -> str | None:
        return next((p for p, levels, c in compiled if depth in levels and c.fullmatch(name)), None)
    return match


def test_nvtx(collbench: str, mpiexec: str, workdir: str, lib: str, doc: str) -> None:
    d = fresh_dir(workdir)
    iters, sizes = 3, [1024, 2048, 4096]
    # Each run's ranges go to their own files (the injection library truncates NAME.<rank>).
    runs = {"sweep": ["--op", "allreduce", "--algo", "ring", "-b", "1K", "-e", "4K", "-n", str(iters), "-w", "2"],
            "interleave": ["--op", "allreduce", "--algo", "ring,library", "-b", "1K", "-e", "1K", "-n", "2", "-w", "1",
                           "--interleave"],
            "pingpong": ["--op", "pingpong", "-b", "8", "-e", "8", "-n", "2", "-w", "1"],
            "ddp": ["--workload", "ddp", "--model", "linear", "--algo", "ring", "-n", "2", "-w", "1"]}
    pushed: dict[str, list[list[tuple[int, str, str, str]]]] = {}
    for name, args in runs.items():
        env = dict(os.environ, NVTX_INJECTION64_PATH=str(Path(lib).resolve()), COLLBENCH_NVTX_OUT=str(d / name))
        p = run(mpirun(mpiexec, 2, [collbench, *args, "--quiet"],
                       export=("NVTX_INJECTION64_PATH", "COLLBENCH_NVTX_OUT")), env=env)
        if p.returncode != 0:
            fail(f"{name}: exit {p.returncode}")
        pushed[name] = []
        for rank in range(2):
            path = d / f"{name}.{rank}"
            if not path.exists():
                fail(f"{path} missing: the injection library saw nothing from rank {rank}")
            pushed[name].append(parse_nvtx(path))
    # Every range pushed is a documented one at a documented level, and every documented range
    # is pushed by one of these runs.
    rows = documented_ranges(doc)
    match = range_matcher(rows)
    seen = set()
    for name, per_rank in pushed.items():
        for rank, pushes in enumerate(per_rank):
            if any(dom != "collbench" for _, dom, _, _ in pushes):
                fail(f"{name} rank {rank}: a range outside the collbench domain: {pushes[:3]}")
            for dep, _, n, _ in pushes:
                pattern = match(n, dep)
                if pattern is None:
                    fail(f"{name} rank {rank}: range {n!r} at level {dep} is not in {doc}'s table")
                seen.add(pattern)
    unseen = [p for p, levels in rows if levels and p not in seen]
    if unseen:
        fail(f"documented ranges no run pushed: {unseen}")
    for rank, pushes in enumerate(pushed["sweep"]):
        for b in sizes:
            what = f"allreduce/ring {b}B"
            point = [(dep, n) for dep, _, n, _ in pushes if n == what]
            if point != [(0, what)]:
                fail(f"rank {rank}: point range {what!r} {point}")
            warm = [x for x in pushes if x[2] == f"warmup {what}"]
            it = [x for x in pushes if x[2] == f"iter {what}"]
            ver = [x for x in pushes if x[2] == f"verify {what}"]
            if len(warm) != 1 or warm[0][0] != 1 or len(ver) != 1 or ver[0][0] != 1:
                fail(f"rank {rank}: warm-up/verify ranges of {what}: {warm} {ver}")
            # Every iteration index, at depth 1. Clock-started samples some rank began late are
            # taken again in a later pass (counted in "late"), numbered on from the samples
            # kept, so an index may appear more than once.
            idx = sorted({int(x[3]) for x in it})
            if idx != list(range(iters)) or len(it) < iters or any(x[0] != 1 for x in it):
                fail(f"rank {rank}: iteration ranges of {what}: {it}")
    print(f"nvtx: OK ({sum(len(p) for r in pushed.values() for p in r)} ranges, every one of {len(seen)} documented "
          f"patterns seen)")


# ------------------------------------------------------------------ sync

def test_sync(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "sync.jsonl"
    offset = 3000.0  # COLLBENCH_TEST_CLOCK: rank 1's clock 3 ms ahead of rank 0's
    env = dict(os.environ, COLLBENCH_TEST_CLOCK=f"{offset}:0")
    common = ["--op", "allreduce,broadcast", "--algo", "ring,library", "-b", "8", "-e", "4K", "-f", "8", "-n", "20",
              "--json", str(out), "--quiet"]
    for args in (["--sync", "clock"], ["--sync", "barrier"], ["--batch"]):
        p = run(mpirun(mpiexec, 2, [collbench, *args, *common], export=("COLLBENCH_TEST_CLOCK",)), env=env)
        if p.returncode != 0:
            fail(f"{args}: exit {p.returncode}")
    runs = list(cc.check_file(str(out), runs=3).values())
    run_recs = [r for _, r in cc.load(str(out)) if r["type"] == "run"]
    for rec in run_recs:
        cal = rec["calibration"]
        err, offs = cal["clock_sync_error_us"], cal["clock_offset_us"]
        if offs[0] != 0 or abs(offs[1] - offset) > err + 1.0:
            fail(f"injected offset {offset} us not recovered: {offs} (error bound {err} us)")
        if cal["clock_shared"] != [True, False]:
            fail(f"the test clock must make rank 1 estimated: clock_shared {cal['clock_shared']}")
        if not (cal["timer_read_ns"] > 0 and cal["barrier_us"] > 0 and cal["barrier_reps"] > 0):
            fail(f"calibration incomplete: {cal}")
    clock, barrier, batch = runs
    barrier_us = run_recs[0]["calibration"]["barrier_us"]
    for r in clock:
        # Ops >= 100 x the calibrated barrier are barrier-started, and say so (2x margins: the
        # rule reads the warm-up mean, not the p50).
        long_op = r["sync_fallback"] is not None and "x the barrier" in r["sync_fallback"]
        if long_op and r["time_us"]["p50"] < 50 * barrier_us:
            fail(f"a short op barrier-started as long (barrier {barrier_us} us): {r}")
        if r["time_us"]["p50"] > 200 * barrier_us and not long_op:
            fail(f"an op over 200x the barrier ({barrier_us} us) must be barrier-started and say why: {r}")
        if r["sync"] == "clock":
            if r["sync_fallback"] is not None or r["window_us"] is None or r["start_skew_us"] is None:
                fail(f"clock result without its window/skew: {r}")
            if r["start_skew_us"] > 1000:  # offsets not applied would put ~3000 us of skew here
                fail(f"clock start skew {r['start_skew_us']} us: the offsets were not applied")
        elif r["sync"] != "barrier" or not r["sync_fallback"]:
            fail(f"a clock point must be clock-started or say why it fell back: {r}")
    if not any(r["sync"] == "clock" for r in clock):
        fail("no point was clock-started")
    for r in barrier + batch:
        if r["sync"] != "barrier" or r["late"] != 0 or r["window_us"] is not None or r["sync_fallback"] is not None:
            fail(f"barrier/batch result: {r}")
    for r in clock + barrier + batch:
        if r["osu_avg_us"] is None or r["nccl_avg_us"] is None or r["osu_avg_us"] <= 0 or r["nccl_avg_us"] <= 0:
            fail(f"reference conventions missing: {r}")
    print("sync: OK")


# ------------------------------------------------------------------ timeout

def test_timeout(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "t.jsonl"
    # 16 MiB ring allreduce on oversubscribed ranks: some wait exceeds 1 ms for sure.
    p = run(mpirun(mpiexec, 4, [collbench, "--op", "allreduce", "--algo", "ring", "-b", "16M", "-e", "16M",
                                "--timeout", "0.001", "--json", str(out), "--quiet"]), timeout=120)
    if not exited_with(mpiexec, p.returncode, 3):
        fail(f"exit {p.returncode}, want 3")
    m = re.search(r"collbench: error: rank \d+: timed out .*peer[= ]\d+", p.stderr)
    if not m or "op=allreduce" not in p.stderr or "algo=ring" not in p.stderr or "size=16777216" not in p.stderr:
        fail("the timeout message must name rank, peer, op, algo and size")
    recs = [r for _, r in cc.load(str(out))]
    types = [r["type"] for r in recs]
    # Every rank times out at once here: when rank 0's watchdog fires first, rank 0 writes the end
    # record with exit_status 3; when another rank's does, mpirun SIGTERMs rank 0, whose watcher
    # writes it with 143 at once (unless mpirun's SIGKILL comes first: the run record alone).
    if types not in (["run"], ["run", "end"]) or (types[-1] == "end" and recs[-1]["exit_status"] not in (3, 143)):
        fail(f"an aborted run leaves its run record (and at most an end record with exit_status 3 or 143), got {recs}")
    print("timeout: OK")


# ------------------------------------------------------------------ registered buffers

def test_registered(collbench: str, mpiexec: str, workdir: str) -> None:
    """--buffers registered: send/recv in peer memory, every algorithm exact, the field recorded."""
    d = fresh_dir(workdir)
    out = d / "r.jsonl"
    ops = "allreduce,allgather,broadcast,reduce,reduce_scatter"
    p = run(mpirun(mpiexec, 3, [collbench, "--op", ops, "--algo", "all", "--buffers", "registered", "--inplace",
                                "both", "-b", "8", "-e", "1M", "-f", "32", "-n", "3", "-w", "1", "--json", str(out),
                                "--quiet"]))
    if p.returncode != 0:
        fail(f"exit {p.returncode}: {p.stderr[-2000:]}")
    res = [r for _, r in cc.load(str(out)) if r["type"] == "result"]
    if not res or any(r.get("buffers") != "registered" for r in res):
        fail("every result of a registered run carries buffers: registered")
    bad = [(r["op"], r["algo"], r["bytes"], r["in_place"], r["wrong"]) for r in res
           if r["wrong"] or (r["skipped"] and not cc.skipped_as_expected(r))]
    if bad:
        fail(f"wrong or skipped points with registered buffers: {bad[:5]}")
    # efficiency (docs/measurement.md "Efficiency"): the shm algorithms' link is memory (a positive
    # number out of place, null in place: no copy to calibrate); the others' is the intra-node
    # link the run calibrated: busbw / its rate on one node.
    intra = next(r for _, r in cc.load(str(out)) if r["type"] == "run")["links"]["intra"]["GBps"]
    for r in res:
        e = r.get("efficiency")
        if r["skipped"] or r["bytes"] == 0:
            want = None
        elif r["algo"] == "shm":
            want = "positive" if not r["in_place"] else None
        else:
            want = r["busbw_GBps"] / intra
        ok = (e is None) if want is None else (e is not None and e > 0 if want == "positive" else
                                               e is not None and abs(e - want) <= 1e-9 * max(1.0, want))
        if not ok:
            fail(f"efficiency {e!r} (want {want!r}) for {r['op']}/{r['algo']} {r['bytes']} B in_place={r['in_place']}")
    shm = {r["op"] for r in res if r["algo"] == "shm"}
    if "allreduce" not in shm:
        fail(f"no allreduce/shm point measured: {sorted(shm)}")
    # The run-time claim choice (docs/zero-copy.md "Claiming"): the probe measured once per run,
    # not with more ranks than cores (then claims count as paying); never a claim where they do not.
    oversubscribed = 3 > (os.cpu_count() or 1)
    for r in res:
        if r["algo"] != "shm" or r["skipped"]:
            continue
        pc = r.get("peer_claim") or {}
        probe = pc.get("probe") or {}
        if probe.get("measured") is not (not oversubscribed) or (pc.get("claims") and not probe.get("pays")):
            fail(f"peer_claim {pc!r} of {r['op']}/shm {r['bytes']} B (3 ranks on {os.cpu_count()} cores)")
        # The kernel's copy probe likewise; registered buffers are read in place, never by the kernel.
        kp = pc.get("kernel_probe") or {}
        if kp.get("measured") is not (not oversubscribed) or pc.get("kernel_copy") is not False:
            fail(f"peer_claim {pc!r} of registered {r['op']}/shm {r['bytes']} B (3 ranks on {os.cpu_count()} cores)")
        # And the streaming probe; a final copy streams only from its output size up (registered).
        sp = pc.get("stream_probe") or {}
        want = r["op"] in ("allgather", "broadcast", "allreduce") and 0 < sp.get("from_bytes", 0) <= r["bytes"]
        if sp.get("measured") is not (not oversubscribed) or pc.get("streams") is not want:
            fail(f"peer_claim {pc!r} of registered {r['op']}/shm {r['bytes']} B (3 ranks on {os.cpu_count()} cores)")
    print(f"registered: OK: {len(res)} points exact, shm for {sorted(shm)}")


def test_auto(collbench: str, mpiexec: str, workdir: str, colltune: str) -> None:
    """--algo auto: a sweep -> colltune -> a tuning file -> every size runs the algorithm the file names."""
    d = fresh_dir(workdir)
    sweep, tuning, out = d / "sweep.jsonl", d / "tuning.yaml", d / "auto.jsonl"
    sizes = ["-b", "8", "-e", "256K", "-f", "8", "-n", "10", "-w", "2", "--quiet"]
    p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "all", *sizes, "--json", str(sweep)]))
    if p.returncode != 0:
        fail(f"sweep: exit {p.returncode}")
    p = run([colltune, str(sweep), "-o", str(tuning)])
    if p.returncode != 0 or not tuning.exists():
        fail(f"colltune: exit {p.returncode}")
    lines = tuning.read_text().splitlines()
    p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "auto,library", "--tuning", str(tuning),
                                *sizes, "--json", str(out)]))
    if p.returncode != 0:
        fail(f"auto: exit {p.returncode}")
    autos = [r for _, r in cc.load(str(out)) if r["type"] == "result" and r["algo"] == "auto"]
    if len(autos) != 6:  # 8 B .. 256 KiB by 8
        fail(f"expected 6 auto points, got {len(autos)}")
    for r in autos:
        path, _, line = r["tuning"].rpartition(":")
        text = lines[int(line) - 1] if path == str(tuning) and line.isdigit() else ""
        if f"algo: {r['chosen']}}}" not in text or r["tuning_match"] != "exact" or r["wrong"] or r["skipped"]:
            fail(f"{r['bytes']} B: chosen {r['chosen']!r} from {r['tuning']!r} ({text.strip()!r}), "
                 f"match {r['tuning_match']!r}, wrong {r['wrong']}")
    # A DDP step with auto: each bucket runs the file's choice for its size (linear: one 84-byte bucket).
    ddp = d / "ddp.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--workload", "ddp", "--model", "linear", "--algo", "auto,library",
                                "--tuning", str(tuning), "-n", "3", "-w", "1", "--quiet", "--json", str(ddp)]))
    if p.returncode != 0:
        fail(f"ddp auto: exit {p.returncode}")
    cc.check_file(str(ddp), runs=1)
    (w,) = [w for w in cc.workload_records(str(ddp)) if w["algo"] == "auto"]
    (b,) = w["buckets"]
    path, _, line = b.get("tuning", "").rpartition(":")
    text = lines[int(line) - 1] if path == str(tuning) and line.isdigit() else ""
    if b["bytes"] != 84 or f"algo: {b.get('chosen')}}}" not in text or w["wrong"] or w["skipped"]:
        fail(f"ddp auto bucket {b} ({text.strip()!r}), wrong {w['wrong']}, skipped {w['skip_reason']!r}")
    # A bad file or none: one line, exit 2, nothing written.
    bad = d / "bad.yaml"
    bad.write_text("schema: collbench-tuning/0\nentries: []\n")
    for extra, needle in ((["--tuning", str(bad)], f"tuning file {bad}:1"), ([], "needs a tuning file")):
        res = d / "none.jsonl"
        p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "auto", *extra, *sizes,
                                    "--json", str(res)]))
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("collbench: error:")]
        if p.returncode != 2 or len(errors) != 1 or needle not in errors[0] or res.exists():
            fail(f"bad tuning {extra}: exit {p.returncode}, errors {errors}, wrote {res.exists()}")
    print(f"auto: OK: {[(r['bytes'], r['chosen']) for r in autos]}")


def test_ddp(collbench: str, mpiexec: str, workdir: str) -> None:
    """--workload ddp: ResNet-50's DDP buckets on 2 ranks, every allreduce algorithm and the library
    interleaved, each step verified; a model file and an order file; bad input refused up front."""
    d = fresh_dir(workdir)
    out = d / "ddp.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--workload", "ddp", "--model", "resnet50", "--algo", "all", "--interleave",
                                "-n", "3", "-w", "1", "--compute-ms", "30,60,5", "--json", str(out)]))
    if p.returncode != 0:
        fail(f"resnet50: exit {p.returncode}")
    runs = cc.check_file(str(out), runs=1)
    wls = cc.workload_records(str(out))
    if p.returncode != 0 or "avg" != wls[0]["redop"]:
        fail(f"a DDP workload averages by default: {wls[0]['redop']}")
    if list(runs.values()) != [[]] or {w["algo"] for w in wls} != set(algos_for(collbench, "allreduce")):
        fail(f"one workload record per allreduce algorithm, no result records: {[w['algo'] for w in wls]}")
    for w in wls:
        b = w["buckets"]
        # DDP's rule (reverse registration order): fc first, reaching the 1 MiB first cap at once.
        if (w["param_count"], w["param_tensors"], b[0]["first"], b[0]["last"]) != (25557032, 161, "fc.bias", "fc.weight"):
            fail(f"resnet50 buckets: {w['param_count']} params, first bucket {b[0]}")
        if w["skipped"] and cc.skipped_as_expected(w):
            continue
        if w["skipped"] or not w["checked"] or w["wrong"] or w["compute"] != {"forward_ms": 30.0, "backward_ms": 60.0,
                                                                               "optimizer_ms": 5.0, "source": "--compute-ms"}:
            fail(f"{w['algo']}: skipped {w['skip_reason']!r}, checked {w['checked']}, wrong {w['wrong']}, {w['compute']}")
        if w["mode"] != "interleaved" or w["iters"] < 3 or not all(t > 0 for t in w["bucket_p50_us"]):
            fail(f"{w['algo']}: mode {w['mode']}, {w['iters']} steps, bucket times {w['bucket_p50_us']}")
    if "workload ddp  model resnet50" not in p.stdout:
        fail("the table names the workload")
    # A file holding workload records takes more runs (appended, and resumed).
    for extra in ([], ["--resume"]):
        p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "ring", "-b", "8", "-e", "8", "-n", "2",
                                    "--quiet", "--json", str(out), *extra]))
        if p.returncode != 0:
            fail(f"appending {extra} to a file with workload records: exit {p.returncode}")
    cc.check_file(str(out), runs=3)
    # A model file and a gradient-ready order file (the five lines the README shows write them).
    model, order = d / "tiny.yaml", d / "order.txt"
    model.write_text("name: tiny\nparams:\n  - {name: a.weight, shape: [300000]}\n  - {name: a.bias, shape: [7]}\n"
                     "  - {name: b.weight, shape: [500, 1000], dtype: bfloat16}\n")
    order.write_text("a.bias\na.weight\nb.weight\n")
    out2 = d / "tiny.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--workload", "ddp", "--model", str(model), "--grad-order", str(order),
                                "--bucket-cap-mb", "0.5", "--algo", "ring", "-n", "2", "-w", "1", "--json", str(out2),
                                "--quiet"]))
    if p.returncode != 0:
        fail(f"model file: exit {p.returncode}")
    cc.check_file(str(out2), runs=1)
    (w,) = cc.workload_records(str(out2))
    got = [(b["first"], b["last"], b["dtype"]) for b in w["buckets"]]
    # float32: a.bias then a.weight reach the 1 MiB first cap together (1.2 MB): one bucket; bfloat16:
    # b.weight (1.0 MB, under the cap) is what is left at the end: a bucket of its own.
    if w["grad_dtype"] != "mixed" or sorted(got) != sorted([("a.bias", "a.weight", "float32"),
                                                           ("b.weight", "b.weight", "bfloat16")]):
        fail(f"tiny model buckets: {got} ({w['grad_dtype']})")
    # A per-layer profile: each bucket's backward time from its modules' (split by bytes).
    profile = d / "profile.yaml"
    profile.write_text("forward_ms: 5\noptimizer_ms: 1\nbackward_ms: {a: 3, b: 2}\n")
    out3 = d / "profile.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--workload", "ddp", "--model", str(model), "--compute-profile", str(profile),
                                "--algo", "ring", "-n", "2", "-w", "1", "--json", str(out3), "--quiet"]))
    if p.returncode != 0:
        fail(f"profile: exit {p.returncode}")
    cc.check_file(str(out3), runs=1)
    (w,) = cc.workload_records(str(out3))
    c = w["compute"]
    got = {b["first"][0]: ms for b, ms in zip(w["buckets"], c.get("bucket_backward_ms", []))}
    if got != {"a": 3.0, "b": 2.0} or c["backward_ms"] != 5.0 or c["source"] != f"profile:{profile}":
        fail(f"profile compute: {c}")
    # Bad input: one line, exit 2, nothing written.
    bad_file = d / "bad.json"
    bad_file.write_text('{"name": "x",\n "params": [\n  {"name": "w", "shape": [3, -1]}]}\n')
    for extra, needle in ((["--model", "resnet5"], "unknown model 'resnet5'"),
                          (["--model", str(bad_file)], f"model file {bad_file}"),
                          (["--model", "resnet50", "--bucket-cap-mb", "0"], "--bucket-cap-mb"),
                          (["--model", "llama2-7b"], "not enough memory"),
                          (["--model", "resnet50", "--grad-order", str(order)], str(order)),
                          (["--model", "resnet50", "--compute-profile", str(profile)], "covered by no backward_ms entry"),
                          (["--model", "resnet50", "--compute-ms", "1,2,3", "--compute-profile", str(profile)],
                           "one of them")):
        res = d / "none.jsonl"
        p = run(mpirun(mpiexec, 2, [collbench, "--workload", "ddp", *extra, "--json", str(res)]))
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("collbench: error:")]
        if p.returncode != 2 or len(errors) != 1 or needle not in errors[0] or res.exists():
            fail(f"bad ddp input {extra}: exit {p.returncode}, errors {errors}, wrote {res.exists()}")
    print(f"ddp: OK: {[(w['algo'], round(w['step_us']['p50'])) for w in wls if not w['skipped']]}")


def main(argv: list[str]) -> None:
    tests = {"cli": test_cli, "allreduce": test_allreduce, "modes": test_modes, "sweep": test_sweep,
             "nvtx": test_nvtx, "timeout": test_timeout, "sync": test_sync,
             "registered": test_registered, "auto": test_auto, "ddp": test_ddp}
    if len(argv) < 2 or argv[0] not in tests:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    tests[argv[0]](*argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
