"""Cache state and stragglers end to end (issue 21; ctest label "harness"), real mpirun runs.

    cache_stragglers.py cold       COLLBENCH MPIEXEC WORKDIR   --cache cold: every op/algo exact on its pool
                                                               (per-iteration, batch, in place, registered),
                                                               the pool recorded, the LLC read from sysfs,
                                                               refusals in one line, memory planned
    cache_stragglers.py stragglers COLLBENCH MPIEXEC WORKDIR   --per-rank under -np 3: a rank slowed by the
                                                               test-only fault is named (rank and node) by the
                                                               analysis; a run without it flags no rank;
                                                               a DDP step's per_rank
"""
from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402
from e2e import fail, fresh_dir, run  # noqa: E402
from launcher import mpirun  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
from collbench_analysis import stragglers  # noqa: E402
from collbench_analysis.schema import first_error  # noqa: E402

QUIET = ["--quiet"]


def results(path: Path) -> list[dict]:
    cc.check_file(str(path))
    recs = [r for _, r in cc.load(str(path))]
    for i, r in enumerate(recs, 1):
        if (problem := first_error(r, strict=True)) is not None:
            fail(f"{path}:{i}: {problem}")
    return [r for r in recs if r["type"] == "result"]


def one_error_line(p, expect: str, what: str) -> None:
    lines = p.stderr.strip().splitlines()
    if p.returncode != 2 or len(lines) != 1 or expect not in lines[0] or "; accepted: " not in lines[0]:
        fail(f"{what}: want exit 2 and one line with {expect!r}, got {p.returncode} {lines}")


def sysfs_llc() -> int:
    best = (-1, 0)
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in base.glob("index*"):
        if (idx / "type").read_text().strip() not in ("Data", "Unified"):
            continue
        size = (idx / "size").read_text().strip()
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
        best = max(best, (int((idx / "level").read_text()), int(size.rstrip("KMG")) * mult))
    return best[1]


def check_pool(r: dict, want_at_least: int) -> None:
    pool = r.get("cache_pool")
    if r.get("cache") != "cold" or not pool:
        fail(f"{r['op']}/{r['algo']} {r['bytes']} B: cache {r.get('cache')!r}, pool {pool!r}")
    if pool["bytes"] != pool["sets"] * pool["set_bytes"] or pool["set_bytes"] % 4096:
        fail(f"pool {pool}: page-aligned sets, bytes = sets x set_bytes")
    by_bytes = max(2, (64 << 20) // pool["set_bytes"]) if pool["set_bytes"] else pool["sets"]
    if pool["verified_sets"] != (min(pool["sets"], 64, by_bytes) if r["checked"] else 0):
        fail(f"pool {pool}: verified {pool['verified_sets']} sets, want every set up to 64 and 64 MiB")
    if pool["set_bytes"] == 0:  # a point that moves nothing (count 0 per rank) has one empty set
        if pool["sets"] != 1:
            fail(f"pool {pool}: an empty point has one set")
        return
    if pool["sets"] < 2 or pool["bytes"] < want_at_least:
        fail(f"pool {pool['bytes']} B < the {want_at_least} B asked for")


def test_cold(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    pool = 8 << 20
    small = ["-b", "8", "-e", "256K", "-f", "32", "-n", "4", "-w", "1", *QUIET]
    # Every op and algorithm, in and out of place, on a small pool (cold verification checks every set).
    out = d / "cold.jsonl"
    p = run(mpirun(mpiexec, 3, [collbench, "--op", "all", "--algo", "all", "--inplace", "both", "--cache", "cold",
                                "--cache-pool", "8M", *small, "--json", str(out)]), timeout=500)
    if p.returncode != 0:
        fail(f"cold run: exit {p.returncode}")
    res = results(out)
    bad = [(r["op"], r["algo"], r["bytes"], r["wrong"]) for r in res
           if r["wrong"] or (r["skipped"] and not cc.skipped_as_expected(r))]
    if bad or not res:
        fail(f"wrong or unexpectedly skipped cold points: {bad[:5]}")
    for r in res:
        if not r["skipped"]:
            check_pool(r, pool)
            if not r["checked"]:
                fail(f"{r['op']}/{r['algo']}: not verified")
    # Batch mode and registered buffers (the zero-copy shm algorithms read the pool's sets in place).
    for extra, name in ((["--batch"], "batch"), (["--buffers", "registered"], "registered")):
        out = d / f"{name}.jsonl"
        p = run(mpirun(mpiexec, 3, [collbench, "--op", "allreduce,allgather,broadcast", "--algo", "all", "--cache",
                                    "cold", "--cache-pool", "8M", *extra, *small, "--json", str(out)]), timeout=300)
        if p.returncode != 0:
            fail(f"{name}: exit {p.returncode}")
        res = results(out)
        if any(r["wrong"] for r in res) or not any(not r["skipped"] for r in res):
            fail(f"{name}: wrong or nothing measured")
        for r in res:
            if not r["skipped"]:
                check_pool(r, pool)
        if name == "registered" and not any(r["algo"] == "shm" and not r["skipped"] for r in res):
            fail("registered: no shm point measured on the cold pool")
    # The default pool: twice this machine's last-level cache, as sysfs says.
    llc = sysfs_llc()
    out = d / "llc.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "library", "--cache", "cold", "-b", "1M",
                                "-e", "1M", "-n", "3", "-w", "1", *QUIET, "--json", str(out)]), timeout=300)
    if p.returncode != 0:
        fail(f"default pool: exit {p.returncode}")
    (r,) = results(out)
    check_pool(r, 2 * llc)
    if llc and (r["cache_pool"]["llc_bytes"], r["cache_pool"]["llc_source"]) != (llc, "sysfs"):
        fail(f"llc {r['cache_pool']} != sysfs {llc}")
    # Hot (the default) says so, with no pool.
    out = d / "hot.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "ring", *small, "--json", str(out)]))
    if p.returncode != 0 or any(r.get("cache") != "hot" or "cache_pool" in r for r in results(out)):
        fail("hot records carry cache: hot and no cache_pool")
    # --resume keeps hot and cold apart: a cold run into the hot file measures every point again.
    p = run(mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "ring", *small, "--cache", "cold",
                                "--cache-pool", "8M", "--resume", "--json", str(out)]))
    res = results(out)
    if p.returncode != 0 or sum(r["cache"] == "cold" for r in res) != sum(r["cache"] == "hot" for r in res):
        fail("--resume took hot points for cold ones")
    # Refused in one line, nothing written.
    for args, expect in (
        (["--workload", "ddp", "--model", "linear", "--cache", "cold"], "--cache cold does not apply to --workload ddp"),
        (["--cache-pool", "8M"], "--cache-pool sizes the cold pool"),
        (["--op", "pingpong", "--cache", "cold"], "--cache cold does not apply to pingpong"),
        (["--op", "pingpong", "--per-rank"], "--per-rank does not apply to pingpong"),
        (["--cache", "lukewarm"], "--cache: bad value 'lukewarm'; accepted: hot, cold"),
        (["--cache", "cold", "--cache-pool", "1K"], "accepted: a size from 4K to 1024T"),
        (["--cache", "cold", "--cache-pool", "2048T"], "accepted: a size from 4K to 1024T"),
    ):
        bad = d / "bad.jsonl"
        p = run([collbench, *args, "--json", str(bad)])
        one_error_line(p, expect, str(args))
        if bad.exists():
            fail(f"{args}: wrote {bad}")
    # Memory: the pool is planned (dry run), and a pool that cannot fit is refused before any run.
    p = run([collbench, "--dry-run", "--ranks", "2", "--op", "allreduce", "--cache", "cold", "--cache-pool", "64M",
             "-b", "1M", "-e", "1M"])
    if p.returncode != 0 or "a cold pool" not in p.stdout or "cache cold" not in p.stdout:
        fail("dry run does not show the cold pool")
    p = run([collbench, "--dry-run", "--ranks", "2", "--op", "allreduce", "--cache", "cold", "--cache-pool", "64G",
             "-b", "1M", "-e", "1M"])
    one_error_line(p, "--cache cold: a pool of", "a pool larger than memory")
    print("cold: OK")


def per_rank_run(collbench: str, mpiexec: str, out: Path, fault: str | None) -> list[dict]:
    env = dict(os.environ)
    env.pop("COLLBENCH_TEST_FAULT", None)
    if fault:
        env["COLLBENCH_TEST_FAULT"] = fault
    p = run(mpirun(mpiexec, 3, [collbench, "--op", "allreduce", "--algo", "ring", "-b", "1K", "-e", "64K", "-f", "8",
                                "-n", "30", "-w", "2", "--per-rank", *QUIET, "--json", str(out)]), timeout=300, env=env)
    if p.returncode != 0:
        fail(f"{fault or 'no fault'}: exit {p.returncode}")
    res = results(out)
    for r in res:
        pr = r["per_rank"]
        if pr["ranks"] != 3 or pr["samples"] != r["samples"] or len(pr["time_us"]) != 3:
            fail(f"per_rank shape: {pr['ranks']} ranks x {pr['samples']} samples, result has {r['samples']}")
        # Clock-started: each sample's max over ranks is the sample itself (samples_us), one
        # measurement, two views; barrier-started finish times add the start skew (never less).
        for i, s in enumerate(r["samples_us"]):
            top = max(row[i] for row in pr["time_us"])
            if (abs(top - s) > 2e-3) if pr["start"] == "agreed" else (top < s - 2e-3):
                fail(f"{r['bytes']} B sample {i} ({pr['start']}): max over ranks {top} vs samples_us {s}")
        if pr["start"] not in ("agreed", "earliest") or len(pr["start_skew_us"][0]) != pr["samples"]:
            fail(f"start skew: {pr['start']}, {len(pr['start_skew_us'][0])} values")
    return res


def test_stragglers(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    host = socket.gethostname()
    slow = d / "slow.jsonl"
    res = per_rank_run(collbench, mpiexec, slow, "slow:rank=2:us=400")
    pts = stragglers.load([slow])
    if len(pts) != len(res) or len(pts) != 3:
        fail(f"analysis saw {len(pts)} per-rank points, want 3")
    for _, r in pts.iterrows():
        if not (r["flagged"] and r["slowest_rank"] == 2 and r["slowest_node"] == 0 and r["slowest_host"] == host):
            fail(f"{r['bytes']} B: want rank 2 on node 0 ({host}) flagged, got rank {r['slowest_rank']} "
                 f"node {r['slowest_node']} ({r['slowest_host']}) flagged={r['flagged']}: {r['reason']}")
        print(f"FIGURE: planted slow rank 2 (+400 us/call), allreduce/ring {r['bytes']} B: named rank "
              f"{r['slowest_rank']} on {r['slowest_host']}: {r['reason']}")
    figs = stragglers.make_figures(pts, d)
    if not figs or not all((d / f.filename).stat().st_size > 0 for f in figs):
        fail("no heat map written")
    clean = d / "clean.jsonl"
    per_rank_run(collbench, mpiexec, clean, None)
    pts = stragglers.load([clean])
    for _, r in pts.iterrows():
        print(f"FIGURE: no fault, allreduce/ring {r['bytes']} B: slowest rank {r['slowest_rank']}, "
              f"flagged={r['flagged']} ({r['reason']})")
    if pts["flagged"].any():
        fail("a run without a planted straggler flagged a rank")
    # A DDP step records per rank too (one sample per step), schema-valid.
    ddp = d / "ddp.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, "--workload", "ddp", "--model", "linear", "--algo", "ring", "-n", "5", "-w",
                                "1", "--per-rank", *QUIET, "--json", str(ddp)]))
    if p.returncode != 0:
        fail(f"ddp --per-rank: exit {p.returncode}")
    cc.check_file(str(ddp), runs=1)
    steps = [r for _, r in cc.load(str(ddp)) if r["type"] == "workload"]
    for r in steps:
        if first_error(r, strict=True) is not None or r["per_rank"]["ranks"] != 2 or r["per_rank"]["samples"] != 5:
            fail(f"ddp per_rank: {first_error(r, strict=True)} {r.get('per_rank', {}).get('samples')}")
    print("stragglers: OK")


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("cold", "stragglers"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    {"cold": test_cold, "stragglers": test_stragglers}[sys.argv[1]](*sys.argv[2:])
