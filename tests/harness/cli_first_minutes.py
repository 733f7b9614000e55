"""The first minutes at the terminal (issue 33), as processes: what an nccl-tests or OSU user
types first. Stdlib only; no rank is started (--dry-run, --help, --list, --version, bad input).

    cli_first_minutes.py COLLBENCH

--help at COLUMNS=100 is <= 60 lines, --help-all and --list lines <= 100 columns, --list --op
allreduce <= 40 lines, --version exits 0 naming the commit, MPI and backends; every option the
other tools have that collbench answers is one line + exit 2; the spellings and kept meanings
reach the plan (--dry-run); -b 1 -e 6 plans no 0-byte point.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys


def run(collbench: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="100")
    return subprocess.run([collbench, *args], capture_output=True, text=True, timeout=60, env=env)


def main(collbench: str) -> int:
    problems: list[str] = []

    def check(cond: bool, what: str) -> None:
        if not cond:
            problems.append(what)

    for flag, most in (("--help", 60), ("--help-all", None)):
        p = run(collbench, flag)
        lines = p.stdout.splitlines()
        check(p.returncode == 0 and not p.stderr, f"{flag}: exit {p.returncode} {p.stderr!r}")
        check(most is None or len(lines) <= most, f"{flag}: {len(lines)} lines")
        check(all(len(l) <= 100 for l in lines), f"{flag}: a line is wider than 100 columns")
        check("COLLBENCH_TEST" not in p.stdout and "NONNEGATIVE" not in p.stdout, f"{flag}: test hooks/placeholders")
    p = run(collbench, "--version")
    check(p.returncode == 0 and re.match(r"collbench \S+ \(git \S+\)\n", p.stdout) is not None
          and "mpi: " in p.stdout and "backends: " in p.stdout, f"--version: {p.returncode} {p.stdout!r}")
    p = run(collbench, "--list", "--op", "allreduce")
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and len(lines) <= 40 and all(len(l) <= 100 for l in lines),
          f"--list --op allreduce: exit {p.returncode}, {len(lines)} lines")
    check(len(lines) > 2 and lines[2].split()[0] == "library", f"--list --op allreduce: library not first: {lines[:3]}")
    check(all(len(l) <= 100 for l in run(collbench, "--list").stdout.splitlines()), "--list: a line > 100 columns")

    # Answers: one line, exit 2, nothing on stdout.
    answers = ["-g 1", "-t 2", "-a 1", "-z 1", "-G 1", "-N 2", "-C 1", "-p 1", "-M 1G", "-u 5", "-I", "-D cont",
               "-P x", "-f", "--full", "-d cuda", "-T mpi_float", "--op sum", "--op alreduce", "--algo Rnig"]
    for a in answers:
        p = run(collbench, *a.split())
        err = p.stderr.splitlines()
        check(p.returncode == 2 and len(err) == 1 and err[0].startswith("collbench: error: ")
              and "; accepted: " in err[0] and not p.stdout, f"{a}: exit {p.returncode}, {err}")
    check("did you mean allreduce?" in run(collbench, "--op", "alreduce").stderr, "--op alreduce: no did-you-mean")
    check("did you mean ring?" in run(collbench, "--algo", "Rnig").stderr, "--algo Rnig: no did-you-mean")

    # Meanings kept, as the plan shows them.
    def plan(*args: str) -> str:
        p = run(collbench, "--dry-run", *args)
        check(p.returncode == 0, f"--dry-run {' '.join(args)}: exit {p.returncode} {p.stderr!r}")
        return p.stdout
    check("algo=library " in plan(), "no --algo: not the library's own")
    check("algo=ring " in plan("--op", "All_Reduce", "--algo", "Ring"), "All_Reduce/Ring")
    check("broadcast algo=library" in plan("--op", "bcast"), "bcast")
    check("4096 .. 16384 B (3 sizes)" in plan("-m", "4K:16K"), "OSU -m 4K:16K")
    check("warmup 3," in plan("-x", "3"), "OSU -x 3")
    check("(4 sizes)" in plan("-b", "1M", "-e", "4M", "-f", "1"), "nccl-tests -f 1: 1 MiB linear steps")
    check("4 .. 4 B (1 sizes)" in plan("-b", "1", "-e", "6"), "-b 1 -e 6: a 0-byte point")
    check("0 .. 8 B (3 sizes)" in plan("-b", "0", "-e", "8"), "-b 0: the 0-byte point asked for")
    for p_ in problems:
        print(f"FAIL: {p_}")
    print(f"cli_first_minutes: {len(answers)} answers, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
