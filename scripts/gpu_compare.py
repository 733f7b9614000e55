#!/usr/bin/env python3
"""The GPU check's two comparisons (scripts/gpu-check.sh), stdlib only.

  gpu_compare.py RAW.jsonl COLLBENCH.jsonl [--out FILE] [--min-bytes N] [--tolerance 0.03]
      collbench's p50 (result records, algo library, backend nccl) against the raw ncclAllReduce
      loop's p50 (bench/raw_nccl.cpp) per size, over every launch in the files (the check
      alternates them): the ratio of the medians, "within" when <= 1 + tolerance, else "within
      spread" when the two tools' launch ranges overlap (a launch-bound op moves more than the
      tolerance between launches), judged at sizes >= --min-bytes (default 1 MiB). Exit 1 when
      one is "NOT within".
  gpu_compare.py --benchmark BENCH.json [--out FILE.jsonl] [--target 0.8]
      Google Benchmark JSON of bench_reduce_device -> JSON Lines (one per benchmark), and the
      verdict at 256 MiB for float32/bfloat16 sum: of_memcpy >= target. Exit 1 when not met.
"""
import argparse
import json
import statistics
import sys


def p50s(path, keep):
    """Per size, every record's p50 (one per launch: the GPU check alternates the tools)."""
    out = {}
    for line in open(path):
        r = json.loads(line)
        got = keep(r)
        if got is not None:
            out.setdefault(r["bytes"], []).append(got)
    return out


def compare_raw(raw_path, cb_path, min_bytes, tolerance):
    raw = p50s(raw_path, lambda r: r["p50_us"] if r.get("type") == "raw" else None)
    cb = p50s(cb_path, lambda r: r["time_us"]["p50"]
              if r.get("type") == "result" and r.get("algo") == "library" and r.get("time_us") else None)
    lines, missed = [], []
    lines.append(f"{'bytes':>12} {'raw_us median (min-max)':>26} {'collbench_us median (min-max)':>31} {'ratio':>7}  "
                 f"verdict (<= {1 + tolerance:.2f} at >= {min_bytes} B, else within spread)")
    for b in sorted(set(raw) & set(cb)):
        r, c = raw[b], cb[b]
        ratio = statistics.median(c) / statistics.median(r) if statistics.median(r) > 0 else float("inf")
        # A launch-bound op (a few us) moves more between launches than the tolerance: then the
        # two tools agree when their launch ranges overlap, as bench/raw_compare.sh judges.
        overlap = min(c) <= max(r) and min(r) <= max(c)
        if b < min_bytes:
            verdict = "(not judged)"
        elif ratio <= 1 + tolerance:
            verdict = "within"
        elif overlap and len(r) > 1 and len(c) > 1:
            verdict = "within spread"
        else:
            verdict = "NOT within"
            missed.append(str(b))
        cell = lambda v: f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})"
        lines.append(f"{b:>12} {cell(r):>26} {cell(c):>31} {ratio:>7.3f}  {verdict}")
    if missed:  # last, so that gpu-check.sh's step detail (the last line) names them
        lines.append(f"NOT within at {', '.join(missed)} B")
    if not set(raw) & set(cb):
        lines.append("no size measured by both")
        return lines, False
    return lines, not missed


def convert_benchmark(path, target):
    data = json.load(open(path))
    rows, lines, ok, seen = [], [], True, False
    for b in data.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        size = next((int(p) for p in name.split("/") if p.isdigit()), None)  # ".../268435456/manual_time"
        row = {"type": "bench", "name": b["name"], "bytes": size, "real_time": b.get("real_time"),
               "time_unit": b.get("time_unit"), "moved_Bps": b.get("moved_Bps"), "of_memcpy": b.get("of_memcpy"),
               "device": data.get("context", {}).get("host_name")}
        rows.append(row)
        for dt in ("float32", "bfloat16"):
            if name.startswith(f"device_reduce/{dt}/sum/") and size == 256 << 20 and row["of_memcpy"] is not None:
                seen = True
                met = row["of_memcpy"] >= target
                ok &= met
                lines.append(f"{dt} sum 256 MiB: {row['of_memcpy']:.3f} of device memcpy's moved bytes/s "
                             f"(target {target}): {'met' if met else 'NOT met'}")
    if not seen:
        lines.append("no 256 MiB float32/bfloat16 sum row")
        ok = False
    return rows, lines, ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--benchmark")
    ap.add_argument("--out")
    ap.add_argument("--min-bytes", type=int, default=1 << 20)
    ap.add_argument("--tolerance", type=float, default=0.03)
    ap.add_argument("--target", type=float, default=0.8)
    a = ap.parse_args(argv)
    if a.benchmark:
        rows, lines, ok = convert_benchmark(a.benchmark, a.target)
        if a.out:
            with open(a.out, "w") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
    elif len(a.files) == 2:
        lines, ok = compare_raw(a.files[0], a.files[1], a.min_bytes, a.tolerance)
        if a.out:
            with open(a.out, "w") as f:
                f.write("\n".join(lines) + "\n")
    else:
        print("gpu_compare.py: error: give RAW.jsonl COLLBENCH.jsonl, or --benchmark FILE", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
