#!/usr/bin/python3
"""A recording stand-in for `nsys` (Nsight Systems is not installable on the test machines).

Put a link named `nsys` to this file first on PATH. `nsys profile --name=value ... PROGRAM ARGS`
appends one JSON line to $NSYS_STANDIN_LOG (argv, the launcher's rank variables, the host, the
--output name with every %q{VAR} expanded from this process's environment as nsys does) and
then execs PROGRAM ARGS, so the profiled run still happens with the same PID and environment.
It profiles nothing and writes no report. It exits 97, before running anything, on what nsys
would not run as profile.sh means it: another command than `profile`, an option not in
--name=value form, a %q{VAR} that is unset here, or no program.
"""
import json
import os
import re
import socket
import sys

RANK_VARS = ("OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMIX_RANK", "PMI_RANK", "COLLBENCH_LAYOUT")


def refuse(why: str) -> None:
    print(f"nsys stand-in: {why}", file=sys.stderr)
    sys.exit(97)


def main(argv: list[str]) -> None:
    log = os.environ.get("NSYS_STANDIN_LOG") or refuse("NSYS_STANDIN_LOG is not set")
    if not argv or argv[0] != "profile":
        refuse(f"expected `nsys profile ...`, got {argv[:1]}")
    i, options = 1, {}
    while i < len(argv) and argv[i].startswith("-"):
        m = re.fullmatch(r"(--[a-z][a-z0-9-]*)=(.*)", argv[i], re.S)
        if not m:
            refuse(f"option {argv[i]!r} is not in --name=value form")
        options[m[1]] = m[2]
        i += 1
    program = argv[i:]
    if not program:
        refuse("no program after the options")
    output = options.get("--output", "")

    def expand(m: re.Match) -> str:
        if m[1] not in os.environ:
            refuse(f"--output {output!r}: %q{{{m[1]}}} is unset in this process")
        return os.environ[m[1]]

    entry = {
        "argv": argv, "options": options, "program": program,
        "output_resolved": re.sub(r"%q\{([A-Za-z_][A-Za-z0-9_]*)\}", expand, output),
        "env": {v: os.environ.get(v) for v in RANK_VARS}, "host": socket.gethostname(), "pid": os.getpid(),
    }
    with open(log, "a", encoding="utf-8") as f:  # one write of one line: ranks append side by side
        f.write(json.dumps(entry) + "\n")
    try:
        os.execvp(program[0], program)
    except OSError as e:
        refuse(f"cannot run {program[0]!r}: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
