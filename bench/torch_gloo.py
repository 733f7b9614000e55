#!/usr/bin/python3
"""PyTorch's own Gloo collectives, timed the way collbench times them: the reference side of
bench/torch_compare.py (issue 34, part 3).

Two (or --ranks) processes started by torch.multiprocessing.spawn, as the teaching material's
examples start them; dist.init_process_group("gloo") over TCP on 127.0.0.1; one thread per rank
(torch.set_num_threads(1), as torchrun sets OMP_NUM_THREADS=1). Per op and size: --warmup calls,
then --iters timed iterations, each: dist.barrier(), start, the call, stop — collbench's
`--sync barrier` per-iteration method; an iteration's time is the max over ranks (one
all_reduce(MAX) of every rank's times after the loop, outside the timing), and the record holds
p5/p50/p95 over iterations. Sizes are collbench's `bytes` (nccl-tests' size): all_gather's is the
whole gathered array, each rank contributing bytes / ranks. pingpong: rank 0 sends, rank 1
receives and sends back, back to back (as osu_latency and collbench's pingpong latency); the
record is half the round trip. barrier: dist.barrier() alone, PyTorch's per-call floor.

Writes one JSON line per (op, bytes) to --out: {"op", "bytes", "p5", "p50", "p95", "iters"} (µs).
Usage: torch_gloo.py --sizes 8,65536,... --ops allreduce,broadcast,allgather,pingpong,barrier
                     [--ranks 2] [--iters-small 300 --warmup-small 30 ...] --out FILE
"""
import argparse
import json
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def iters_for(nbytes, o):
    if nbytes <= 64 << 10:
        return o.iters_small, o.warmup_small
    if nbytes <= 1 << 20:
        return o.iters_mid, o.warmup_mid
    return o.iters_large, o.warmup_large


def percentile(sorted_vals, q):
    """Linear interpolation between closest ranks (numpy's default), as collbench's stats."""
    if len(sorted_vals) == 1:
        return sorted_vals[0]
    pos = q / 100 * (len(sorted_vals) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def one_op(op, nbytes, rank, n, o):
    count = max(1, nbytes // 4)
    if op == "allgather":
        count = max(1, nbytes // 4 // n)
    t = torch.ones(count, dtype=torch.float32)
    outs = [torch.empty(count, dtype=torch.float32) for _ in range(n)] if op == "allgather" else None

    def call():
        if op == "allreduce":
            dist.all_reduce(t)
        elif op == "broadcast":
            dist.broadcast(t, src=0)
        elif op == "allgather":
            dist.all_gather(outs, t)
        elif op == "barrier":
            dist.barrier()
        elif op == "pingpong":
            if rank == 0:
                dist.send(t, 1)
                dist.recv(t, 1)
            elif rank == 1:
                dist.recv(t, 0)
                dist.send(t, 0)

    iters, warmup = iters_for(nbytes, o)
    for _ in range(warmup):
        if op != "pingpong":
            dist.barrier()
        call()
    times = torch.zeros(iters, dtype=torch.float64)
    if op == "pingpong":  # back to back: each round trip starts when the last one ended
        dist.barrier()
        for i in range(iters):
            t0 = time.perf_counter()
            call()
            times[i] = (time.perf_counter() - t0) / 2
        if rank != 0:
            times.zero_()
    else:
        for i in range(iters):
            dist.barrier()
            t0 = time.perf_counter()
            call()
            times[i] = time.perf_counter() - t0
    dist.all_reduce(times, op=dist.ReduceOp.MAX)
    s = sorted((times * 1e6).tolist())
    return {"op": op, "bytes": nbytes, "p5": percentile(s, 5), "p50": percentile(s, 50), "p95": percentile(s, 95),
            "iters": iters}


def worker(rank, n, port, o):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    records = []
    for op in o.ops.split(","):
        for nbytes in [int(x) for x in o.sizes.split(",")]:
            if op == "barrier" and records and records[-1]["op"] == "barrier":
                continue  # one size is enough
            records.append(one_op(op, nbytes, rank, n, o))
    if rank == 0:
        with open(o.out, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", required=True)
    p.add_argument("--ops", default="allreduce,broadcast,allgather,pingpong,barrier")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--iters-small", type=int, default=300)
    p.add_argument("--warmup-small", type=int, default=30)
    p.add_argument("--iters-mid", type=int, default=100)
    p.add_argument("--warmup-mid", type=int, default=10)
    p.add_argument("--iters-large", type=int, default=20)
    p.add_argument("--warmup-large", type=int, default=5)
    p.add_argument("--out", required=True)
    o = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    mp.spawn(worker, args=(o.ranks, port, o), nprocs=o.ranks)


if __name__ == "__main__":
    main()
