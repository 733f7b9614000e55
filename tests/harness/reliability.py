"""Reliability end to end (ctest label "harness"): hangs, dead ranks, signals, resume. Stdlib only.

    reliability.py hang   COLLBENCH MPIEXEC WORKDIR   planted lost receive -> peer times out, bounded
    reliability.py kill   COLLBENCH MPIEXEC WORKDIR   a rank SIGKILLed mid-sweep -> finished points kept
    reliability.py resume COLLBENCH MPIEXEC WORKDIR   SIGTERM mid-sweep -> end 143; --resume completes it

Faults are planted with the test-only COLLBENCH_TEST_FAULT hook (harness/runtime/fault.hpp).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402
from launcher import mpi_of, mpirun, rank_pids  # noqa: E402


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def fresh_dir(path: str) -> Path:
    d = Path(path)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d


def records(path: Path) -> list[dict]:
    """Every line must be valid JSON (a killed run must not leave a broken file)."""
    out = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            fail(f"{path}:{i}: invalid JSON ({e}): {line[:120]!r}")
    return out


def timed_run(cmd: list[str], env: dict, limit: float) -> tuple[subprocess.CompletedProcess, float]:
    print("+", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env)
    secs = time.monotonic() - t0
    print(p.stdout[-3000:])
    print(p.stderr[-3000:], file=sys.stderr)
    return p, secs


def test_hang(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "hang.jsonl"
    timeout = 2
    # Rank 1 drops its irecv #2: warm-up (1 call) and timed iteration 0 receive normally, timed
    # iteration 1 never posts the receive. 64 MiB is above every eager limit, so the root's send
    # never completes and the root times out naming rank 1; the others wait in the control
    # plane. Bounded: MPI_Abort ends the whole job. The warm-up runs doubling rounds until one
    # lasts 5 ms: one call of 64 MiB (two 64 MiB sends by the root, >= 13 ms at 10 GB/s) always
    # does, where a 1 MiB call sometimes did not and the skip fell into the warm-up.
    env = dict(os.environ, COLLBENCH_TEST_FAULT="skip_recv:rank=1:after=2")
    p, secs = timed_run(mpirun(mpiexec, 3, [collbench, "--op", "broadcast", "--algo", "naive", "-b", "64M", "-e", "64M",
                                               "-w", "1", "-n", "2", "--timeout", str(timeout), "--json", str(out),
                                               "--quiet"]), env, timeout + 60)
    if p.returncode == 0:
        fail("a planted hang exited 0")
    if secs > timeout + 10:
        fail(f"took {secs:.1f} s, want < timeout + 10 s")
    errors = [l for l in p.stderr.splitlines() if l.startswith("collbench: error:")]
    if len(errors) != 1:
        fail(f"want ONE error line, got {errors}")
    line = errors[0]
    want = ["rank 0", "timed out after 2000 ms", "peer=1", "op=broadcast", "algo=naive", "size=67108864",
            "phase=timed", "iteration=1"]
    missing = [w for w in want if w not in line]
    if missing:
        fail(f"the timeout line lacks {missing}: {line!r}")
    recs = records(out)
    types = [r["type"] for r in recs]
    # Rank 0 is the rank that timed out: its watchdog writes the end record before _exit(3).
    if types != ["run", "end"] or recs[-1]["exit_status"] != 3 or recs[-1]["points"] != 0:
        fail(f"an aborted run keeps its run record and ends with an end record (exit_status 3), got {recs}")
    print(f"hang: OK in {secs:.1f} s: {line}")


def test_kill(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "kill.jsonl"
    timeout, after = 3, 3
    env = dict(os.environ, COLLBENCH_TEST_FAULT=f"kill:rank=2:after_points={after}")
    p, secs = timed_run(mpirun(mpiexec, 3, [collbench, "--op", "allreduce", "--algo", "ring", "-b", "8", "-e", "1M",
                                               "--timeout", str(timeout), "--json", str(out), "--quiet"]), env,
                        timeout + 60)
    if p.returncode == 0:
        fail("a run with a killed rank exited 0")
    if secs > timeout + 10:
        fail(f"took {secs:.1f} s, want < timeout + 10 s")
    # Open MPI's mpirun names the rank it lost; hydra only its pid ("Killed (signal 9)", on stdout).
    lost = (re.search(r"EXIT STRING: Killed \(signal 9\)", p.stdout) if mpi_of(mpiexec) == "mpich" else
            re.search(r"rank 2 .*(signal 9|Killed)|exited on signal", p.stderr))
    if "kills itself" not in p.stderr or not lost:
        fail("no message names the killed rank")
    recs = records(out)
    results = [r for r in recs if r["type"] == "result"]
    # mpirun SIGTERMs the survivors: rank 0's watcher ends the file at once (143), unless
    # mpirun's SIGKILL came first.
    types = [r["type"] for r in recs]
    if types not in (["run"] + ["result"] * after, ["run"] + ["result"] * after + ["end"]):
        fail(f"want the run record and the {after} points finished before the kill (and an end record), got {types}")
    if types[-1] == "end" and (recs[-1]["exit_status"] != 143 or recs[-1]["points"] != after):
        fail(f"the end record after the kill: {recs[-1]}, want exit_status 143 and points {after}")
    for r in results:
        cc.check_result(r, "kill")
        if r["wrong"] != 0 or r["skipped"] or not r["checked"]:
            fail(f"a point before the kill is not a verified measurement: {r}")
    print(f"kill: OK in {secs:.1f} s, {len(results)} points kept")


SWEEP = ["--op", "allreduce,broadcast", "--algo", "ring,naive", "-b", "8", "-e", "4M", "-n", "30"]


def count_results(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for l in path.read_text().splitlines() if '"type":"result"' in l)


def test_resume(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    out = d / "r.jsonl"
    total = 2 * 2 * 20  # ops x algos x sizes (8 B .. 4 MiB)
    cmd = mpirun(mpiexec, 2, [collbench, *SWEEP, "--json", str(out), "--quiet"])
    print("+", " ".join(cmd), flush=True)
    mp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while count_results(out) < 8:
        if mp.poll() is not None or time.monotonic() > deadline:
            fail(f"the sweep ended (or stalled) before 8 points: {mp.poll()}")
        time.sleep(0.05)
    # As Slurm does at the time limit: SIGTERM to every task.
    ranks = rank_pids(mpiexec, mp.pid, 2)
    t0 = time.monotonic()
    for pid in ranks:
        os.kill(pid, signal.SIGTERM)
    _, err = mp.communicate(timeout=60)
    secs = time.monotonic() - t0
    print(err[-2000:], file=sys.stderr)
    if mp.returncode != 143:
        fail(f"SIGTERM: exit {mp.returncode}, want 143")
    if secs > 5:
        fail(f"SIGTERM: took {secs:.1f} s to exit")
    recs = records(out)
    first = [r for r in recs if r["type"] == "result"]
    end = recs[-1]
    if end["type"] != "end" or end["exit_status"] != 143 or end["points"] != len(first):
        fail(f"want an end record with exit_status 143 and points {len(first)}, got {end}")
    if not 8 <= len(first) < total:
        fail(f"{len(first)} points before SIGTERM, want 8..{total - 1}")
    # Resume: only the missing points are measured.
    p, _ = timed_run([*cmd, "--resume"], dict(os.environ), 300)
    if p.returncode != 0:
        fail(f"--resume: exit {p.returncode}")
    recs = records(out)
    runs = cc.check_file(str(out), runs=2)
    second = list(runs.values())[1]
    key = lambda r: (r["op"], r["algo"], r["bytes"])  # noqa: E731
    k1, k2 = {key(r) for r in first}, {key(r) for r in second}
    if k1 & k2:
        fail(f"--resume measured finished points again: {sorted(k1 & k2)[:5]}")
    if len(k1 | k2) != total or len(first) + len(second) != total:
        fail(f"after --resume {len(k1 | k2)} distinct points ({len(first)} + {len(second)}), want {total}")
    if recs[-1]["type"] != "end" or recs[-1]["exit_status"] != 0 or recs[-1]["points"] != len(second):
        fail(f"resumed run's end record: {recs[-1]}")
    # A truncated last line (a run killed mid-write) is tolerated: warned about, then dropped.
    with out.open("a") as f:
        f.write('{"type":"result","schema":"collb')
    p, _ = timed_run([*cmd, "--resume"], dict(os.environ), 300)
    if p.returncode != 0 or "truncated" not in p.stderr:
        fail(f"--resume after a truncated line: exit {p.returncode}, stderr {p.stderr!r}")
    recs = records(out)  # every line valid again
    third = [r for r in recs if r["type"] == "result"][len(first) + len(second):]
    if third:
        fail(f"a complete file resumed again measured {len(third)} points")
    print(f"resume: OK (SIGTERM after {len(first)} points, exit in {secs:.1f} s; resumed {len(second)})")


def main(argv: list[str]) -> None:
    tests = {"hang": test_hang, "kill": test_kill, "resume": test_resume}
    if len(argv) != 4 or argv[0] not in tests:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    tests[argv[0]](*argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
