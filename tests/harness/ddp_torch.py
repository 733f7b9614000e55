#!/usr/bin/env python3
"""collbench's DDP buckets against PyTorch DDP's own, byte for byte and index for index (exit 77 =
skipped: PyTorch or torchvision missing).

    ddp_torch.py COLLBENCH COLLMODEL WORKDIR

DDP (PyTorch 1.13) buckets every parameter together at iteration 0 and rebuilds its buckets at
iteration 1 from the gradient-ready order it recorded; what it logs then
(`rebuilt_bucket_sizes`, `rebuilt_per_bucket_param_indices`) is what collbench must equal.
collmodel (analysis/collmodel) runs DDP in one process and exports its parameter list, that order
and those buckets; collbench (`--backend thread --ranks 1`: no launcher) builds its own from the
files and its `workload` record is compared with DDP's:
1. torchvision's resnet50, real training steps (64x64 inputs), through the collmodel command line
   with a compute profile: collbench's built-in `resnet50` with DDP's order equals DDP's buckets
   (bytes and parameter indices; the order file names every parameter, so the built-in's names
   are torchvision's); the exported model file gives the same; the built-in default order
   (reverse registration) gives DDP's bucket bytes; the profile is accepted and covers backward;
2. torchvision's vit_b_16 in this process, DDP driven by a cheap synthetic backward (a ViT-B/16
   step at 224x224 takes ~45 s here; the buckets depend only on the parameter list and the order
   DDP records, whatever produced it): the built-in `vit-b16` with that order equals DDP's buckets;
3. a model collbench does not ship (ddp_models.TiedNet: a tied weight, a frozen layer, ignored
   parameters, float64 beside float32, one parameter over the first bucket's cap) through the command line with
   --ignore and a 4 MB cap: the exported list is DDP's (shared once, frozen and ignored dropped),
   and collbench's buckets equal DDP's;
4. collmodel's bad input: one line, exit 2.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import collbench_check as cc  # noqa: E402

PYTHON = "/usr/bin/python3"


class Failed(Exception):
    pass


def run(cmd: list[str], what: str, expect_rc: int = 0) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if p.returncode != expect_rc:
        raise Failed(f"{what}: exit {p.returncode} (expected {expect_rc}): {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p


def workload(collbench: str, work: Path, name: str, args: list[str]) -> dict:
    """collbench's workload record for ARGS (one rank, one untimed-verification-free step)."""
    out = work / f"{name}.jsonl"
    out.unlink(missing_ok=True)
    run([collbench, "--backend", "thread", "--ranks", "1", "--workload", "ddp", "--algo", "ring", "-n", "1", "-w", "0",
         "-c", "0", "--quiet", "--json", str(out), *args], f"collbench {name}")
    cc.check_file(str(out))
    (rec,) = cc.workload_records(str(out))
    return rec


def buckets_of(rec: dict) -> tuple[list[int], list[list[int]]]:
    return [b["bytes"] for b in rec["buckets"]], [b["params"] for b in rec["buckets"]]


def expect_ddp(what: str, rec: dict, ddp: dict, indices: bool = True) -> None:
    ours_bytes, ours_params = buckets_of(rec)
    if ours_bytes != ddp["rebuilt_bucket_sizes"]:
        raise Failed(f"{what}: collbench's bucket bytes {ours_bytes} != DDP's {ddp['rebuilt_bucket_sizes']}")
    if indices and ours_params != ddp["rebuilt_per_bucket_param_indices"]:
        first = next(k for k, (a, b) in enumerate(zip(ours_params, ddp["rebuilt_per_bucket_param_indices"])) if a != b)
        raise Failed(f"{what}: bucket {first}'s parameter indices differ: collbench {ours_params[first]}, "
                     f"DDP {ddp['rebuilt_per_bucket_param_indices'][first]}")
    print(f"ddp_torch: {what}: {len(ours_bytes)} buckets equal to DDP's ({', '.join(map(str, ours_bytes))} B)"
          + (", parameter indices too" if indices else ""))


def check_resnet50(collbench: str, collmodel: str, work: Path) -> None:
    prefix = work / "resnet50"
    run([PYTHON, collmodel, "torchvision.models:resnet50", "--input", "1,3,64,64", "--profile-steps", "1",
         "-o", str(prefix)], "collmodel resnet50")
    ddp = json.loads(Path(f"{prefix}.ddp.json").read_text())
    order, profile = f"{prefix}.grad-order.txt", f"{prefix}.profile.yaml"
    builtin = workload(collbench, work, "resnet50-builtin", ["--model", "resnet50", "--grad-order", order,
                                                           "--compute-profile", profile])
    expect_ddp("resnet50 (built-in, DDP's order)", builtin, ddp)
    exported = workload(collbench, work, "resnet50-file", ["--model", f"{prefix}.model.json", "--grad-order", order])
    if (buckets_of(exported), exported["param_count"], exported["param_tensors"]) != (
            buckets_of(builtin), builtin["param_count"], builtin["param_tensors"]):
        raise Failed("resnet50: the exported model file's buckets or counts differ from the built-in's")
    default = workload(collbench, work, "resnet50-default", ["--model", "resnet50"])
    expect_ddp("resnet50 (built-in, default order)", default, ddp, indices=False)
    compute = builtin["compute"]
    if compute["source"] != f"profile:{profile}" or compute["forward_ms"] <= 0 or \
            abs(sum(compute["bucket_backward_ms"]) - compute["backward_ms"]) > 1e-3 * compute["backward_ms"]:
        raise Failed(f"resnet50: the exported profile gave compute {compute}")
    print(f"ddp_torch: resnet50 profile: forward {compute['forward_ms']:.0f} ms, backward {compute['backward_ms']:.0f} ms "
          f"over {len(compute['bucket_backward_ms'])} buckets")


def check_vit(collbench: str, work: Path) -> None:
    import torch
    import torchvision

    sys.path.insert(0, str(HERE.parents[1] / "analysis"))
    from collbench_analysis import ddp_export as dx

    torch.set_num_threads(1)  # as collmodel: one core, beside other tests
    model = torchvision.models.vit_b_16()
    params = list(model.parameters())
    # Every parameter in one cheap graph: DDP records the order autograd produces their gradients.
    model.forward = lambda x: torch.stack([p.sum() for p in params]).sum() + x.sum()
    view = dx.ddp_view(model, lambda: torch.zeros(1))
    order = work / "vit.grad-order.txt"
    order.write_text("".join(view.names[i] + "\n" for i in view.ready_order))
    expect_ddp("vit_b_16 (built-in vit-b16, DDP's order)",
               workload(collbench, work, "vit", ["--model", "vit-b16", "--grad-order", str(order)]), dx.ddp_json(view))


def check_custom(collbench: str, collmodel: str, work: Path) -> None:
    prefix = work / "tied"
    run([PYTHON, collmodel, f"{HERE / 'ddp_models.py'}:TiedNet", "--input-fn", f"{HERE / 'ddp_models.py'}:tokens", "--ignore", "skip.weight,skip.bias", "--bucket-cap-mb", "4",
         "-o", str(prefix)], "collmodel TiedNet")
    model = json.loads(Path(f"{prefix}.model.json").read_text())
    names = [p["name"] for p in model["params"]]
    if "head.weight" in names or "embed.weight" not in names or any(n.startswith(("frozen.", "skip.")) for n in names):
        raise Failed(f"TiedNet: the exported list is not DDP's (tied once, frozen and ignored dropped): {names}")
    if {p["dtype"] for p in model["params"]} != {"float32", "float64"}:
        raise Failed(f"TiedNet: dtypes {sorted({p['dtype'] for p in model['params']})}, expected float32 and float64")
    ddp = json.loads(Path(f"{prefix}.ddp.json").read_text())
    expect_ddp("TiedNet (exported, 4 MB cap)", workload(collbench, work, "tied", [
        "--model", f"{prefix}.model.json", "--grad-order", f"{prefix}.grad-order.txt", "--bucket-cap-mb", "4"]), ddp)


def check_bad_input(collmodel: str, work: Path) -> None:
    cases = [(["no.such.module:f", "--input", "1"], "cannot import no.such.module"),
             (["torchvision.models:resnet50", "--input", "1,x"], "comma-separated integers"),
             (["torchvision.models:resnet50"], "give the example input"),
             (["torchvision.models:resnet50", "--input", "1,3,64,64", "--ignore", "fc.nope"], "fc.nope"),
             (["torchvision.models:resnet50", "--input", "1,3,64,64", "--steps", "2"], "at least 3"),
             (["torchvision.models:resnet50", "--input", "1,3,64,64", "--kwargs", '{"nope": 1}'], "unexpected keyword")]
    for args, says in cases:
        p = run([PYTHON, collmodel, *args, "-o", str(work / "bad")], f"collmodel {' '.join(args)}", expect_rc=2)
        lines = p.stderr.strip().splitlines()
        if len(lines) != 1 or says not in lines[0] or not lines[0].startswith("collmodel: error: "):
            raise Failed(f"collmodel {' '.join(args)}: expected one line saying '{says}', got {p.stderr!r}")
    if list(work.glob("bad*")):
        raise Failed("collmodel wrote files for bad input")
    print(f"ddp_torch: collmodel refused {len(cases)} bad inputs in one line each")


def main(argv: list[str]) -> int:
    collbench, collmodel, workdir = argv
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"SKIP: PyTorch/torchvision not installed ({e}); scripts/deps.sh installs python3-torch and "
              "python3-torchvision (the bucket rule alone is checked by test_buckets.cpp)")
        return 77
    work = Path(workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        check_bad_input(collmodel, work)
        check_resnet50(collbench, collmodel, work)
        check_vit(collbench, work)
        check_custom(collbench, collmodel, work)
    except (Failed, cc.CheckError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print("ddp_torch: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
