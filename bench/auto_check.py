#!/usr/bin/python3
"""Issue 19's selection target: `--algo auto` against every single algorithm, in one run.

Reads collbench JSON Lines of runs that interleave `auto` with the algorithms it can choose
(re-measured in a different run than the one the tuning file was made from) and prints, per
(op, layout, size): auto's p50, the best single algorithm's p50 and name, the library's, and
the ratios best/auto and library/auto (>= 1: auto is as fast). Targets: best/auto >= 0.95 and
library/auto >= 0.97 at every size. Standard library only. Exit 0 when every target is met,
1 when one is not, 2 on bad input.

With --offline TUNING.yaml, also what that tuning file would have run: per point the p50 that
its chosen algorithm measured as a single algorithm in the same run (so a second tie rule is
judged on the very same measurements as the one auto ran with).

Usage: bench/auto_check.py RESULTS.jsonl [...] [--offline TUNING.yaml]
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "analysis"))

BEST_MIN, LIBRARY_MIN = 0.95, 0.97


def layout(r: dict) -> str:
    return f"{r['nodes']}x{r['ranks_per_node']}"


def offline_choice(tuning, op: str, layout_name: str, nbytes: int) -> str | None:
    """The algorithm ``tuning`` names for an even layout NxR at this size (None: no entry)."""
    n, r = (int(x) for x in layout_name.split("x"))
    for e in tuning.entries:
        if e.op == op and e.layout.per_node == (r,) * n:
            return next((g.algo for g in e.ranges if g.contains(nbytes)), None)
    return None


def main(argv: list[str]) -> int:
    paths = [a for a in argv if a != "--offline"]
    tuning = None
    if "--offline" in argv:
        i = argv.index("--offline")
        if i + 1 >= len(argv):
            print("--offline needs a tuning file", file=sys.stderr)
            return 2
        from collbench_analysis.tune import load_tuning
        tuning = load_tuning(argv[i + 1])
        paths.remove(argv[i + 1])
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    p50: dict[tuple, dict[str, float]] = defaultdict(dict)
    chosen: dict[tuple, str] = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if r.get("type") != "result" or r.get("skipped") or r.get("op") == "pingpong":
                    continue
                if r.get("wrong"):
                    print(f"{path}: {r['op']}/{r['algo']} {r['bytes']} B has wrong elements", file=sys.stderr)
                    return 2
                key = (r["op"], layout(r), r["bytes"])
                p50[key][r["algo"]] = r["time_us"]["p50"]
                if r["algo"] == "auto":
                    chosen[key] = r.get("chosen") or "?"
    rows, missed, off_missed, off_rows = [], 0, 0, 0
    print(f"{'op':<15}{'layout':<7}{'bytes':>10}  {'auto (chosen)':<26}{'best single':<26}"
          f"{'library':>10}{'best/auto':>10}{'lib/auto':>9}" + ("  offline: choice best/it lib/it" if tuning else ""))
    for key in sorted(p50, key=lambda k: (k[0], k[1], k[2])):
        algos = p50[key]
        if "auto" not in algos:
            continue
        others = {a: t for a, t in algos.items() if a != "auto"}
        if not others:
            continue
        best = min(others, key=others.get)
        b, au, lib = others[best], algos["auto"], others.get("library")
        rb = b / au
        rl = lib / au if lib else float("nan")
        miss = rb < BEST_MIN or (lib is not None and rl < LIBRARY_MIN)
        missed += miss
        op, lay, nbytes = key
        off = ""
        if tuning is not None:
            algo = offline_choice(tuning, op, lay, nbytes)
            t = others.get(algo) if algo else None
            if t:
                ob, ol = b / t, (lib / t if lib else float("nan"))
                omiss = ob < BEST_MIN or (lib is not None and ol < LIBRARY_MIN)
                off_missed += omiss
                off_rows += 1
                off = f"  {algo:<13}{ob:>6.2f}{ol:>7.2f}{' <-' if omiss else ''}"
        print(f"{op:<15}{lay:<7}{nbytes:>10}  {au:>9.2f} ({chosen[key]:<13}) {b:>9.2f} ({best:<13}) "
              f"{lib if lib else float('nan'):>10.2f}{rb:>10.2f}{rl:>9.2f}{'  <- missed' if miss else '':<11}{off}")
        rows.append(rb)
    print(f"{len(rows)} points, {missed} below target (best/auto >= {BEST_MIN}, library/auto >= {LIBRARY_MIN})")
    if tuning is not None:
        print(f"offline ({sys.argv[sys.argv.index('--offline') + 1]}): {off_rows} points, {off_missed} below target")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
