"""End-to-end test of `collbench --op pingpong` on one machine (ctest harness.pingpong). Stdlib only.

    p2p_e2e.py COLLBENCH MPIEXEC WORKDIR

Under mpirun -np 3 (one node): the three OSU methods, records with src/dst/link and wrong == 0,
--pairs all (3 pairs) with its matrix, explicit pairs, --resume skipping recorded pairs, and a bad
pair list (exit 2, one line).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402
from launcher import mpirun  # noqa: E402


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd: list[str], timeout: int = 240) -> subprocess.CompletedProcess:
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.stdout:
        print(p.stdout[-4000:])
    if p.stderr:
        print(p.stderr[-4000:], file=sys.stderr)
    return p


def results_of(out: Path) -> list[dict]:
    (results,) = cc.check_file(str(out), runs=1).values()
    return results


def main(collbench: str, mpiexec: str, workdir: str) -> None:
    d = Path(workdir)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    np3 = mpirun(mpiexec, 3, [collbench, "--op", "pingpong"])
    sizes = [8, 512, 32768]

    # Every method at every size on the auto pair; one node, so only the intra pair 0-1.
    out = d / "methods.jsonl"
    p = run(np3 + ["--algo", "all", "-b", "8", "-e", "32K", "-f", "64", "-n", "10", "-w", "2", "--json", str(out)])
    if p.returncode != 0:
        fail(f"--algo all: exit {p.returncode}")
    res = results_of(out)
    got = sorted((r["algo"], r["bytes"]) for r in res)
    want = sorted((m, s) for m in ("latency", "bw", "bibw") for s in sizes)
    if got != want:
        fail(f"want one record per (method, size) on one pair: {got}")
    for r in res:
        if (r["src"], r["dst"], r["link"]) != (0, 1, "intra") or r["wrong"] != 0 or not r["checked"]:
            fail(f"record {r}")
        if r["nodes"] != 1 or r["ranks_per_node"] != 3 or r["world_size"] != 3 or r["iters"] != 10:
            fail(f"layout fields {r}")
        if r["busbw_GBps"] != r["algbw_GBps"] or r["time_us"]["p50"] <= 0:
            fail(f"bandwidth {r}")
    if "intra 0-1" not in p.stdout or "inter/" not in p.stdout or "# Out of bounds values : 0 OK" not in p.stdout:
        fail("the table lacks the intra/inter columns or the footer")
    for m in ("latency", "bw", "bibw"):
        if f"# pingpong {m}" not in p.stdout:
            fail(f"no table for method {m}")

    # Every pair: 3 of them on 3 ranks, and the matrices.
    out = d / "all.jsonl"
    p = run(np3 + ["--algo", "latency", "--pairs", "all", "-b", "8", "-e", "8", "-n", "5", "-w", "1", "--json", str(out)])
    if p.returncode != 0:
        fail(f"--pairs all: exit {p.returncode}")
    pairs = sorted((r["src"], r["dst"]) for r in results_of(out))
    if pairs != [(0, 1), (0, 2), (1, 2)]:
        fail(f"--pairs all on 3 ranks: {pairs}")
    if "latency matrix at 8 B: p50 time (us)" not in p.stdout or "bandwidth (GB/s)" not in p.stdout:
        fail("--pairs all prints no matrix")

    # Chosen pairs, direction kept.
    out = d / "chosen.jsonl"
    p = run(np3 + ["--algo", "bw", "--pairs", "2-0,1-2", "-b", "1K", "-e", "1K", "-n", "3", "--json", str(out)])
    if p.returncode != 0:
        fail(f"--pairs 2-0,1-2: exit {p.returncode}")
    if [(r["src"], r["dst"]) for r in results_of(out)] != [(2, 0), (1, 2)]:
        fail("chosen pairs not measured as given")

    # --resume skips the pingpong points already recorded: the key holds src and dst, so a
    # first run of pair 0-1 leaves exactly the other two pairs of --pairs all to measure.
    out = d / "resume.jsonl"
    base = np3 + ["--algo", "latency", "-b", "8", "-e", "512", "-f", "64", "-n", "3", "-w", "1", "--json", str(out), "--quiet"]
    for extra in (["--pairs", "0-1"], ["--pairs", "all", "--resume"], ["--pairs", "all", "--resume"]):
        p = run(base + extra)
        if p.returncode != 0:
            fail(f"{extra}: exit {p.returncode}")
    first, second, third = cc.check_file(str(out), runs=3).values()
    key = lambda r: (r["src"], r["dst"], r["bytes"])  # noqa: E731
    if sorted(map(key, first)) != [(0, 1, 8), (0, 1, 512)]:
        fail(f"first run: {sorted(map(key, first))}")
    if sorted(map(key, second)) != [(s, t, b) for s, t in ((0, 2), (1, 2)) for b in (8, 512)]:
        fail(f"--resume measured {sorted(map(key, second))}, want the pairs 0-2 and 1-2 only")
    if third:
        fail(f"a complete file resumed again measured {len(third)} pingpong points")

    # Bad input without MPI: one line naming the problem, exit 2, no file.
    for args, expect in ((["--pairs", "1-1"], "names one rank twice"), (["--pairs", "0-x"], "bad pair '0-x'"),
                         (["--batch"], "does not apply to pingpong"), (["--algo", "ring"], "unknown algo 'ring'")):
        out = d / "bad.jsonl"
        p = run([collbench, "--op", "pingpong", *args, "--json", str(out)])
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or expect not in lines[0] or "; accepted: " not in lines[0] or out.exists():
            fail(f"{args}: exit {p.returncode}, stderr {lines}")

    # A pair outside the world: one line, exit 2, no file.
    out = d / "bad.jsonl"
    p = run(np3 + ["--pairs", "0-3", "--json", str(out)])
    lines = [l for l in p.stderr.splitlines() if l.startswith("collbench:")]
    if p.returncode == 0 or len(lines) != 1 or "outside the world of 3 ranks; accepted: " not in lines[0] or out.exists():
        fail(f"--pairs 0-3 on 3 ranks: exit {p.returncode}, {lines}, file {out.exists()}")
    print("pingpong: OK")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
