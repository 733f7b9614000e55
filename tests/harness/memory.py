"""Peak memory end to end (ctest harness.memory). Stdlib only.

    memory.py COLLBENCH MPIEXEC WORKDIR [BYTES]

For every op, `mpirun -np 2 collbench --op OP --algo all -b BYTES -e BYTES -n 1 -w 1 --dtype int8`
(timed hot-cache and verified) must peak at most 3x the largest buffer per rank above the
process's baseline: the `end` record's peak_rss_bytes (max over ranks of VmHWM) minus the peak
of one command of every op at 8 bytes (the binary, Open MPI and the registry: ~40 MB here), with
SLACK for allocator and page-granularity noise. The anchors need 3x too (nccl-tests: send,
recv, expected); collbench has no expected array, so the third buffer's worth is the room for
an algorithm's scratch or the MPI library's own (harness/runtime/memcheck.cpp).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402
from launcher import mpirun  # noqa: E402

OPS = ("broadcast", "reduce", "allreduce", "gather", "allgather", "scatter", "reduce_scatter", "alltoall")
SLACK = 8 << 20  # a quarter of the default size's buffer: allocator and page-granularity noise


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def peak(collbench: str, mpiexec: str, out: Path, op: str, size: int) -> int:
    cmd = mpirun(mpiexec, 2, [collbench, "--op", op, "--algo", "all", "-b", str(size), "-e", str(size), "-n", "1",
                              "-w", "1", "--dtype", "int8", "--json", str(out), "--overwrite", "--quiet"])
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        print(p.stderr[-3000:], file=sys.stderr)
        fail(f"{op} at {size} B: exit {p.returncode}")
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    results = [r for r in recs if r["type"] == "result"]
    if not results or any(r["wrong"] or (r["skipped"] and not cc.skipped_as_expected(r)) for r in results):
        fail(f"{op} at {size} B: every algorithm must run and verify: {results}")
    return recs[-1]["peak_rss_bytes"]


def main(collbench: str, mpiexec: str, workdir: str, size: int = 32 << 20) -> None:
    # 32 MiB: every op and algorithm in 42 s alone on the 2-vCPU Xeon (64 MiB: 66 s, 78 s of CI's
    # suite, both cores); the worst op, allreduce, peaks at 2.70x, and a buffer's worth too many
    # (32 MiB) is four times the slack.
    d = Path(workdir)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    worst = []
    # One baseline for all: at 8 bytes an op's buffers are nothing beside what every run holds.
    base = peak(collbench, mpiexec, d / "baseline.jsonl", ",".join(OPS), 8)
    for op in OPS:
        big = peak(collbench, mpiexec, d / f"{op}.jsonl", op, size)
        largest = size  # every op's largest buffer per rank is the whole nccl-tests size
        ratio = (big - base) / largest
        print(f"{op}: peak {big >> 20} MiB, baseline {base >> 20} MiB: {ratio:.2f}x the largest buffer", flush=True)
        if big - base > 3 * largest + SLACK:
            worst.append(f"{op} {ratio:.2f}x")
    if worst:
        fail(f"peak resident memory above 3x the largest buffer: {', '.join(worst)}")
    print("memory: OK")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:4], *(int(a) for a in sys.argv[4:]))
