#!/usr/bin/env python3
"""The GPU check's two comparisons (scripts/gpu-check.sh), stdlib only.

  gpu_compare.py RAW.jsonl COLLBENCH.jsonl [--out FILE] [--min-bytes N] [--tolerance 0.03]
      collbench's p50 per op (result records, algo library, backend nccl) over the raw
      ncclAllReduce loop's p50 (bench/raw_nccl.cpp) per size; "within" when the ratio is
      <= 1 + tolerance, judged at sizes >= --min-bytes (default 1 MiB). Exit 1 when one is not.
  gpu_compare.py --benchmark BENCH.json [--out FILE.jsonl] [--target 0.8]
      Google Benchmark JSON of bench_reduce_device -> JSON Lines (one per benchmark), and the
      verdict at 256 MiB for float32/bfloat16 sum: of_memcpy >= target. Exit 1 when not met.
"""
import argparse
import json
import sys


def compare_raw(raw_path, cb_path, min_bytes, tolerance):
    raw = {}
    for line in open(raw_path):
        r = json.loads(line)
        if r.get("type") == "raw":
            raw[r["bytes"]] = r["p50_us"]
    cb = {}
    for line in open(cb_path):
        r = json.loads(line)
        if r.get("type") == "result" and r.get("algo") == "library" and r.get("time_us"):
            cb[r["bytes"]] = r["time_us"]["p50"]
    lines, ok = [], True
    lines.append(f"{'bytes':>12} {'raw_us':>10} {'collbench_us':>13} {'ratio':>7}  verdict (<= {1 + tolerance:.2f} at >= {min_bytes} B)")
    for b in sorted(set(raw) & set(cb)):
        ratio = cb[b] / raw[b] if raw[b] > 0 else float("inf")
        judged = b >= min_bytes
        verdict = ("within" if ratio <= 1 + tolerance else "NOT within") if judged else "(not judged)"
        ok &= not judged or ratio <= 1 + tolerance
        lines.append(f"{b:>12} {raw[b]:>10.3f} {cb[b]:>13.3f} {ratio:>7.3f}  {verdict}")
    if not set(raw) & set(cb):
        lines.append("no size measured by both")
        ok = False
    return lines, ok


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
