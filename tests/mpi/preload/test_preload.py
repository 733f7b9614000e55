#!/usr/bin/env python3
"""The MPI preload library (libcollbench-pmpi.so, docs/preload.md) in real MPI programs.

  exports LIB
      only MPI_ functions exported (nm -D), and no call of its own MPI_ functions inside it (a
      relocation naming one would be a call back into its wrappers: recursion).
  app MPIEXEC NP APP LIB TUNING DIR
      grid_app.c (row/column communicators, duplicates, MPI_COMM_SELF, an inter-communicator,
      in-place forms, derived types, a user op; it checks its own results, bitwise across ranks)
      under the preload with a tuning file that forces collbench's algorithms: the app passes, and
      the summary shows every algorithm the file names served for its call, and the library for
      what must fall back (a struct datatype, a user op, the inter-communicator), nothing
      re-entered, no line of the preload on stderr.
  bad_input MPIEXEC APP LIB TUNING DIR
      a missing file, a file that is not YAML, a file naming an algorithm collbench does not
      have, and MPI_THREAD_MULTIPLE: one line on stderr each, the app passes, and the summary says
      the library served what it could not.
  harness MPIEXEC NP COLLBENCH LIB TUNING DIR
      collbench --algo library under the preload: every point verified (so every intercepted
      call is checked), the records valid (collbench_check.py: the schema and its rules), the run
      record's versions.mpi_preload names the library, the summary shows the harness's calls served.
  raw MPIEXEC RAW LIB TUNING DIR
      bench's collbench_raw (plain MPI loops, no collbench code) under the preload: it runs, and
      the summary shows its calls served.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness"))
import collbench_check  # noqa: E402
import launcher  # noqa: E402

import yaml  # noqa: E402  (Debian python3-yaml: what the analysis reads YAML with)

PREFIX = "libcollbench-pmpi:"
CALLS = {"broadcast": "MPI_Bcast", "reduce": "MPI_Reduce", "allreduce": "MPI_Allreduce", "gather": "MPI_Gather",
         "allgather": "MPI_Allgather", "scatter": "MPI_Scatter", "reduce_scatter": "MPI_Reduce_scatter_block",
         "alltoall": "MPI_Alltoall"}
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(mpiexec, np, args, lib, extra_env, timeout=120):
    env = {"LD_PRELOAD": ":".join(p for p in (lib, os.environ.get("LD_PRELOAD", "")) if p), **extra_env}
    cmd = launcher.mpirun(mpiexec, np, args, env=env)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    print("$", " ".join(cmd), f"-> {p.returncode}")
    return p


def summary(path):
    """{(call, served_by): (calls, why)} from the summary file."""
    rows = {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split(None, 5)
        rows[(f[0], f[1], f[5] if len(f) > 5 else "")] = int(f[2])
    return rows


def forced(tuning):
    """{call: {algo, ...}} the tuning file names."""
    out = {}
    for e in yaml.safe_load(Path(tuning).read_text())["entries"]:
        out.setdefault(CALLS[e["op"]], set()).update(r["algo"] for r in e["ranges"])
    return out


def preload_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith(PREFIX)]


def check_exports(lib):
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    names = [l.split()[-1] for l in nm.splitlines() if l.strip()]
    others = [n for n in names if not n.startswith("MPI_")]
    if others:
        fail(f"exports more than MPI_ functions: {others[:10]}")
    want = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", *CALLS.values()}
    if set(names) != want:
        fail(f"exports {sorted(set(names))}, want {sorted(want)}")
    relocs = subprocess.run(["readelf", "-r", "-W", lib], capture_output=True, text=True, check=True).stdout
    own = sorted({n for n in want if re.search(rf"\s{n}(\s|@|$)", relocs)})
    if own:
        fail(f"calls its own wrappers (relocations naming {own}): an MPI_ call inside it recurses")
    print(f"exports: {len(names)} MPI_ functions, no call of its own")


def check_app(mpiexec, np, app, lib, tuning, d):
    out = Path(d) / f"app-np{np}.summary"
    p = run(mpiexec, np, [app], lib, {"COLLBENCH_TUNING": tuning, "COLLBENCH_PMPI_SUMMARY": str(out)})
    if p.returncode != 0 or "grid: OK" not in p.stdout:
        fail(f"np {np}: the app failed under the preload:\n{p.stdout}{p.stderr}")
        return
    if preload_lines(p.stderr):
        fail(f"np {np}: the preload said something with a good tuning file: {preload_lines(p.stderr)}")
    rows = summary(out)
    served = {}
    for (call, by, why), n in rows.items():
        if by != "library":
            served.setdefault(call, set()).add(by)
        if "re-entered" in why:
            fail(f"np {np}: {n} re-entered call(s) of {call}")
    for call, algos in forced(tuning).items():
        if not algos <= served.get(call, set()):
            fail(f"np {np}: {call}: the file names {sorted(algos)}, served {sorted(served.get(call, set()))}")
    fallbacks = {("MPI_Bcast", "datatype: several basic types"), ("MPI_Allreduce", "op: user-defined")}
    if np >= 2:
        fallbacks.add(("MPI_Allreduce", "an inter-communicator"))
    for call, why in fallbacks:
        if not any(c == call and by == "library" and w.startswith(why) for (c, by, w) in rows):
            fail(f"np {np}: no library row '{why}' for {call} in the summary:\n{out.read_text()}")
    print(f"app np {np}: OK, served {sum(n for (c, by, w), n in rows.items() if by != 'library')} call(s), "
          f"library {sum(n for (c, by, w), n in rows.items() if by == 'library')}")


def check_bad_input(mpiexec, app, lib, tuning, d):
    d = Path(d)
    not_yaml = d / "not-yaml.yaml"
    not_yaml.write_text("schema: collbench-tuning/1\nentries: [\n")
    unknown = d / "unknown-algo.yaml"
    text = Path(tuning).read_text()
    unknown.write_text(text.replace("algo: naive", "algo: warp_drive", 1))
    cases = [
        ("missing file", [app], str(d / "no-such-file.yaml"), "cannot read", True),
        ("not YAML", [app], str(not_yaml), "not YAML", True),
        ("unknown algorithm", [app], str(unknown), "'warp_drive'", False),
        ("MPI_THREAD_MULTIPLE", [app, "--multiple"], tuning, "above MPI_THREAD_FUNNELED", True),
    ]
    for name, args, file, says, all_library in cases:
        out = d / f"bad-{name.replace(' ', '_')}.summary"
        p = run(mpiexec, 2, args, lib, {"COLLBENCH_TUNING": file, "COLLBENCH_PMPI_SUMMARY": str(out)})
        lines = preload_lines(p.stderr)
        if p.returncode != 0 or "grid: OK" not in p.stdout:
            fail(f"{name}: the app failed:\n{p.stdout}{p.stderr}")
            continue
        if len(lines) != 1 or says not in lines[0]:
            fail(f"{name}: want one line saying '{says}', got {lines}")
        rows = summary(out)
        served = [k for k in rows if k[1] != "library"]
        if all_library and served:
            fail(f"{name}: served {served}, want every call the library's")
        if not all_library and not any(k[0] == "MPI_Bcast" and k[1] == "library" and "warp_drive" in k[2] for k in rows):
            fail(f"{name}: no library row for the unknown algorithm's range: {rows}")
        print(f"bad input, {name}: OK: {lines[0] if lines else ''}")


def check_harness(mpiexec, np, collbench, lib, tuning, d):
    out, json_file = Path(d) / "harness.summary", Path(d) / "harness.jsonl"
    json_file.unlink(missing_ok=True)
    p = run(mpiexec, np, [collbench, "--op", "all", "--algo", "library", "-b", "8", "-e", "256K", "-f", "8",
                          "-n", "3", "-w", "1", "--json", str(json_file)],
            lib, {"COLLBENCH_TUNING": tuning, "COLLBENCH_PMPI_SUMMARY": str(out)})
    if p.returncode != 0:
        fail(f"collbench under the preload failed:\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
        return
    try:  # the records against the schema (versions.mpi_preload included) and the contract
        collbench_check.check_file(str(json_file), 1, False)
    except collbench_check.CheckError as e:
        fail(f"harness: {e}")
    records = [json.loads(l) for l in json_file.read_text().splitlines()]
    run_rec = next(r for r in records if r["type"] == "run")
    preload = run_rec["versions"].get("mpi_preload")
    if not preload or Path(preload).name != Path(lib).name:
        fail(f"run record versions.mpi_preload is {preload!r}, want {lib}")
    results = [r for r in records if r["type"] == "result"]
    bad = [(r["op"], r["bytes"], r["wrong"], r["skipped"]) for r in results if r["wrong"] != 0 or r["skipped"]]
    ops = {r["op"] for r in results}
    if bad or len(ops) != len(CALLS):
        fail(f"harness: wrong or skipped points {bad}; ops measured {sorted(ops)}")
    rows = summary(out)
    served = {c for (c, by, w) in rows if by != "library"}
    if served != set(CALLS.values()):
        fail(f"harness: served {sorted(served)}, want every call")
    print(f"harness np {np}: OK, {len(results)} points verified, mpi_preload {preload}")


def check_raw(mpiexec, raw, lib, tuning, d):
    out = Path(d) / "raw.summary"
    p = run(mpiexec, 2, [raw, "--op", "allreduce,broadcast,allgather,reduce_scatter", "-b", "8", "-e", "1M", "-f", "8",
                         "-n", "20", "-w", "2"], lib, {"COLLBENCH_TUNING": tuning, "COLLBENCH_PMPI_SUMMARY": str(out)})
    if p.returncode != 0:
        fail(f"collbench_raw under the preload failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        return
    rows = summary(out)
    served = {c for (c, by, w) in rows if by != "library"}
    want = {"MPI_Allreduce", "MPI_Bcast", "MPI_Allgather", "MPI_Reduce_scatter_block"}
    if not want <= served:
        fail(f"raw: served {sorted(served)}, want {sorted(want)}")
    print(f"raw: OK, {len(p.stdout.splitlines())} points")


def main(argv):
    mode = argv[1]
    if mode == "exports":
        check_exports(argv[2])
    else:
        Path(argv[-1]).mkdir(parents=True, exist_ok=True)
        if mode == "app":
            check_app(argv[2], int(argv[3]), *argv[4:8])
        elif mode == "bad_input":
            check_bad_input(*argv[2:7])
        elif mode == "harness":
            check_harness(argv[2], int(argv[3]), *argv[4:8])
        elif mode == "raw":
            check_raw(*argv[2:7])
        else:
            sys.exit(f"unknown mode {mode}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
