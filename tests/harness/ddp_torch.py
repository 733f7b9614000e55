#!/usr/bin/env python3
"""collbench's DDP buckets against PyTorch's own, where PyTorch is installed (exit 77 = skipped).

    ddp_torch.py COLLBENCH MPIEXEC WORKDIR

Builds torchvision's resnet50 in DistributedDataParallel (one process, gloo, bucket_cap_mb 25),
runs two training steps so DDP rebuilds its buckets in gradient-ready order, and compares the
bucket sizes DDP logs (`_get_ddp_logging_data()["bucket_sizes"]`) with the `buckets` of
collbench's `--workload ddp --model resnet50` record, in order, byte for byte.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collbench_check as cc  # noqa: E402


def ddp_bucket_sizes() -> list[int]:
    import torch
    import torch.distributed as dist
    import torchvision

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        model = torchvision.models.resnet50()
        ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        for _ in range(2):  # the first backward records the ready order; buckets are rebuilt after it
            opt.zero_grad()
            ddp(torch.randn(2, 3, 64, 64)).sum().backward()
            opt.step()
        sizes = ddp._get_ddp_logging_data()["bucket_sizes"]
        return [int(s) for s in str(sizes).split(",") if s.strip()]
    finally:
        dist.destroy_process_group()


def main(argv: list[str]) -> int:
    collbench, mpiexec, workdir = argv
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"SKIP: PyTorch/torchvision not installed ({e}); the bucket rule is checked by test_buckets.cpp")
        return 77
    theirs = ddp_bucket_sizes()
    out = Path(workdir) / "torch.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    p = subprocess.run([mpiexec, "-np", "1", collbench, "--workload", "ddp", "--model", "resnet50", "-n", "1", "-w", "0",
                        "-c", "0", "--quiet", "--json", str(out)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        return 1
    (w,) = cc.workload_records(str(out))
    ours = [b["bytes"] for b in w["buckets"]]
    if ours != theirs:
        print(f"FAIL: collbench buckets {ours} != DDP's {theirs}", file=sys.stderr)
        return 1
    print(f"ddp_torch: OK: {len(ours)} buckets equal to DDP's: {ours}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
