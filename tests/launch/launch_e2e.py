#!/usr/bin/env python3
"""Launching without MPI, end to end with the real launchers: collbench --backend gloo under
`collbench --spawn`, under torchrun (static rendezvous, where torchrun's agent serves its own
store on MASTER_PORT, and --standalone), and under mpirun (Gloo bootstrapped from MPI's rank and
size); every result verified and schema-valid. Then every fault and bad input of the launch,
each with its exit status, its one line, and its time to exit (printed, for the closing note):
a rank that never arrives, a second claim of a rank, a wrong world size, a connection that sends
garbage or nothing, a port already in use, a rank killed mid-collective, a launcher the backend
cannot use.

Usage: launch_e2e.py COLLBENCH WORKDIR [MPIEXEC]
"""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import collbench_check as cc  # noqa: E402

TORCHRUN = shutil.which("torchrun") or "/usr/bin/torchrun"
SMALL = ["-b", "8", "-e", "64K", "-f", "8", "-n", "5", "-w", "1"]
TIMES = []  # (case, seconds, exit status)


def clean_env(extra=None):
    drop = ("OMPI_", "PMI", "SLURM_", "RANK", "WORLD_SIZE", "LOCAL_", "GROUP_", "MASTER_", "TORCHELASTIC_", "COLLBENCH_")
    e = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    e.update(extra or {})
    return e


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(case, argv, env=None, timeout=120):
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=clean_env(env))
    TIMES.append((case, time.monotonic() - t0, p.returncode))
    return p


def start(argv, env):
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(env))


def finish(case, procs, t0, timeout=60):
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        outs.append((p.returncode, out, err))
    TIMES.append((case, time.monotonic() - t0, [o[0] for o in outs]))
    return outs


def torch_env(rank, size, port, extra=None):
    """What torchrun --standalone gives a worker (no agent store): rank 0 serves on MASTER_PORT."""
    e = {"RANK": str(rank), "WORLD_SIZE": str(size), "LOCAL_RANK": str(rank), "LOCAL_WORLD_SIZE": str(size),
         "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "TORCHELASTIC_RUN_ID": "e2e",
         "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_USE_AGENT_STORE": "False"}
    e.update(extra or {})
    return e


def check_run(case, out, world, ops=None):
    by_run = cc.check_file(str(out), runs=1)
    (results,) = by_run.values()
    run_rec = json.loads(out.read_text().splitlines()[0])
    assert run_rec["backend"] == "gloo" and run_rec["world_size"] == world, (case, run_rec["backend"], run_rec["world_size"])
    assert run_rec["versions"]["gloo"].startswith("Gloo "), run_rec["versions"]
    measured = [r for r in results if not r["skipped"]]
    assert measured and all(r["wrong"] == 0 for r in results), case
    if ops:
        assert {r["op"] for r in measured} >= set(ops), (case, {r["op"] for r in measured})
    return results


def one_line(text, needle, case):
    lines = [ln for ln in text.splitlines() if "collbench: error" in ln]
    assert any(needle in ln for ln in lines), f"{case}: no error line with {needle!r} in:\n{text[-3000:]}"


def main(collbench, work, mpiexec=None):
    missing = []  # checks that could not run: the test then ends "skipped" (77), not passed
    work = pathlib.Path(work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    # --spawn: this process is rank 0 and starts the others (mp.spawn's shape).
    out = work / "spawn.jsonl"
    p = run("spawn 3 ranks, every op and algorithm", [collbench, "--backend", "gloo", "--spawn", "3", "--op", "all",
            "--algo", "all", "-b", "8", "-e", "512", "-f", "8", "-n", "3", "-w", "1", "--json", str(out)])
    assert p.returncode == 0, f"spawn: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    check_run("spawn", out, 3, ops=["allreduce", "broadcast", "allgather", "alltoall"])
    assert "# Gloo" in p.stdout or "gloo" in p.stdout, p.stdout[:2000]

    # pingpong over Gloo's unbound buffers.
    out = work / "pingpong.jsonl"
    p = run("spawn 2 ranks, pingpong", [collbench, "--backend", "gloo", "--spawn", "2", "--op", "pingpong", *SMALL,
            "--json", str(out)])
    assert p.returncode == 0, f"pingpong: exit {p.returncode}\n{p.stderr[-3000:]}"
    cc.check_file(str(out), runs=1)

    # torchrun, static rendezvous: its agent holds MASTER_PORT, collbench meets on the next port.
    if os.path.exists(TORCHRUN):
        for mode in (["--master_port", str(free_port())], ["--standalone"]):
            out = work / f"torchrun{mode[0]}.jsonl"
            # --monitor_interval: torchrun's agent looks at its workers every 5 s by default.
            p = run(f"torchrun {mode[0]}", ["/usr/bin/python3", TORCHRUN, "--redirects", "2", "--tee", "2", *mode,
                    "--monitor_interval", "0.5", "--nproc_per_node", "2", "--no_python", collbench, "--backend", "gloo", "--op", "allreduce",
                    "--algo", "ring,library", *SMALL, "--json", str(out)], timeout=180)
            assert p.returncode == 0, f"torchrun {mode}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
            check_run(f"torchrun {mode}", out, 2)
    else:
        missing.append("torchrun (python3-torch)")

    # mpirun: Gloo bootstrapped from MPI's rank and size.
    if not mpiexec:
        missing.append("mpirun")
    else:
        out = work / "mpirun.jsonl"
        p = run("mpirun -np 2", [mpiexec, "-np", "2", "--oversubscribe", collbench, "--backend", "gloo", "--op", "allreduce",
                "--algo", "ring,library", *SMALL, "--json", str(out)],
                env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        assert p.returncode == 0, f"mpirun: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
        check_run("mpirun", out, 2)
        # ... while --backend mpi under torchrun's variables is refused in one line, not run as singletons.
        p = run("mpi backend under torchrun", [collbench, "--backend", "mpi", *SMALL], env=torch_env(0, 2, free_port()))
        assert p.returncode == 2, (p.returncode, p.stderr)
        one_line(p.stderr, "started by torchrun", "mpi under torchrun")

    # NCCL without MPI starts the same way; without a GPU it stops at the device check, in one line.
    p = run("nccl --spawn 2 without a GPU", [collbench, "--backend", "nccl", "--device", "cuda", "--spawn", "2", *SMALL])
    assert p.returncode == 2 and "mpi" not in p.stderr.lower().split("accepted")[0], (p.returncode, p.stderr)
    assert len([ln for ln in p.stderr.splitlines() if ln.strip()]) == 1, p.stderr

    args = [collbench, "--backend", "gloo", "--op", "allreduce", "--algo", "ring", *SMALL, "--timeout", "2"]
    patient = args[:-1] + ["20"]  # for the job that must outlast the bad connections

    # A rank that never arrives: rank 0 ends the job with exit 3 within --timeout, naming it.
    port = free_port()
    t0 = time.monotonic()
    (r0,) = finish("rank 1 never arrives (--timeout 2)", [start(args, torch_env(0, 2, port))], t0)
    assert r0[0] == 3 and time.monotonic() - t0 < 2 + 5, r0
    one_line(r0[2], "ranks 1 of 2 never joined", "missing rank") if "ranks 1 of 2" in r0[2] else one_line(r0[2], "1", "missing rank")

    # Rank 0 never arrives: the others give up within --timeout, naming the endpoint.
    p = run("rank 0 never arrives (--timeout 2)", args, env=torch_env(1, 2, free_port()))
    assert p.returncode == 3, (p.returncode, p.stderr)
    one_line(p.stderr, "never answered", "no rank 0")

    # A second claim of a rank, a wrong world size, garbage, silence: each refused or dropped in
    # one line, and the job (3 ranks, rank 2 late) still completes.
    port = free_port()
    t0 = time.monotonic()
    procs = [start(patient, torch_env(0, 3, port)), start(patient, torch_env(1, 3, port))]
    time.sleep(1.0)
    dup = start(args, torch_env(1, 3, port))
    wrong = start(args, torch_env(2, 4, port))
    silent = socket.create_connection(("127.0.0.1", port))
    garbage = socket.create_connection(("127.0.0.1", port))
    garbage.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"\xff" * 64)
    d = finish("second claim of rank 1", [dup], t0)[0]
    w = finish("wrong world size", [wrong], t0)[0]
    time.sleep(0.3)
    procs.append(start(patient, torch_env(2, 3, port)))
    outs = finish("the job with them completes", procs, t0)
    silent.close()
    garbage.close()
    assert d[0] == 2, d
    one_line(d[2], "already joined", "duplicate rank")
    assert w[0] == 2, w
    one_line(w[2], "the world has 4 ranks", "wrong world size")
    assert [o[0] for o in outs] == [0, 0, 0], [(o[0], o[2][-800:]) for o in outs]
    assert "dropped a connection" in outs[0][2], outs[0][2][-2000:]

    # A port already in use: one line naming it, exit 2.
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        p = run("rendezvous port in use", args, env=torch_env(0, 2, port))
    assert p.returncode == 2, (p.returncode, p.stderr)
    one_line(p.stderr, str(port), "port in use")

    # A rank killed mid-run: the job ends in bounded time, a survivor naming the dead peer.
    t0 = time.monotonic()
    p = run("rank 1 killed mid-run", [collbench, "--backend", "gloo", "--spawn", "3", "--op", "allreduce", "--algo",
            "ring", "-b", "8", "-e", "1M", "-f", "2", "--timeout", "10"],
            env={"COLLBENCH_TEST_FAULT": "kill:rank=1:after_points=2"})
    assert p.returncode == 3 and time.monotonic() - t0 < 30, (p.returncode, time.monotonic() - t0, p.stderr[-2000:])
    one_line(p.stderr, "rank 1 (pid", "killed rank")  # the spawner names it (its peers may say only peer=1)
    assert "killed by signal 9" in p.stderr, p.stderr[-2000:]

    print("case seconds exit")
    for case, s, rc in TIMES:
        print(f"  {case}: {s:.1f} s, exit {rc}")
    if missing:
        print(f"SKIPPED: {', '.join(missing)} not installed: scripts/deps.sh installs it")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
