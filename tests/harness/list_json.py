"""collbench --list --json against the schema, plain --list and the analysis' registry snapshot.

Every entry is a schema-valid `$defs/algorithm` (strictly: no undeclared field), the entries are
--list's (op, algo, backend) in its order, and every entry the registry snapshot
(analysis/collbench_analysis/registry-snapshot.json: the traits of run records written before
they carried `algorithms`) shares with this build has the same traits, so the analysis reads old
records as the registry would describe them. An entry in the snapshot that this build lacks (NCCL's
in a CPU build) is skipped; one in this build that the snapshot lacks is new, and needs none.

    /usr/bin/python3 tests/harness/list_json.py build/collbench      # exit 1 naming each mismatch
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
from collbench_analysis import schema  # noqa: E402
from collbench_analysis.load import REGISTRY_SNAPSHOT  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def main(collbench: str) -> int:
    problems: list[str] = []
    listed = run(collbench, "--list", "--json")
    if listed.returncode != 0 or listed.stderr:
        print(f"collbench --list --json: exit {listed.returncode}: {listed.stderr.strip()}")
        return 1
    doc = json.loads(listed.stdout)
    entries = doc["algorithms"]
    for i, e in enumerate(entries):
        why = schema.definition_error(e, "algorithm", strict=True)
        if why is not None:
            problems.append(f"--list --json: algorithms[{i}] ({e.get('op')}/{e.get('algo')}): {why}")
        if set(e) != {"op", "algo", "backend", "description", "requirements", "traits"}:
            problems.append(f"--list --json: algorithms[{i}] has fields {sorted(e)}")
    # The same entries as plain --list, in its order (its rows: op, algo, backend, description).
    plain = run(collbench, "--list").stdout.splitlines()[1:]
    rows = [line.split()[:3] for line in plain if line[:1] not in (" ", "(") and not line.startswith("pingpong")]
    if rows != [[e["op"], e["algo"], e["backend"]] for e in entries]:
        problems.append("--list --json's entries are not --list's (op, algo, backend) in its order")
    methods = [line.split()[1] for line in plain if line.startswith("pingpong")]
    if methods != [m["algo"] for m in doc["pingpong"]]:
        problems.append(f"--list --json's pingpong methods {doc['pingpong']} are not --list's {methods}")
    # The snapshot's traits agree with this registry wherever both have the entry.
    snapshot = {(e["op"], e["algo"], e["backend"]): e["traits"]
                for e in json.loads(REGISTRY_SNAPSHOT.read_text(encoding="utf-8"))["algorithms"]}
    here = {(e["op"], e["algo"], e["backend"]): e["traits"] for e in entries}
    shared = snapshot.keys() & here.keys()
    for key in sorted(shared):
        if snapshot[key] != here[key]:
            problems.append(f"{REGISTRY_SNAPSHOT.name}: {'/'.join(key)} has traits {snapshot[key]}, the registry "
                            f"{here[key]} (regenerate it from a CUDA/NCCL build: collbench --list --json)")
    if not any(b == "any" for _, _, b in shared) or not any(b == "mpi" for _, _, b in shared):
        problems.append(f"{REGISTRY_SNAPSHOT.name}: shares no collbench and MPI entries with this build")
    for p in problems:
        print(p)
    print(f"list_json: {len(entries)} entries, {len(shared)} compared with the registry snapshot, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
