"""What a user at the terminal sees (ctest harness.terminal; label "harness"). Stdlib only.

    terminal.py COLLBENCH MPIEXEC WORKDIR

- streaming: under mpirun, each size's row reaches the pipe while the run goes on, with
  out-of-place and in-place side by side on one row and a best column;
- Ctrl-C: SIGINT to the whole foreground process group (what a terminal sends; mpirun turns it
  into SIGTERM to the ranks and SIGKILL one second later) leaves every finished row on screen,
  a footer that says the run was stopped, and an `end` record after exactly the results the
  table shows, in bounded time;
- --links: a second run reuses the first run's link rates (the eff yardstick), says so in the
  header and the run record, and a malformed links file is one line and exit 2.
"""
from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from launcher import mpirun  # the script's folder is on sys.path

ROW = re.compile(r"^\s+(\d+)\s")  # a table row starts with its size


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def start(cmd: list[str]) -> subprocess.Popen:
    print("+", " ".join(cmd), flush=True)
    # A session of its own: the test signals its process group as a terminal would.
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                            start_new_session=True, env=dict(os.environ, COLUMNS="400"))


def read_until(p: subprocess.Popen, done, limit: float) -> list[str]:
    """stdout lines as they arrive, until done(lines) or the process ends or `limit` s pass."""
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    lines: list[str] = []
    end = time.monotonic() + limit
    while time.monotonic() < end and not done(lines):
        if not sel.select(timeout=0.2):
            continue
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
    return lines


def rows(lines: list[str]) -> list[str]:
    return [l for l in lines if ROW.match(l)]


def check_links(collbench: str, mpiexec: str, d: Path) -> None:
    links, out = d / "links.json", d / "links.jsonl"
    cmd = mpirun(mpiexec, 2, [collbench, "-b", "8", "-e", "8", "--json", str(out), "--links", str(links)])
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if first.returncode or second.returncode:
        fail(f"--links runs: exit {first.returncode}, {second.returncode}: {first.stderr}{second.stderr}")
    runs = [json.loads(l) for l in out.read_text().splitlines() if '"type":"run"' in l]
    a, b = runs[0]["links"]["intra"], runs[1]["links"]["intra"]
    if "reused_from" in a or b.get("reused_from") != str(links) or a["GBps"] != b["GBps"]:
        fail(f"the second run must reuse the first one's rate: {a} then {b}")
    if f"from {links}" not in second.stdout:
        fail(f"the header does not say the rate was reused:\n{second.stdout[:1500]}")
    saved = json.loads(links.read_text())
    if saved["schema"] != "collbench-links/1" or [r["run_id"] for r in saved["rates"]] != [runs[0]["run_id"]]:
        fail(f"links file: {saved}")
    links.write_text('{"schema": "collbench-links/1", "backend": "mpi"}')
    bad = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    errs = [l for l in bad.stderr.splitlines() if l.startswith("collbench: error")]
    if bad.returncode == 0 or len(errs) != 1 or f"--links {links}" not in errs[0]:
        fail(f"a malformed links file: exit {bad.returncode}, want one line naming it: {bad.stderr!r}")
    print(f"links: OK (the second run reused {a['GBps']:.2f} GB/s; a malformed file: {errs[0]})")


def main() -> None:
    collbench, mpiexec, workdir = sys.argv[1:4]
    d = Path(workdir)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    check_links(collbench, mpiexec, d)
    out = d / "run.jsonl"
    # 8 B .. 256 MiB in x4 steps, two algorithms, both placements: many seconds in all, the
    # first rows in well under one.
    cmd = mpirun(mpiexec, 2, [collbench, "--algo", "ring,library", "--inplace", "both", "-b", "8", "-e", "256M", "-f",
                              "4", "--json", str(out)])
    p = start(cmd)
    t0 = time.monotonic()
    lines = read_until(p, lambda ls: len(rows(ls)) >= 3, 60)
    seen = time.monotonic() - t0
    if len(rows(lines)) < 3:
        p.kill()
        fail(f"no 3 rows within 60 s: {lines[-10:]}")
    if p.poll() is not None:
        fail(f"the run ended (exit {p.returncode}) before its rows were read: rows are not streamed")
    header = "\n".join(lines)
    if "out-of-place" not in header or "in-place" not in header or "best" not in header:
        fail(f"want out-of-place and in-place side by side and a best column:\n{header}")
    r = rows(lines)
    if [int(ROW.match(x).group(1)) for x in r[:3]] != [8, 32, 128]:
        fail(f"want one row per size (8, 32, 128 B): {r[:3]}")
    # Ctrl-C, as a terminal sends it: the whole foreground process group.
    os.killpg(p.pid, signal.SIGINT)
    t1 = time.monotonic()
    rest, err = p.communicate(timeout=30)
    took = time.monotonic() - t1
    lines += rest.splitlines()
    print("\n".join(lines[-12:]))
    print(err, file=sys.stderr)
    if took > 10:
        fail(f"Ctrl-C took {took:.1f} s to end the run")
    if "collbench: received" not in err:
        fail(f"no line on stderr says the run was stopped: {err!r}")
    text = "\n".join(lines)
    if "# Run ended early      : stopped by SIG" not in text:
        fail("the footer does not say the run was stopped")
    if "# Points" not in text or "# Out of bounds values : 0 OK" not in text:
        fail("the footer is incomplete")
    recs = [json.loads(l) for l in out.read_text().splitlines()]
    if recs[-1]["type"] != "end" or recs[-1]["exit_status"] not in (130, 143):
        fail(f"the file must end with an end record of 130/143: {recs[-1]}")
    results = [x for x in recs if x["type"] == "result"]
    if recs[-1]["points"] != len(results):
        fail(f"end says {recs[-1]['points']} points, the file holds {len(results)}")
    # Every result is on screen: each size's row shows its placements' results.
    sizes_on_screen = [int(ROW.match(x).group(1)) for x in rows(lines)]
    sizes_in_file = sorted({x["bytes"] for x in results})
    if sizes_on_screen != sizes_in_file:
        fail(f"rows on screen {sizes_on_screen} != sizes in the file {sizes_in_file}")
    if len(sizes_on_screen) >= 12:
        fail("the run finished before the signal: nothing was stopped")
    print(f"terminal: OK (first 3 rows after {seen:.2f} s while running; Ctrl-C after {len(results)} results "
          f"ended the run in {took:.1f} s with exit {p.returncode}, end {recs[-1]['exit_status']})")


if __name__ == "__main__":
    main()
