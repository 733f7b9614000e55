"""End-to-end tests of issue 21's gate, provenance and efficiency (ctest label "harness"), with the
real collbench under a real mpirun. Stdlib only (+ collbench_check for the schema).

    expect_e2e.py gate         COLLBENCH MPIEXEC WORKDIR              --expect: malformed (exit 2, FILE:LINE,
                                                                      before anything runs), a run that passes, one that fails (exit 5)
    expect_e2e.py write_expect COLLBENCH MPIEXEC WORKDIR COLLCOMPARE  a good run -> collcompare --write-expect ->
                                                                      collbench accepts it and a rerun passes
    expect_e2e.py provenance   COLLBENCH MPIEXEC WORKDIR              run record: CPU model, binding, hwloc
                                                                      topology, link rates; efficiency per point
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402
from e2e import fail, fresh_dir, run  # noqa: E402
from launcher import mpirun  # noqa: E402

EXIT_BELOW = 5


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ------------------------------------------------------------------ gate

MALFORMED = [  # (file text, the line the message must name, a phrase of the reason)
    ("entries:\n  - {op: allreduce, algo: ring, bytes: 1M, min_busbw_GBps: 1}\n  - {op: allreduce, algo: rign, "
     "bytes: 1M, min_busbw_GBps: 1}\n", 3, "unknown algo 'rign'"),
    ("entries:\n  - op: allreduce\n    algo: ring\n    bytes: 1M\n    min_busbw_GBps: -2\n", 5, "negative"),
    ("tolerance: 10%\nentries:\n  - {op: allreduce, algo: ring, bytes: 1M, min_busbw_GBps: 1, speed: 3}\n", 3,
     "unknown key 'speed'"),
    ("entries:\n  - {op: allreduce, algo: ring, bytes: [1M], min_busbw_GBps: 1}\n", 2, "not a single value"),
    ("entries: []\n", 1, "non-empty list"),
    ("entries:\n  - {op: allreduce, algo: ring, bytes: 1M\n", 3, "not YAML"),
]


def test_gate(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    base = ["--op", "allreduce", "--algo", "ring,library", "-b", "64K", "-e", "1M", "-f", "4", "-n", "10", "-w", "2"]
    # Malformed files: one line naming FILE:LINE, exit 2, no results file, nothing measured (no table).
    for k, (text, line, why) in enumerate(MALFORMED):
        f = d / f"bad{k}.yaml"
        f.write_text(text)
        out = d / f"bad{k}.jsonl"
        cmd = [collbench, *base, "--expect", str(f), "--json", str(out)]
        p = run(mpirun(mpiexec, 2, cmd) if k == 0 else cmd)  # the first under mpirun too: refused before MPI
        lines = p.stderr.strip().splitlines()
        if k == 0:  # mpirun adds its own banner about the non-zero exit; collbench says one line
            lines = [l for l in lines if l.startswith("collbench:")]
        if p.returncode != 2:
            fail(f"{f}: exit {p.returncode}, want 2")
        if len(lines) != 1 or f"expectation file {f}:{line}: " not in lines[0] or why not in lines[0]:
            fail(f"{f}: want one line naming {f}:{line} and {why!r}, got {lines}")
        if out.exists() or p.stdout:
            fail(f"{f}: measured or wrote something before refusing: {p.stdout!r}")
    p = run([collbench, *base, "--expect", str(d / "missing.yaml")])
    if p.returncode != 2 or "--expect " + str(d / "missing.yaml") + ": cannot read" not in p.stderr:
        fail("a missing --expect file is not refused with exit 2")

    # A run that passes: references this machine reaches by far.
    good = d / "pass.yaml"
    good.write_text("schema: collbench-expect/1\ntolerance: 10%\nentries:\n"
                    "  - {op: allreduce, algo: any, layout: 1x2, min_bytes: 64K, max_bytes: 1M, min_busbw_GBps: 0.001}\n"
                    "  - {op: allreduce, algo: library, layout: 1x2, bytes: 64K, max_time_us: 1000000}\n")
    out = d / "pass.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, *base, "--expect", str(good), "--json", str(out)]))
    if p.returncode != 0:
        fail(f"passing run: exit {p.returncode}, want 0")
    if f"# acceptance (--expect {good}): 7 checks, 0 below the reference" not in p.stdout:
        fail("passing run: no acceptance summary with 7 checks (3 sizes x 2 algos + one time entry)")
    if p.stdout.count(" pass ") != 7 or "FAIL" in p.stdout:
        fail("passing run: want 7 'pass' rows and no FAIL")
    cc.check_file(str(out), runs=1)  # every record valid, one run
    end = records(out)[-1]
    if end["exit_status"] != 0 or end["expect"] != {"file": str(good), "checked": 7, "failed": 0}:
        fail(f"passing run: end record {end}")

    # A run that fails: two points below impossible references, one still passing, one entry unused.
    bad = d / "fail.yaml"
    bad.write_text("schema: collbench-expect/1\nentries:\n"
                   "  - {op: allreduce, algo: ring, layout: 1x2, bytes: 1M, min_busbw_GBps: 100000}\n"
                   "  - {op: allreduce, algo: library, layout: any, bytes: 64K, max_time_us: 0.001, tolerance: 10%}\n"
                   "  - {op: allreduce, algo: library, layout: 1x2, bytes: 256K, min_busbw_GBps: 0.001}\n"
                   "  - {op: allreduce, algo: ring, layout: 2x4, bytes: 1M, min_busbw_GBps: 1}\n")
    out = d / "fail.jsonl"
    p = run(mpirun(mpiexec, 2, [collbench, *base, "--expect", str(bad), "--json", str(out)]))
    if p.returncode != EXIT_BELOW:
        fail(f"failing run: exit {p.returncode}, want {EXIT_BELOW}")
    err = [l for l in p.stderr.splitlines() if "expectation checks below the reference" in l]
    if len(err) != 1:
        fail(f"failing run: want one stderr line naming the failures, got {p.stderr!r}")
    for name in ("allreduce/ring 1x2 float32 1048576B busbw", "allreduce/library 1x2 float32 65536B p50"):
        if name not in err[0]:
            fail(f"failing run: {name!r} not named in {err[0]!r}")
    if "2 of 3 expectation checks" not in err[0] or "262144B" in err[0]:
        fail(f"failing run: want exactly the 2 failing of 3 checks named: {err[0]!r}")
    rows = [l for l in p.stdout.splitlines() if l.startswith("  allreduce/")]
    if len(rows) != 3:
        fail(f"failing run: want 3 table rows, got {rows}")
    for size, failed, line in (("1048576B", True, 3), ("65536B", True, 4), ("262144B", False, 5)):
        row = next((r for r in rows if f"float32 {size}" in r), "")
        if ("FAIL" in row) != failed or not row.rstrip().endswith(f"{bad}:{line}"):
            fail(f"failing run: the {size} row should {'fail' if failed else 'pass'} citing line {line}: {row!r}")
    if f"named no point of this run (not checked): {bad}:6" not in p.stdout:
        fail("failing run: the unused entry is not listed")
    cc.check_file(str(out), runs=1)
    recs = records(out)
    if sum(r["type"] == "result" for r in recs) != 6:
        fail("failing run: not every result was written")
    end = recs[-1]
    if end["exit_status"] != EXIT_BELOW or end["expect"] != {"file": str(bad), "checked": 3, "failed": 2}:
        fail(f"failing run: end record {end}")
    print("gate: malformed refused (exit 2, FILE:LINE), pass (exit 0), fail (exit 5) as expected")


# ------------------------------------------------------------------ write_expect

def test_write_expect(collbench: str, mpiexec: str, workdir: str, collcompare: str) -> None:
    d = fresh_dir(workdir)
    # Up to 512 KiB: at 4 MiB this VM's allreduce is bimodal (busbw 1.3 or 4.5 GB/s from run to run,
    # its L2 is 2 MiB and the L3 is shared with other guests), which no tolerance covers.
    sweep = ["--op", "allreduce", "--algo", "ring,library", "-b", "8", "-e", "512K", "-f", "16", "--interleave",
             "-n", "30", "-w", "5"]
    good = d / "good.jsonl"
    # The references are each point's median over three runs (what --write-expect does with
    # several runs): one run can sit in either mode of this VM's bimodal small sizes (ring at
    # 8-128 B: 0.7 or 2.0 us from one launch to the next), and a reference from the fast mode
    # failed every rerun in 2 of 3 fresh-clone CI runs.
    for _ in range(3):
        p = run(mpirun(mpiexec, 2, [collbench, *sweep, "--json", str(good)]))
        if p.returncode != 0:
            fail(f"good run: exit {p.returncode}")
    gate = d / "expect.yaml"
    # 60 %: a rerun on this shared 2-core machine, while other jobs run, varies by tens of percent.
    p = run(["/usr/bin/python3", collcompare, str(good), "--write-expect", str(gate), "--expect-tolerance", "60%"])
    if p.returncode != 0 or not gate.exists():
        fail(f"collcompare --write-expect: exit {p.returncode}")
    entries = [l for l in gate.read_text().splitlines() if l.startswith("  - {op: allreduce")]
    if len(entries) != 2 * 5:  # 8, 128, 2K, 32K, 512K x ring, library
        fail(f"want 10 entries, got {len(entries)}")
    if "max_time_us" not in entries[0] or "min_busbw_GBps" not in entries[-1]:
        fail("small sizes should be timed, large ones bandwidth")
    # collbench accepts it (a dry run parses it) and the same machine's rerun passes it.
    p = run([collbench, *sweep, "--expect", str(gate), "--dry-run", "--ranks", "2"])
    if p.returncode != 0 or f"expect: {gate} (10 entries;" not in p.stdout:
        fail("collbench --dry-run refused the written expectation file, or did not show it")
    # The rerun passes. This machine is shared with other jobs, whose load can slow a whole run
    # beyond any tolerance: up to 3 attempts, each a full gated run; one must pass every check.
    for attempt in range(1, 4):
        rerun = d / f"rerun{attempt}.jsonl"
        p = run(mpirun(mpiexec, 2, [collbench, *sweep, "--expect", str(gate), "--json", str(rerun)]))
        if p.returncode == 0 and f"# acceptance (--expect {gate}): 10 checks, 0 below the reference" in p.stdout:
            break
        if p.returncode != EXIT_BELOW:
            fail(f"rerun against the written expectations: exit {p.returncode}")
        print(f"write_expect: attempt {attempt} fell below (noise from the shared machine); again", flush=True)
    else:
        fail("3 reruns against the written expectations all fell below them")
    print(f"write_expect: 10 entries written, accepted, and rerun {attempt} passed them")


# ------------------------------------------------------------------ provenance

def cpuinfo_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.split(":")[0].strip() == "model name":
            return line.split(":", 1)[1].strip()
    return ""


def cpu_list(cpus: set[int]) -> str:
    out, xs = [], sorted(cpus)
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(out)


def test_provenance(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "r.jsonl"
    # Wide enough for the full form of the table (with eff) for three algorithms.
    p = run(mpirun(mpiexec, 3, [collbench, "--op", "allreduce,broadcast", "--algo", "ring,library,shm", "-b", "1M",
                                "-e", "4M", "-f", "4", "-n", "10", "--json", str(out)]), env=dict(os.environ, COLUMNS="250"))
    if p.returncode != 0:
        fail(f"exit {p.returncode}")
    runs = cc.check_file(str(out), runs=1)
    run_rec = records(out)[0]
    model = cpuinfo_model()
    if model and run_rec["cpu_model"] != model:
        fail(f"cpu_model {run_rec['cpu_model']!r}, /proc/cpuinfo says {model!r}")
    hw = run_rec["hardware"]
    if len(hw) != 1 or hw[0]["pus"] < os.cpu_count() or hw[0]["cores"] < 1 or not hw[0]["caches"] or not hw[0]["hwloc"]:
        fail(f"hardware {hw}")
    mine = cpu_list(os.sched_getaffinity(0))  # mpirun --oversubscribe binds nothing: the ranks inherit ours
    if [b["cpus"] for b in run_rec["binding"]] != [mine] * 3 or any(not b["numa"] for b in run_rec["binding"]):
        fail(f"binding {run_rec['binding']}, want cpus {mine} for 3 ranks")
    links = run_rec["links"]
    if links["inter"] is not None or links["intra"]["GBps"] <= 0 or (links["intra"]["src"], links["intra"]["dst"]) != (0, 1):
        fail(f"links {links}")
    intra = links["intra"]["GBps"]
    for r in next(iter(runs.values())):
        eff = r["efficiency"]
        if r["skipped"]:
            continue
        if eff is None or eff <= 0:
            fail(f"{r['op']}/{r['algo']} {r['bytes']}B: efficiency {eff}")
        if r["algo"] != "shm" and abs(eff - r["busbw_GBps"] / intra) > 1e-9 * max(1.0, eff):
            fail(f"{r['op']}/{r['algo']}: efficiency {eff} is not busbw / intra ({r['busbw_GBps']} / {intra}) on one node")
    # The eff column only with a steady calibration (every link's spread <= 0.10), else a line says why.
    steady = all(l is None or l["spread"] <= 0.10 for l in links.values())
    if "# links: intra " not in p.stdout or (steady and " eff " not in p.stdout):
        fail("the table shows no links line, or no eff column after a steady calibration")
    if not steady and (" eff " in p.stdout or "# eff: not shown" not in p.stdout):
        fail("an unsteady calibration: the table must leave eff out and say why")
    if "# hardware node 0: " not in p.stdout:
        fail("the table shows no hardware line")
    print(f"provenance: {run_rec['cpu_model']}, binding {mine}, intra link {intra:.2f} GB/s, efficiencies recorded")


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        fail(__doc__ or "usage")
    what, args = argv[1], argv[2:]
    tests = {"gate": test_gate, "write_expect": test_write_expect, "provenance": test_provenance}
    if what not in tests:
        fail(f"unknown test {what!r}")
    tests[what](*args)


if __name__ == "__main__":
    main(sys.argv)
