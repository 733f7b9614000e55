#!/usr/bin/python3
"""Smoke test of bench/raw_compare.py (issue 14): `--quick` runs collbench and collbench_raw
end to end under mpirun and prints a ratio table. Asserts on structure only (never on speed):
exit status 0, one row per comparison x op x size with numeric p50s and ratios, the commands
of both tools, and the --json-out rows; then `--aa` (the raw reference on both sides).

Usage: raw_compare_smoke.py RAW_COMPARE_PY COLLBENCH COLLBENCH_RAW MPIRUN WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys


def main():
    script, collbench, raw, mpirun, work = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out_json = os.path.join(work, "rows.json")
    cmd = [sys.executable, script, "--collbench", collbench, "--raw", raw, "--mpirun", mpirun, "--quick",
           "--keep", os.path.join(work, "jsonl"), "--json-out", out_json]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    print(p.stdout)
    print(p.stderr, file=sys.stderr)
    assert p.returncode == 0, f"raw_compare.py exited {p.returncode}"

    lines = p.stdout.splitlines()
    assert lines and lines[0].startswith("comparison | op"), "no table header"
    num = r"\d+\.\d+ \(\d+\.\d+-\d+\.\d+\)"
    expected = {(g, op, size) for size in ("8 B", "64 KiB")
                for g, op in [("batch", o) for o in ("allreduce", "broadcast", "allgather", "reduce_scatter")]
                + [("per_iter", "allreduce"), ("latency", "pingpong"), ("bw", "pingpong")]}
    seen = set()
    for line in lines[2:]:
        if not line.strip():
            break
        cells = [c.strip() for c in line.split("|")]
        assert len(cells) == 9, f"row with {len(cells)} cells: {line}"
        g, op, size, cb, rw, ratio, _ci, target, verdict = cells
        assert re.fullmatch(num, cb), f"collbench p50 not 'median (min-max)': {line}"
        assert re.match(num, rw), f"raw p50 not 'median (min-max)': {line}"
        assert re.fullmatch(num, ratio), f"ratio not 'median (min-max)': {line}"
        assert verdict, f"no verdict: {line}"
        if size == "8 B":
            assert target.startswith("within "), f"8 B row without a target: {line}"
        seen.add((g, op, size))
    assert seen == expected, f"rows differ: missing {sorted(expected - seen)}, extra {sorted(seen - expected)}"
    text = p.stdout
    assert "Commands" in text and text.count("collbench_raw") >= 4, "raw commands not printed"
    assert re.search(r"(mpirun|mpiexec)(\.\w+)? -np 2 (--[\w-]+ )*\S*collbench --op allreduce,broadcast,allgather,reduce_scatter "
                     r"--algo library --batch", text), "collbench batch command not printed"

    with open(out_json) as f:
        data = json.load(f)
    assert len(data["rows"]) == len(expected), "--json-out rows"
    for r in data["rows"]:
        assert len(r["ratios"]) == 1 and r["ratios"][0] > 0, r
        assert r["collbench_p50_us"][0] > 0 and r["raw_p50_us"][0] > 0, r
    # The raw reference's own records: one per (op, method, bytes), p50 and the per-sample values.
    raw_files = [f for f in os.listdir(os.path.join(work, "jsonl")) if "_raw_" in f]
    assert raw_files, "no raw JSON Lines kept"
    for name in raw_files:
        with open(os.path.join(work, "jsonl", name)) as f:
            for line in f:
                r = json.loads(line)
                assert r["type"] == "raw" and r["samples"] == len(r["samples_us"]) >= 1, r
                assert r["method"] in ("batch", "per_call", "barrier", "clock", "latency", "bw"), r
                if r["method"] == "clock":  # late iterations dropped; the window used is recorded
                    assert 1 <= r["samples"] <= r["iters"] and r["window_us"] >= 3, r
                assert r["p50_us"] > 0 and r["bytes"] in (8, 65536), r
    # --aa: the raw reference on both sides (the noise floor), said so under the table.
    cmd = [sys.executable, script, "--collbench", collbench, "--raw", raw, "--mpirun", mpirun, "--quick", "--aa",
           "--only", "batch,latency"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    print(p.stdout)
    assert p.returncode == 0, f"raw_compare.py --aa exited {p.returncode}: {p.stderr}"
    assert "--aa: side A is the raw reference itself" in p.stdout, "--aa not said"
    rows = [l for l in p.stdout.splitlines()[2:] if l.startswith(("batch ", "latency "))]
    assert len(rows) == 2 * 5, f"--aa rows: {rows}"
    assert not re.search(r"\S*collbench --op", p.stdout.split("Commands")[1]), "--aa ran collbench"
    print("raw_compare smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
