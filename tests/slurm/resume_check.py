#!/usr/bin/env python3
"""Checks one layout of a sweep that was interrupted and then resumed (tests/slurm/*_test.sh).

    resume_check.py RESULTS.jsonl LAYOUT EXPECTED_POINTS [--first-end STATUS|any]

In RESULTS.jsonl, the runs of LAYOUT (NxR, from the run records' nodes/ranks_per_node) must be:
an interrupted first run that measured K >= 1 points (with --first-end STATUS: it ended with an
end record of that exit status), then runs that measured the rest; every line is JSON; each of
the EXPECTED_POINTS points is measured exactly once over all runs (finished points are kept,
nothing is measured twice: collbench --resume writes no record for a point it skips); the last
run has an end record with exit status 0. Prints one line:
    resume_check: LAYOUT: kept K of E points in the interrupted run, R measured on resume, ...
Exit 0 when all holds, 1 otherwise (each problem on its own line).
"""
import json
import sys


def key(rec):
    return (rec["op"], rec["algo"], rec["dtype"], rec["redop"], rec["root"], rec["in_place"], rec["bytes"])


def main(argv):
    path, layout, expected = argv[1], argv[2], int(argv[3])
    first_end = argv[5] if len(argv) > 5 and argv[4] == "--first-end" else "any"
    errors, runs, order = [], {}, []
    for i, line in enumerate(open(path), 1):
        try:
            rec = json.loads(line)
        except ValueError as e:
            errors.append(f"{path}:{i}: not JSON ({e}): {line[:80]!r}")
            continue
        rid = rec.get("run_id")
        if rec.get("type") == "run":
            runs[rid] = {"layout": f'{rec.get("nodes")}x{rec.get("ranks_per_node")}', "measured": [], "end": None, "job": (rec.get("slurm") or {}).get("job_id")}
            order.append(rid)
        elif rid in runs and rec.get("type") == "result":
            if not rec.get("skipped"):
                runs[rid]["measured"].append(key(rec))
                if rec.get("wrong") != 0:
                    errors.append(f"{path}:{i}: wrong = {rec.get('wrong')}")
        elif rid in runs and rec.get("type") == "end":
            runs[rid]["end"] = rec.get("exit_status")
    mine = [runs[r] for r in order if runs[r]["layout"] == layout]
    if len(mine) < 2:
        errors.append(f"{layout}: {len(mine)} run(s), expected an interrupted one and a resumed one")
    else:
        first, last = mine[0], mine[-1]
        kept = set(first["measured"])
        if not kept:
            errors.append(f"{layout}: the interrupted run (job {first['job']}) measured no point")
        if first_end != "any" and str(first["end"]) != first_end:
            errors.append(f"{layout}: the interrupted run's end record: exit_status {first['end']}, expected {first_end}")
        measured = [k for r in mine for k in r["measured"]]
        twice = {k for k in measured if measured.count(k) > 1}
        if twice:
            errors.append(f"{layout}: {len(twice)} point(s) measured twice, e.g. {sorted(twice)[0]}")
        if len(set(measured)) != expected:
            errors.append(f"{layout}: {len(set(measured))} distinct points measured over all runs, expected {expected}")
        if last["end"] != 0:
            errors.append(f"{layout}: the last run (job {last['job']}) ended with exit_status {last['end']}, expected 0")
    for e in errors:
        print("resume_check:", e)
    if len(mine) >= 2:
        print(f"resume_check: {layout}: kept {len(mine[0]['measured'])} of {expected} points in the interrupted run "
              f"(job {mine[0]['job']}, end record: {mine[0]['end']}), {len(mine[-1]['measured'])} measured on resume "
              f"(job {mine[-1]['job']}): {'OK' if not errors else f'{len(errors)} problem(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
