#!/usr/bin/python3
"""PyTorch's own DDP step against collbench's DDP workload on the same model (issue 35, parts 2-3).

Per model: `analysis/collmodel` exports the parameter list, DDP's gradient-ready order and a
per-parameter compute profile (one process, one thread). Then, per repetition, alternating which
goes first (A B, B A, ...):
  A  PyTorch: two ranks (mp.spawn, Gloo, torch.set_num_threads(1) each) time a training step
     (zero_grad, forward, sum loss, backward, SGD with momentum: collmodel's profile step) three
     ways on the same model and batch: synced (DDP as is), with a no-op communication hook (the
     bucket's buffer returned at once: everything DDP does but the all-reduce) and under no_sync()
     (no all-reduce, no bucket copies); then one process (one thread) steps the global batch
     (world_size x the per-rank batch) without DDP. Steps 0 and 1 are discarded; a step's time is
     the max over ranks, each step starting after a barrier.
  B  collbench: `--backend gloo --spawn 2 --workload ddp --algo ALGOS --interleave` with those
     files and the profile (`--compute-profile`), the same bucket cap.
DDP's own timers (`_get_ddp_logging_data()`'s avg_*) are not used: sampled at some iterations and
averaged with the warm-up. It writes one `ddp_measured` record per model and repetition to DIR/ddp_measured.jsonl beside collbench's
own (results/README.md), so `analysis/collplot DIR` shows predicted against measured.
With --algos library,ring,rabenseifner collbench's own algorithms run interleaved beside Gloo's (part 3);
the modelled step per algorithm is the report's "DDP step by algorithm". Across emulated nodes, run
collbench itself through slurm/testbed/mpirun.sh (bench/README.md): PyTorch's side here is one node.

A benchmark, not a test: measure on an idle machine only (nothing else running).

Usage: bench/ddp_torch.py [--build DIR] [--models embedding,resnet50] [--reps 3] [--steps 8]
                          [--bucket-cap-mb 25] [--algos library] [--quick] [--out DIR] [--work DIR]
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "analysis"))

WORLD = 2
# name -> (collmodel MODULE:NAME or FILE.py:NAME, per-rank input SHAPE[:DTYPE[:HIGH]]).
MODELS = {
    "embedding": (os.path.join(HERE, "ddp_models.py") + ":EmbeddingTables", "2,8:long:200000"),
    "resnet50": ("torchvision.models:resnet50", "2,3,64,64"),
}
MODES = ("synced", "noop_hook", "no_sync")
DISCARD = 2  # steps 0 and 1: DDP rebuilds its buckets at step 1


def die(msg):
    sys.exit(f"ddp_torch: {msg}")


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def global_input(spec, world):
    """The per-rank input spec with its batch (first dimension) times world."""
    shape, _, rest = spec.partition(":")
    dims = shape.split(",")
    return ",".join([str(int(dims[0]) * world), *dims[1:]]) + (":" + rest if rest else "")


def stats_ms(values):
    v = sorted(values)
    q = statistics.quantiles(v, n=20, method="inclusive") if len(v) > 1 else [v[0]] * 19
    return {"p50": statistics.median(v), "p5": q[0], "p95": q[-1], "min": v[0], "max": v[-1], "n": len(v)}


# --------------------------------------------------------------------------- PyTorch side (workers)

def _build(spec, input_spec, seed=0):
    import torch
    from collbench_analysis import ddp_export as dx
    torch.manual_seed(seed)
    return dx.load_callable(spec)(), dx.input_maker(input_spec), dx.scalar_loss


def _step(model, opt, x, loss):
    opt.zero_grad(set_to_none=True)  # as collmodel's profile step
    loss(model(x)).backward()
    opt.step()


def _rank_main(rank, spec, input_spec, steps, cap_mb, port, out):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)

    def noop(_state, bucket):  # everything DDP does for a bucket except the all-reduce
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    times = {}
    for mode in MODES:  # one model per mode: a comm hook cannot be removed once registered
        model, make, loss = _build(spec, input_spec)
        ddp = DDP(model, bucket_cap_mb=cap_mb)
        if mode == "noop_hook":
            ddp.register_comm_hook(None, noop)
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-3, momentum=0.9)
        ts = []
        for _ in range(steps + DISCARD):
            x = make()
            dist.barrier()
            t0 = time.perf_counter()
            if mode == "no_sync":
                with ddp.no_sync():
                    _step(ddp, opt, x, loss)
            else:
                _step(ddp, opt, x, loss)
            ts.append((time.perf_counter() - t0) * 1e3)
        times[mode] = ts[DISCARD:]
        if mode == "synced":
            logged = ddp._get_ddp_logging_data()
            times["rebuilt_bucket_sizes"] = str(logged.get("rebuilt_bucket_sizes", ""))
        del ddp, model, opt
    every = [None] * WORLD
    dist.all_gather_object(every, times)
    if rank == 0:
        res = {m: [max(r[m][i] for r in every) for i in range(steps)] for m in MODES}
        res["rebuilt_bucket_sizes"] = times["rebuilt_bucket_sizes"]
        res["torch"] = torch.__version__
        with open(out, "w") as f:
            json.dump(res, f)
    dist.destroy_process_group()


def worker_ddp(spec, input_spec, steps, cap_mb, out):
    import socket
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_rank_main, args=(spec, input_spec, steps, cap_mb, port, out), nprocs=WORLD, join=True)


def worker_single(spec, input_spec, steps, out):
    import torch
    torch.set_num_threads(1)
    model, make, loss = _build(spec, input_spec)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    ts = []
    for _ in range(steps + DISCARD):
        x = make()
        t0 = time.perf_counter()
        _step(model, opt, x, loss)
        ts.append((time.perf_counter() - t0) * 1e3)
    with open(out, "w") as f:
        json.dump({"single": ts[DISCARD:], "torch": torch.__version__}, f)


# --------------------------------------------------------------------------- driver

def run(argv, label, timeout=1800):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        die(f"{label} failed (exit {p.returncode}): {' '.join(argv)}\n{p.stderr[-3000:]}")
    return p


def export(name, o, work):
    spec, inp = MODELS[name]
    prefix = os.path.join(work, name)
    run(["/usr/bin/python3", os.path.join(ROOT, "analysis", "collmodel"), spec, "--input", inp,
         "--bucket-cap-mb", str(o.bucket_cap_mb), "--profile-steps", str(o.profile_steps), "-o", prefix],
        f"collmodel {name}")
    return prefix


def torch_side(name, o, work):
    spec, inp = MODELS[name]
    me = os.path.abspath(__file__)
    ddp_out, single_out = os.path.join(work, f"{name}.ddp.out"), os.path.join(work, f"{name}.single.out")
    run(["/usr/bin/python3", me, "--worker", "ddp", "--spec", spec, "--input", inp, "--steps", str(o.steps),
         "--bucket-cap-mb", str(o.bucket_cap_mb), "--result", ddp_out], f"PyTorch DDP {name}")
    run(["/usr/bin/python3", me, "--worker", "single", "--spec", spec, "--input", global_input(inp, WORLD),
         "--steps", str(o.steps), "--result", single_out], f"PyTorch one process {name}")
    res = json.load(open(ddp_out))
    res.update(json.load(open(single_out)))
    return res


def collbench_side(name, prefix, o):
    argv = [os.path.join(o.build, "collbench"), "--spawn", str(WORLD), "--backend", "gloo", "--workload", "ddp",
            "--model", prefix + ".model.json", "--grad-order", prefix + ".grad-order.txt",
            "--compute-profile", prefix + ".profile.yaml", "--bucket-cap-mb", str(o.bucket_cap_mb),
            "--redop", "avg", "--algo", o.algos, "-n", str(o.cb_steps), "-w", "2", "--json", o.json]
    if "," in o.algos:
        argv.append("--interleave")
    before = sum(1 for _ in open(o.json)) if os.path.exists(o.json) else 0
    run(argv, f"collbench {name}")
    recs = [json.loads(line) for line in open(o.json).readlines()[before:] if line.strip()]
    work = [r for r in recs if r.get("type") == "workload"]
    if not work or any(r.get("wrong") for r in work):
        die(f"collbench {name}: no workload record or wrong results in {o.json}")
    return work


def measured_record(name, o, res, work, started):
    run_rec = work[0]
    step = stats_ms(res["synced"])
    single = stats_ms(res["single"])
    return {
        "type": "ddp_measured", "schema": "collbench/1", "model": run_rec["model"], "model_spec": MODELS[name][0],
        "input": MODELS[name][1], "world_size": WORLD, "nodes": 1, "ranks_per_node": WORLD, "backend": "gloo",
        "device": "cpu", "threads_per_rank": 1, "bucket_cap_mb": float(o.bucket_cap_mb),
        "rebuilt_bucket_sizes": [int(v) for v in res["rebuilt_bucket_sizes"].split(",") if v.strip()],
        "steps": o.steps, "discarded": DISCARD,
        "step_ms": step, "noop_hook_step_ms": stats_ms(res["noop_hook"]), "no_sync_step_ms": stats_ms(res["no_sync"]),
        "single_step_ms": single, "speedup": single["p50"] / step["p50"],
        "collbench_run_ids": sorted({r["run_id"] for r in work}),
        "torch": res["torch"], "cpu_model": cpu_model(), "online_cpus": os.cpu_count(),
        "start_time": started, "end_time": now(),
    }


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8, help="timed PyTorch steps per mode (after 2 discarded)")
    ap.add_argument("--cb-steps", type=int, default=10, help="collbench's timed steps (-n)")
    ap.add_argument("--profile-steps", type=int, default=5)
    ap.add_argument("--bucket-cap-mb", type=float, default=25.0)
    ap.add_argument("--algos", default="library", help="collbench's --algo list (part 3: library,ring,rabenseifner)")
    ap.add_argument("--quick", action="store_true", help="1 rep, 3 steps, 3 profile steps: a smoke run")
    ap.add_argument("--out", dest="outdir", default="results/local/ddp-torch",
                    help="folder: collbench's records go to results.jsonl, the ddp_measured records to "
                         "ddp_measured.jsonl (collbench accepts only its own record types in its file)")
    ap.add_argument("--work", help="keep collmodel's files here (default: a temporary folder)")
    ap.add_argument("--worker", choices=("ddp", "single"), help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    o = ap.parse_args()
    if o.worker == "ddp":
        return worker_ddp(o.spec, o.input, o.steps, o.bucket_cap_mb, o.result)
    if o.worker == "single":
        return worker_single(o.spec, o.input, o.steps, o.result)

    if o.quick:
        o.reps, o.steps, o.cb_steps, o.profile_steps = 1, 3, 3, 3
    names = [m for m in o.models.split(",") if m]
    bad = [m for m in names if m not in MODELS]
    if bad:
        die(f"unknown model {bad[0]!r} (known: {', '.join(MODELS)})")
    if not os.access(os.path.join(o.build, "collbench"), os.X_OK):
        die(f"no collbench binary in {o.build} (--build DIR)")
    if o.reps < 1 or o.steps < 1 or o.cb_steps < 1:
        die("--reps, --steps and --cb-steps must be >= 1")
    os.makedirs(o.outdir, exist_ok=True)
    o.json = os.path.join(o.outdir, "results.jsonl")
    measured = os.path.join(o.outdir, "ddp_measured.jsonl")
    work = o.work or tempfile.mkdtemp(prefix="ddp_torch.")
    os.makedirs(work, exist_ok=True)
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"ddp_torch: warning: load {load:.2f} (> 0.5): the machine is not idle", file=sys.stderr)
    for name in names:
        prefix = export(name, o, work)
        print(f"ddp_torch: {name}: exported to {prefix}.*", flush=True)
        for rep in range(o.reps):
            started = now()
            order = ("torch", "collbench") if rep % 2 == 0 else ("collbench", "torch")
            res = cb = None
            for side in order:
                if side == "torch":
                    res = torch_side(name, o, work)
                else:
                    cb = collbench_side(name, prefix, o)
            rec = measured_record(name, o, res, cb, started)
            with open(measured, "a") as f:
                f.write(json.dumps(rec) + "\n")
            lib = next((w for w in cb if w["algo"] == "library"), cb[0])
            print(f"ddp_torch: {name} rep {rep + 1}/{o.reps}: DDP step p50 {rec['step_ms']['p50']:.1f} ms, "
                  f"no-op hook {rec['noop_hook_step_ms']['p50']:.1f}, no_sync {rec['no_sync_step_ms']['p50']:.1f}, "
                  f"one process {rec['single_step_ms']['p50']:.1f} (speed-up {rec['speedup']:.2f}); "
                  f"collbench {lib['algo']} sync p50 {lib['step_us']['p50'] / 1e3:.1f} ms", flush=True)
    if not o.work:
        shutil.rmtree(work, ignore_errors=True)
    print(f"ddp_torch: wrote {o.json} and {measured}; report: analysis/collplot {o.outdir} -o DIR")


if __name__ == "__main__":
    main()
