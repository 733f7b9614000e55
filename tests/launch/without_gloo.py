#!/usr/bin/env python3
"""A collbench built without Gloo (scripts/ci-extra.sh's MPICH tree hides it): the gloo backend and
the launchers that need its control mesh are refused in one line each with exit 2, before any
rank starts, and the thread backend still measures and verifies.

Usage: without_gloo.py COLLBENCH
"""
import subprocess
import sys


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)


def main(collbench):
    small = ["--op", "allreduce", "-b", "8", "-e", "8", "-n", "2", "-w", "1"]
    for case, args, words in [
        ("--backend gloo", ["--backend", "gloo", *small], "built without Gloo"),
        ("--backend gloo --spawn 2", ["--backend", "gloo", "--spawn", "2", *small], "built without Gloo"),
    ]:
        p = run([collbench, *args])
        lines = [line for line in p.stderr.splitlines() if line.strip()]
        assert p.returncode == 2, (case, p.returncode, p.stderr)
        assert len(lines) == 1 and words in lines[0] and "libgloo-dev" in lines[0], (case, p.stderr)
        print(f"ok: {case}: exit 2: {lines[0]}")
    p = run([collbench, "--backend", "thread", "--ranks", "2", *small])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Out of bounds values : 0 OK" in p.stdout, p.stdout
    print("ok: --backend thread --ranks 2 measures and verifies")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
