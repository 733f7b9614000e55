"""Reliability, round two (issue 15; ctest label "harness"): faults a cluster produces, injected
on purpose into real collbench runs under mpirun. Stdlib + the project's schema checker.

    faults.py stall_library COLLBENCH MPIEXEC WORKDIR  kill -STOP a rank inside MPI_Allreduce (--algo library)
    faults.py stall_shm     COLLBENCH MPIEXEC WORKDIR  kill -STOP a rank inside allreduce/shm (a flag never raised)
    faults.py stall_control COLLBENCH MPIEXEC WORKDIR  a rank SIGSTOPs itself between points (control plane)
    faults.py disk_full     COLLBENCH MPIEXEC WORKDIR  --json on a 64 KiB tmpfs; then --resume with room again
                                                       (no tmpfs: /dev/full's error path, then exit 77 = skipped)
    faults.py corrupt       COLLBENCH MPIEXEC WORKDIR  a results file corrupt in the middle / not ours: refused
    faults.py signals       COLLBENCH MPIEXEC WORKDIR  SIGTERM/SIGINT at seeded random moments, then --resume

Each prints one "FIGURE:" line per fault (outcome, time to exit, records kept vs expected):
the figures of docs/reliability.md come from these lines.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402
from launcher import exited_with, mpirun, rank_pids  # noqa: E402
from reliability import fail, fresh_dir, records, timed_run  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
from collbench_analysis import schema  # noqa: E402


def error_lines(stderr: str) -> list[str]:
    return [l for l in stderr.splitlines() if l.startswith("collbench: error:")]


def valid_lines(path: Path) -> list[dict]:
    """Every line is a complete collbench/1 record that the JSON Schema accepts."""
    recs = records(path)  # fails on a line that is not JSON
    for i, r in enumerate(recs, 1):
        problem = schema.first_error(r, strict=True)
        if problem is not None:
            fail(f"{path}:{i}: {problem}")
    if path.exists() and path.read_bytes() and not path.read_bytes().endswith(b"\n"):
        fail(f"{path}: ends inside a record")
    return recs


def key(r: dict) -> tuple:
    return (r["op"], r["algo"], r["dtype"], r["bytes"])


def expect_timeout_exit(mpiexec: str, p: subprocess.CompletedProcess, secs: float, bound: float,
                        want: list[str]) -> str:
    if not exited_with(mpiexec, p.returncode, 3):
        fail(f"exit {p.returncode}, want 3")
    if secs > bound:
        fail(f"took {secs:.1f} s to exit, want <= {bound:.1f} s")
    errors = error_lines(p.stderr)
    if len(errors) != 1:
        fail(f"want ONE error line, got {errors}")
    missing = [w for w in want if w not in errors[0]]
    if missing:
        fail(f"the error line lacks {missing}: {errors[0]!r}")
    return errors[0]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process has used: it advances only while the process runs."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_timed(mp: subprocess.Popen, out: Path, victim: int, cpu_s: float = 0.3) -> None:
    """Waits for events, not a fixed time, until rank `victim` is inside the second point's timed
    loop: the first point's record is in `out` (rank 0 wrote it after every rank finished it),
    then the victim has run `cpu_s` more seconds of CPU (the second point's warm-up ends after
    ~5 ms; its 100000 timed iterations take many seconds). A preempted rank's waiting time is
    not CPU time, so a busy machine only makes the wait longer."""
    def a_result_written() -> bool:  # complete lines only: rank 0 may be writing one
        text = out.read_text() if out.exists() else ""
        return any('"type":"result"' in l.replace(" ", "") for l in text.splitlines(keepends=True) if l.endswith("\n"))

    deadline = time.monotonic() + 120
    while not a_result_written():
        if mp.poll() is not None or time.monotonic() > deadline:
            fail(f"the first point never finished (exit {mp.returncode})")
        time.sleep(0.02)
    base = cpu_seconds(victim)
    while cpu_seconds(victim) - base < cpu_s:
        if mp.poll() is not None or time.monotonic() > deadline:
            fail(f"rank 1 did not run {cpu_s} s of CPU in the timed loop (exit {mp.returncode})")
        time.sleep(0.02)


def stall_run(collbench: str, mpiexec: str, workdir: str, algo_args: list[str], expect: list[str],
              what: str) -> str:
    """kill -STOP rank 1 inside a 1 MiB allreduce: the job ends in bounded time, one line naming it."""
    d = fresh_dir(workdir)
    out = d / "stall.jsonl"
    timeout = 3
    # A quick 8 B point first: its record says every rank is past start-up and calibration.
    # The 1 MiB point is one back-to-back batch: per-iteration timing starts a 1 MiB op after a
    # barrier, so a stop landed in the harness's barrier as often as in the call (the error then
    # named the barrier: 2 failures in 3 runs); back to back, the peer is inside the call.
    sweep = d / "stall.yaml"
    sweep.write_text("name: stall\ncases:\n"
                     "  - {op: allreduce, min_bytes: 8, max_bytes: 8, iters: 5, warmup: 1}\n"
                     "  - {op: allreduce, min_bytes: 1M, max_bytes: 1M, iters: 100000, batch: 1}\n")
    cmd = mpirun(mpiexec, 2, [collbench, "--config", str(sweep), *algo_args, "--timeout", str(timeout),
                              "--json", str(out), "--quiet"])
    print("+", " ".join(cmd), flush=True)
    mp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = rank_pids(mpiexec, mp.pid, 2)[1]
    wait_until_timed(mp, out, victim)
    t0 = time.monotonic()
    os.kill(victim, signal.SIGSTOP)
    try:
        stdout, stderr = mp.communicate(timeout=timeout + 60)
    finally:
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass
    secs = time.monotonic() - t0
    print(stderr[-3000:], file=sys.stderr)
    p = subprocess.CompletedProcess(cmd, mp.returncode, stdout, stderr)
    line = expect_timeout_exit(mpiexec, p, secs, timeout + 5, ["rank 0", f"timed out after {timeout * 1000} ms",
                                                      "op=allreduce", "size=1048576", "phase=timed", "iteration=",
                                                      *expect])
    recs = valid_lines(out)
    if [r["type"] for r in recs] != ["run", "result", "end"] or recs[-1]["exit_status"] != 3 or recs[-1]["points"] != 1:
        fail(f"want the run record, the 8 B point and an end record with exit_status 3, got {recs}")
    print(f"FIGURE: kill -STOP rank 1 inside {what} (1 MiB, --timeout {timeout}) | exit 3, "
          f"one line | {secs:.1f} s | run + 1 point + end(3) (the point in progress is not a record)")
    return line


def test_stall_library(collbench: str, mpiexec: str, workdir: str) -> None:
    """The issue's case: a rank stopped inside a library collective ends the job in bounded time."""
    line = stall_run(collbench, mpiexec, workdir, ["--algo", "library"], ["MPI_Allreduce", "algo=library"],
                     "MPI_Allreduce (library)")
    print(f"stall_library: OK: {line}")


def test_stall_shm(collbench: str, mpiexec: str, workdir: str) -> None:
    """A peer that never raises its flag in peer memory (zero-copy allreduce, registered buffers)."""
    line = stall_run(collbench, mpiexec, workdir, ["--algo", "shm", "--buffers", "registered"],
                     ["peer 1 to raise its flag", "algo=shm", "peer=1"], "allreduce/shm (registered)")
    print(f"stall_shm: OK: {line}")


def test_stall_control(collbench: str, mpiexec: str, workdir: str) -> None:
    """A rank stalls between points: the others wait in the harness's own control collective."""
    d = fresh_dir(workdir)
    out = d / "control.jsonl"
    timeout, after = 2, 2
    env = dict(os.environ, COLLBENCH_TEST_FAULT=f"stop:rank=1:after_points={after}")
    p, secs = timed_run(mpirun(mpiexec, 3, [collbench, "--op", "allreduce", "--algo", "ring", "-b", "8", "-e", "1M",
                                               "--timeout", str(timeout), "--json", str(out), "--quiet"]), env, 90)
    # Control calls get 2 x timeout + 1 s (rank 0; the others 1 s more), then the launcher.
    line = expect_timeout_exit(mpiexec, p, secs, 2 * timeout + 1 + 6, ["rank 0", f"timed out after {2 * timeout * 1000 + 1000} ms",
                                                            "harness's MPI_Allreduce", "op=allreduce", "algo=ring",
                                                            "phase=between points"])
    recs = valid_lines(out)
    results = [r for r in recs if r["type"] == "result"]
    if [r["type"] for r in recs] != ["run"] + ["result"] * after + ["end"]:
        fail(f"want run, {after} results, end; got {[r['type'] for r in recs]}")
    if recs[-1]["exit_status"] != 3 or recs[-1]["points"] != after:
        fail(f"end record: {recs[-1]}")
    for r in results:
        cc.check_result(r, "stall_control")
    print(f"FIGURE: rank 1 SIGSTOPs itself after {after} points, others in the control MPI_Allreduce "
          f"(--timeout {timeout}) | exit 3, one line | {secs:.1f} s | {len(results)} of {after} points + end(3)")
    print(f"stall_control: OK: {line}")


def mount_tmpfs(d: Path, size: str) -> bool:
    d.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"cannot mount a tmpfs ({r.stderr.strip()}): falling back to /dev/full", file=sys.stderr)
        return False
    return True


DISK_SWEEP = ["--op", "allreduce,broadcast,allgather", "--algo", "ring,naive,library", "-b", "8", "-e", "1M",
              "-n", "3", "-w", "1", "--quiet"]


def test_disk_full(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    mnt = d / "tmpfs"
    if not mount_tmpfs(mnt, "64k"):
        # No tmpfs (not root): /dev/full fails every write with ENOSPC. Checks the error path
        # only (no partial record can be checked there).
        p, secs = timed_run(mpirun(mpiexec, 2, [collbench, *DISK_SWEEP, "--json", "/dev/full"]), dict(os.environ), 120)
        errors = error_lines(p.stderr)
        if p.returncode != 4 or len(errors) != 1 or "/dev/full" not in errors[0] or "No space left" not in errors[0]:
            fail(f"/dev/full: exit {p.returncode}, errors {errors}")
        print(f"FIGURE: --json /dev/full (fallback, no tmpfs) | exit 4, one line | {secs:.1f} s | n/a")
        # The partial file, the kept points and --resume after the disk filled were not checked:
        # a skip (ctest SKIP_RETURN_CODE 77), not a pass.
        print("disk_full: SKIPPED: no tmpfs (needs root): only /dev/full's error path was checked; "
              "the kept points and --resume were not")
        sys.exit(77)
    try:
        out = mnt / "r.jsonl"
        full = d / "full.jsonl"  # the same sweep with room: the points expected
        p, _ = timed_run(mpirun(mpiexec, 2, [collbench, *DISK_SWEEP, "--json", str(full)]), dict(os.environ), 300)
        if p.returncode != 0:
            fail(f"reference run: exit {p.returncode}")
        want = {key(r) for r in records(full) if r["type"] == "result"}
        if full.stat().st_size <= 64 * 1024:
            fail(f"the sweep writes only {full.stat().st_size} B: it would not fill 64 KiB")

        p, secs = timed_run(mpirun(mpiexec, 2, [collbench, *DISK_SWEEP, "--json", str(out)]), dict(os.environ), 300)
        errors = error_lines(p.stderr)
        if p.returncode != 4:
            fail(f"disk full: exit {p.returncode}, want 4")
        if len(errors) != 1 or str(out) not in errors[0] or "No space left on device" not in errors[0]:
            fail(f"disk full: want ONE line naming {out} and ENOSPC, got {errors}")
        recs = valid_lines(out)  # no partial record left behind
        kept = [r for r in recs if r["type"] == "result"]
        if not kept or recs[0]["type"] != "run" or any(r["type"] == "end" for r in recs):
            fail(f"disk full: want the run record and the complete points, got {[r['type'] for r in recs]}")
        print(f"disk full: {len(kept)} of {len(want)} points kept, {out.stat().st_size} B: {errors[0]}")

        # Room again (as after cleaning up): --resume completes the file to the same points.
        subprocess.run(["mount", "-o", "remount,size=4m", str(mnt)], check=True)
        p, _ = timed_run(mpirun(mpiexec, 2, [collbench, *DISK_SWEEP, "--json", str(out), "--resume"]),
                         dict(os.environ), 300)
        if p.returncode != 0 or error_lines(p.stderr):
            fail(f"--resume after the disk filled: exit {p.returncode}")
        recs = valid_lines(out)
        got = [key(r) for r in recs if r["type"] == "result"]
        if set(got) != want or len(got) != len(want):
            fail(f"after --resume: {len(set(got))} distinct of {len(want)} points, {len(got)} records")
        if recs[-1]["type"] != "end" or recs[-1]["exit_status"] != 0:
            fail(f"resumed run's end record: {recs[-1]}")
        print(f"FIGURE: --json on a 64 KiB tmpfs | exit 4, one line naming the file and ENOSPC | {secs:.1f} s | "
              f"{len(kept)} of {len(want)} complete points kept, no partial line; --resume -> {len(want)} of {len(want)}")
        print("disk_full: OK")
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_corrupt(collbench: str, mpiexec: str, workdir: str) -> None:
    d = fresh_dir(workdir)
    good = d / "good.jsonl"
    base = mpirun(mpiexec, 2, [collbench, "--op", "allreduce", "--algo", "ring", "-b", "8", "-e", "1K", "-n", "3",
                               "--quiet"])
    p, _ = timed_run([*base, "--json", str(good)], dict(os.environ), 120)
    if p.returncode != 0:
        fail(f"reference run: exit {p.returncode}")
    lines = good.read_text().splitlines(keepends=True)
    cases = {
        # name: (file content, line the refusal must name)
        "garbage in the middle": ("".join(lines[:3] + ["this is not json\n"] + lines[3:]), 4),
        "a record cut mid-file": ("".join(lines[:2] + [lines[2][:40] + "\n"] + lines[3:]), 3),
        "another tool's JSON": ('{"name": "osu_latency", "size": 8, "latency_us": 0.2}\n' * 3, 1),
        "another schema in the middle": ("".join(lines[:5] + ['{"type":"result","schema":"other/2"}\n'] + lines[5:]), 6),
        "a record type not ours": ("".join(lines[:1] + ['{"type":"bogus","schema":"collbench/1"}\n'] + lines[1:]), 2),
    }
    for n, (name, (content, lineno)) in enumerate(cases.items()):
        for extra in (["--resume"], []) if n == 0 else (["--resume"],):  # appending is the same check
            f = d / "bad.jsonl"
            f.write_text(content)
            before = f.read_bytes()
            p, secs = timed_run([*base, "--json", str(f), *extra], dict(os.environ), 60)
            errors = error_lines(p.stderr)
            if p.returncode != 2 or len(errors) != 1 or f"{f}:{lineno}:" not in errors[0]:
                fail(f"{name} {extra}: exit {p.returncode}, want 2 and ONE line naming {f}:{lineno}; got {errors}")
            if f.read_bytes() != before:
                fail(f"{name} {extra}: the file was changed")
        print(f"FIGURE: results file with {name} ({'--resume, and appending' if n == 0 else '--resume'}) | exit 2, one line "
              f"'{errors[0][len('collbench: error: '):][:70]}...' | {secs:.1f} s | file unchanged")
    # A cut LAST line is a killed run's, not corruption: still dropped with a warning and resumed.
    f = d / "tail.jsonl"
    f.write_text("".join(lines) + lines[2][:40])
    p, _ = timed_run([*base, "--json", str(f), "--resume"], dict(os.environ), 60)
    if p.returncode != 0 or "truncated" not in p.stderr:
        fail(f"a cut last line: exit {p.returncode}")
    valid_lines(f)
    print("corrupt: OK")


SIG_SWEEP = ["--op", "allreduce,broadcast", "--algo", "ring,naive", "-b", "8", "-e", "1M", "-n", "40", "--quiet"]


def test_signals(collbench: str, mpiexec: str, workdir: str, rounds: int = 12, seed: int = 15) -> None:
    d = fresh_dir(workdir)
    rng = random.Random(seed)
    ref = d / "ref.jsonl"
    p, ref_secs = timed_run(mpirun(mpiexec, 2, [collbench, *SIG_SWEEP, "--json", str(ref)]), dict(os.environ), 300)
    if p.returncode != 0:
        fail(f"uninterrupted run: exit {p.returncode}")
    want = {key(r) for r in records(ref) if r["type"] == "result"}
    out = d / "r.jsonl"
    outcomes: dict[str, int] = {}
    worst = 0.0
    for i in range(rounds):
        sig = rng.choice([signal.SIGTERM, signal.SIGINT])
        # From the moment both ranks exist: 0 (inside MPI_Init, before the run record) up to
        # half an uninterrupted run (mid-point, between points, while writing a record).
        delay = rng.choice([0.0, rng.uniform(0.0, 0.5), rng.uniform(0.0, ref_secs / 2)])
        cmd = mpirun(mpiexec, 2, [collbench, *SIG_SWEEP, "--json", str(out), "--resume"])
        mp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ranks = rank_pids(mpiexec, mp.pid, 2)
        time.sleep(delay)
        t0 = time.monotonic()
        for pid in ranks:  # as Slurm does: the signal to every task
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        _, err = mp.communicate(timeout=60)
        secs = time.monotonic() - t0
        worst = max(worst, secs)
        outcome = f"exit {mp.returncode}"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        print(f"round {i}: {signal.Signals(sig).name} {delay:.2f} s after the ranks started: {outcome} in {secs:.2f} s",
              flush=True)
        # 128 + signal (stopped, or killed before it could block the signal); 0: it had finished.
        if mp.returncode not in (0, 128 + sig):
            print(err[-2000:], file=sys.stderr)
            fail(f"round {i}: exit {mp.returncode}, want 0 or {128 + sig}")
        if secs > 5:
            fail(f"round {i}: {secs:.1f} s from the signal to the exit")
        # Always valid JSON Lines, every record whole. No file yet is valid too: the signal came
        # before the run record (inside MPI_Init; round 0's delay 0 does that when the ranks
        # start slowly), and a file once written is never removed, so later rounds check it.
        if out.exists():
            valid_lines(out)
    p, _ = timed_run(mpirun(mpiexec, 2, [collbench, *SIG_SWEEP, "--json", str(out), "--resume"]), dict(os.environ), 300)
    if p.returncode != 0:
        fail(f"final --resume: exit {p.returncode}")
    recs = valid_lines(out)
    done = [key(r) for r in recs if r["type"] == "result"]
    if set(done) != want:
        fail(f"after the signals and --resume: {len(set(done))} of {len(want)} points; missing {sorted(want - set(done))[:4]}")
    if len(done) != len(want):
        fail(f"{len(done)} result records for {len(want)} points: a finished point was measured twice")
    runs, ends = sum(r["type"] == "run" for r in recs), sum(r["type"] == "end" for r in recs)
    print(f"FIGURE: SIGTERM/SIGINT to every rank at {rounds} seeded random moments (seed {seed}; uninterrupted run "
          f"{ref_secs:.1f} s), each run --resume | {', '.join(f'{k}: {v}' for k, v in sorted(outcomes.items()))} | "
          f"worst {worst:.2f} s | always valid JSON Lines; {len(set(done))} of {len(want)} points after the final "
          f"--resume, none twice; {runs} run records, {ends} end records")
    print("signals: OK")


def main(argv: list[str]) -> None:
    tests = {"stall_library": test_stall_library, "stall_shm": test_stall_shm, "stall_control": test_stall_control, "disk_full": test_disk_full,
             "corrupt": test_corrupt, "signals": test_signals}
    if len(argv) != 4 or argv[0] not in tests:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    tests[argv[0]](*argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
