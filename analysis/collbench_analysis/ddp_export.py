"""A PyTorch model's gradients as DDP sees them, for collbench's `--workload ddp` (collmodel).

Everything comes from PyTorch itself, in one process (a one-rank Gloo group on an in-memory
store: no port, no launcher):
- the parameter list is DDP's own (`_build_params_for_reducer`: requires_grad only, a shared
  parameter once, the ones named by `_set_params_and_buffers_to_ignore_for_model` dropped), each
  named by its first name in `named_parameters()`;
- the gradient-ready order is the one DDP's reducer recorded in real backward passes
  (`prev_iteration_grad_ready_order_indices`), and the buckets DDP rebuilt from it
  (`rebuilt_bucket_sizes`, `rebuilt_per_bucket_param_indices`) are kept beside it, so the files can
  be checked against DDP;
- with `profile_steps`, the compute of a plain (non-DDP) step: forward, optimizer and, per
  parameter, the backward time up to its gradient being ready (a tensor hook on each parameter:
  the moment DDP's reducer sees it), medians over the steps.

PyTorch is imported inside the functions: the rest of the analysis package never needs it.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

# torch dtypes collbench's model files accept (collectives/core/dtype.hpp).
_DTYPES = {"torch.float16": "float16", "torch.bfloat16": "bfloat16", "torch.float32": "float32",
           "torch.float64": "float64"}
# DDP logs these once its buckets are rebuilt (iteration 1) at sampled iterations (1-10, then every
# 100th): three iterations always reach one.
MIN_STEPS = 3


class ExportError(Exception):
    """A model, input or option collmodel cannot use: one line for the user."""


@dataclass
class DdpView:
    """What DDP built for one model: its parameter list and what its reducer logged."""
    names: list[str]
    shapes: list[list[int]]
    dtypes: list[str]
    ready_order: list[int]                 # parameter indices, gradient-ready order (DDP's)
    bucket_sizes: list[int]                # rebuilt_bucket_sizes, bytes
    bucket_params: list[list[int]]         # rebuilt_per_bucket_param_indices
    bucket_cap_bytes: int
    torch_version: str
    logged: dict[str, Any] = field(default_factory=dict)  # the logging fields read, as DDP gave them


def load_callable(spec: str) -> Callable[..., Any]:
    """MODULE:NAME (torchvision.models:resnet50) or FILE.py:NAME."""
    mod_name, sep, attr = spec.rpartition(":")
    if not sep or not mod_name or not attr:
        raise ExportError(f"'{spec}' is not MODULE:NAME or FILE.py:NAME")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_file():
                raise ExportError(f"no file {mod_name} (from '{spec}')")
            loader = importlib.util.spec_from_file_location(path.stem, path)
            assert loader is not None and loader.loader is not None
            module = importlib.util.module_from_spec(loader)
            sys.modules[path.stem] = module
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(mod_name)
    except ImportError as e:
        raise ExportError(f"cannot import {mod_name} (from '{spec}'): {e}") from e
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ExportError(f"{mod_name} has no callable {attr} (from '{spec}')")
    return fn


def input_maker(spec: str) -> Callable[[], Any]:
    """SHAPE[:DTYPE[:HIGH]] -> a function making that input: 2,3,64,64 (randn, float32) or
    8,128:long:30522 (randint below HIGH)."""
    parts = spec.split(":")
    try:
        shape = [int(d) for d in parts[0].split(",")]
    except ValueError:
        raise ExportError(f"input '{spec}': the shape must be comma-separated integers (e.g. 2,3,64,64)") from None
    if not shape or any(d <= 0 for d in shape) or len(parts) > 3:
        raise ExportError(f"input '{spec}' is not SHAPE[:DTYPE[:HIGH]] with positive dimensions")
    import torch

    dtype_name = parts[1] if len(parts) > 1 else "float32"
    dtype = getattr(torch, dtype_name, None)
    if not isinstance(dtype, torch.dtype):
        raise ExportError(f"input '{spec}': '{dtype_name}' is not a torch dtype")
    if dtype.is_floating_point:
        return lambda: torch.randn(*shape, dtype=dtype)
    if len(parts) < 3 or not parts[2].isdigit() or int(parts[2]) < 1:
        raise ExportError(f"input '{spec}': an integer input needs :HIGH (values drawn below it), e.g. 8,128:long:30522")
    high = int(parts[2])
    return lambda: torch.randint(0, high, tuple(shape), dtype=dtype)


def scalar_loss(out: Any):
    """The sum of every floating tensor in the output (a tensor, tuple, list or dict)."""
    import torch

    if isinstance(out, torch.Tensor):
        return out.float().sum() if out.is_floating_point() else None
    parts = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else []
    sums = [s for s in (scalar_loss(p) for p in parts) if s is not None]
    if not sums:
        raise ExportError("the model's output holds no floating-point tensor to take a loss from")
    return torch.stack(sums).sum()


def _call(model, x):
    return model(*x) if isinstance(x, tuple) else model(x)


def _ints(text: Any, sep: str = ",") -> list[int]:
    return [int(v) for v in str(text).split(sep) if v.strip()]


def ddp_view(model, make_input: Callable[[], Any], bucket_cap_mb: float = 25, ignore: list[str] | None = None,
             steps: int = MIN_STEPS, loss: Callable[[Any], Any] = scalar_loss) -> DdpView:
    """Wraps `model` in DDP on a one-rank Gloo group, runs `steps` training steps (SGD) and returns
    DDP's parameter list and what its reducer logged. The group is created and destroyed here."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    if steps < MIN_STEPS:
        raise ExportError(f"steps must be at least {MIN_STEPS}: DDP rebuilds its buckets at iteration 1 and logs them after")
    if dist.is_initialized():
        raise ExportError("a process group is already initialised in this process; collmodel makes its own")
    first_name = {}
    for name, p in model.named_parameters():
        first_name.setdefault(p, name)
    if ignore:
        unknown = sorted(set(ignore) - set(first_name.values()) - {n for n, _ in model.named_buffers()})
        if unknown:
            raise ExportError(f"--ignore names {', '.join(unknown)}: not parameters or buffers of the model")
        DDP._set_params_and_buffers_to_ignore_for_model(model, ignore)
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        ddp = DDP(model, bucket_cap_mb=bucket_cap_mb)
        params, sparse = ddp._build_params_for_reducer()
        if any(sparse):
            raise ExportError("the model has sparse gradients (an Embedding with sparse=True): DDP reduces those "
                              "in buckets of their own, which collbench does not model")
        dtypes = [str(p.dtype) for p in params]
        bad = sorted({d for d in dtypes if d not in _DTYPES})
        if bad:
            raise ExportError(f"parameter dtypes {', '.join(bad)}: collbench's model files take {', '.join(_DTYPES.values())}")
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
        for _ in range(steps):
            opt.zero_grad()
            loss(_call(ddp, make_input())).backward()
            opt.step()
        logged = ddp._get_ddp_logging_data()
    finally:
        dist.destroy_process_group()
    if not logged.get("has_rebuilt_buckets"):
        raise ExportError(f"DDP had not rebuilt its buckets after {steps} steps (did backward reach every parameter?)")
    fields = ("prev_iteration_grad_ready_order_indices", "rebuilt_bucket_sizes", "rebuilt_per_bucket_param_indices",
              "bucket_cap_bytes", "num_parameter_tensors", "total_parameter_size_bytes")
    view = DdpView(
        names=[first_name[p] for p in params],
        shapes=[list(p.shape) for p in params],
        dtypes=[_DTYPES[d] for d in dtypes],
        ready_order=_ints(logged["prev_iteration_grad_ready_order_indices"]),
        bucket_sizes=_ints(logged["rebuilt_bucket_sizes"]),
        bucket_params=[_ints(b, " ") for b in str(logged["rebuilt_per_bucket_param_indices"]).split(",")],
        bucket_cap_bytes=int(logged["bucket_cap_bytes"]),
        torch_version=torch.__version__,
        logged={k: logged.get(k) for k in fields})
    # DDP's own counts must agree with the list read here (a wrong private API would not).
    if int(logged["num_parameter_tensors"]) != len(params) or sorted(view.ready_order) != list(range(len(params))):
        raise ExportError(f"DDP logged {logged['num_parameter_tensors']} parameter tensors and a ready order of "
                          f"{len(view.ready_order)}, the list read has {len(params)}: this PyTorch ({torch.__version__}) "
                          "differs from 1.13's DDP")
    return view


def model_json(name: str, view: DdpView) -> dict[str, Any]:
    """collbench's --model file (harness/workload/model.hpp)."""
    return {"name": name, "params": [{"name": n, "shape": s, "dtype": d}
                                      for n, s, d in zip(view.names, view.shapes, view.dtypes)]}


def ddp_json(view: DdpView) -> dict[str, Any]:
    """What DDP built, to check collbench's buckets against (bytes and parameter indices)."""
    return {"torch": view.torch_version, "bucket_cap_bytes": view.bucket_cap_bytes,
            "rebuilt_bucket_sizes": view.bucket_sizes, "rebuilt_per_bucket_param_indices": view.bucket_params,
            "grad_ready_order": view.ready_order, "logged": view.logged}


@dataclass
class StepProfile:
    forward_ms: float
    optimizer_ms: float
    backward_ms: dict[str, float]  # per parameter name: backward time up to its gradient, ready order
    steps: int


def step_profile(model, make_input: Callable[[], Any], names: list[str], steps: int, warmup: int = 2,
                 loss: Callable[[Any], Any] = scalar_loss) -> StepProfile:
    """Times plain training steps (no DDP, SGD with momentum) of `model`: the medians over `steps`
    after `warmup`. A parameter's backward time is from the previous parameter's gradient being
    ready (the first: from backward's start) to its own; the time after the last one (autograd's
    end) is the last one's, so the times add up to the whole backward."""
    import torch

    by_name = dict(model.named_parameters())
    params = [by_name[n] for n in names]
    opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    stamps: dict[int, float] = {}

    def stamp(i: int):
        def hook(grad):  # returns None: the gradient is left as it is
            stamps.setdefault(i, time.perf_counter())
        return hook

    hooks = [p.register_hook(stamp(i)) for i, p in enumerate(params)]
    fwd, optim, per_param = [], [], [[] for _ in params]
    try:
        for step in range(warmup + steps):
            x = make_input()
            opt.zero_grad(set_to_none=True)
            stamps.clear()
            t0 = time.perf_counter()
            value = loss(_call(model, x))
            t1 = time.perf_counter()
            value.backward()
            t2 = time.perf_counter()
            opt.step()
            t3 = time.perf_counter()
            if len(stamps) != len(params):
                missing = [names[i] for i in range(len(params)) if i not in stamps]
                raise ExportError(f"backward produced no gradient for {len(missing)} parameters (e.g. {missing[0]}): "
                                  "DDP would need find_unused_parameters, which collbench does not model")
            if step < warmup:
                continue
            order = sorted(stamps, key=stamps.get)
            prev = t1
            for i in order:
                per_param[i].append((stamps[i] - prev) * 1e3)
                prev = stamps[i]
            per_param[order[-1]][-1] += (t2 - prev) * 1e3
            fwd.append((t1 - t0) * 1e3)
            optim.append((t3 - t2) * 1e3)
    finally:
        for h in hooks:
            h.remove()
    med = statistics.median
    ready = sorted(stamps, key=stamps.get)  # the last step's order
    return StepProfile(forward_ms=med(fwd), optimizer_ms=med(optim),
                       backward_ms={names[i]: round(med(per_param[i]), 6) for i in ready}, steps=steps)


def profile_yaml(p: StepProfile, source: str) -> str:
    """collbench's --compute-profile file (harness/workload/profile.hpp), keyed by parameter name."""
    lines = [f"# {source}: medians of {p.steps} plain training steps (no DDP), one process",
             f"forward_ms: {p.forward_ms:.6f}", f"optimizer_ms: {p.optimizer_ms:.6f}", "backward_ms:"]
    lines += [f"  {json.dumps(n)}: {ms:.6f}" for n, ms in p.backward_ms.items()]
    return "\n".join(lines) + "\n"
