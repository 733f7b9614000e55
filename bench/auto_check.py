#!/usr/bin/python3
"""Issue 19's selection target: `--algo auto` against every single algorithm, in one run.

Reads collbench JSON Lines of runs that interleave `auto` with the algorithms it can choose
(re-measured in a different run than the one the tuning file was made from) and prints, per
(op, layout, size): auto's p50, the best single algorithm's p50 and name, the library's, and
the ratios best/auto and library/auto (>= 1: auto is as fast). Targets: best/auto >= 0.95 and
library/auto >= 0.97 at every size. Standard library only. Exit 0 when every target is met,
1 when one is not, 2 on bad input.

Usage: bench/auto_check.py RESULTS.jsonl [...]
"""
import json
import sys
from collections import defaultdict

BEST_MIN, LIBRARY_MIN = 0.95, 0.97


def layout(r: dict) -> str:
    return f"{r['nodes']}x{r['ranks_per_node']}"


def main(paths: list[str]) -> int:
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
    rows, missed = [], 0
    print(f"{'op':<15}{'layout':<7}{'bytes':>10}  {'auto (chosen)':<26}{'best single':<26}"
          f"{'library':>10}{'best/auto':>10}{'lib/auto':>9}")
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
        print(f"{op:<15}{lay:<7}{nbytes:>10}  {au:>9.2f} ({chosen[key]:<13}) {b:>9.2f} ({best:<13}) "
              f"{lib if lib else float('nan'):>10.2f}{rb:>10.2f}{rl:>9.2f}{'  <- missed' if miss else ''}")
        rows.append(rb)
    print(f"{len(rows)} points, {missed} below target (best/auto >= {BEST_MIN}, library/auto >= {LIBRARY_MIN})")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
