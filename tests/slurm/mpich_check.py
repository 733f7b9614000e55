#!/usr/bin/env python3
"""Checks for tests/slurm/mpich_test.sh: one 2x1 collbench run of an MPICH build, and the bytes
that crossed the emulated links while it ran.

    mpich_check.py JSONL on-link|bypass N1_TX N2_TX [JOB_ID]

JSONL holds exactly one run (schema-valid: tests/harness/collbench_check.py), every point
verified (wrong 0), the run record naming MPICH (versions.mpi, versions.mpi_library's device),
layout 2x1 on hosts n1 and n2, and with JOB_ID its slurm.job_id. N1_TX, N2_TX: bytes each
node's eth0 sent during the run (the kernel's counters, read around it).

The model: what must cross each node's inter-node link (harness/results/bandwidth.cpp
inter_node_factor; allreduce on 2 nodes: 2(N-1)/N = 1 x bytes per call each way) times the
calls every point made at least (warmup + iters; verification and extra warm-up calls only add).
on-link: each node sent at least the model. bypass: each sent under a tenth of it (UCX took
shared memory between the emulated nodes: what on-link exists to catch).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import collbench_check as cc  # noqa: E402

INTER_NODE_FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n}  # the ops this test runs


def main() -> int:
    if len(sys.argv) not in (5, 6) or sys.argv[2] not in ("on-link", "bypass"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path, mode, tx = sys.argv[1], sys.argv[2], [int(sys.argv[3]), int(sys.argv[4])]
    job = sys.argv[5] if len(sys.argv) == 6 else None
    errors = []
    try:
        by_run = cc.check_file(path, runs=1)  # schema, one run and one end record, wrong 0
    except cc.CheckError as e:
        print(f"mpich_check: {e}")
        return 1
    (run_id, results), = by_run.items()
    run = next(r for _, r in cc.load(path) if r["type"] == "run")
    versions = run["versions"]
    if not str(versions.get("mpi")).startswith("MPICH") or "MPICH Device:" not in str(versions.get("mpi_library")):
        errors.append(f"versions.mpi {versions.get('mpi')!r}: not MPICH")
    if (run.get("nodes"), run.get("ranks_per_node"), run.get("hosts")) != (2, 1, ["n1", "n2"]):
        errors.append(f"layout {run.get('nodes')}x{run.get('ranks_per_node')} on {run.get('hosts')}, expected 2x1 on n1, n2")
    if job is not None and str((run.get("slurm") or {}).get("job_id")) != job:
        errors.append(f"slurm.job_id {(run.get('slurm') or {}).get('job_id')!r}, expected {job}")
    model, points = 0.0, 0
    for r in results:
        if r.get("skipped"):
            errors.append(f"{r['op']}/{r['algo']} {r['bytes']} B skipped: {r.get('skip_reason')}")
            continue
        if r["wrong"]:
            errors.append(f"{r['op']}/{r['algo']} {r['bytes']} B: wrong = {r['wrong']}")
        model += INTER_NODE_FACTOR[r["op"]](r["nodes"]) * r["bytes"] * (r["warmup"] + r["iters"])
        points += 1
    if points == 0:
        errors.append("no measured point")
    ratios = [t / model if model else 0.0 for t in tx]
    if mode == "on-link" and min(tx) < model:
        errors.append(f"the links carried less than the model: n1 sent {tx[0]} B, n2 {tx[1]} B, model {model:.0f} B each")
    if mode == "bypass" and max(tx) >= model / 10:
        errors.append(f"UCX's own choice put the traffic on the links (n1 sent {tx[0]} B, n2 {tx[1]} B, model "
                      f"{model:.0f} B): the bypass this test guards against is gone, and the on-link check proves less")
    for e in errors:
        print(f"mpich_check: {e}")
    print(f"mpich_check: {points} points verified, {versions.get('mpi')!r}, launcher {versions.get('launcher')}; "
          f"model {model / 2**20:.1f} MiB per node, sent n1 {tx[0] / 2**20:.2f} MiB ({ratios[0]:.2f}x), "
          f"n2 {tx[1] / 2**20:.2f} MiB ({ratios[1]:.2f}x): {mode} {'OK' if not errors else 'FAILED'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
