"""The DDP section's tables: step sync per model, the report's answer, the modelled step by algorithm,
and PyTorch's measured DDP step against the model."""
from __future__ import annotations

import math
from typing import Sequence

from ..load import LIBRARY_ALGO, layout_sort_key
from ..tables import Table, fmt_num
from .model import compare, median_of, workload_overlap, workload_projection
from .naming import MIB, MODEL_LABEL, compute_note, model_summary, series_name, series_order, varying, workload_note
from .records import Measured, Workload, by_model, frame, latest


def _ms(us: float | None) -> str:
    return fmt_num(us / 1e3) if us is not None else "—"


def tables(workloads: Sequence[Workload]) -> list[Table]:
    """One table per model: layout, algorithm, buckets, grad MiB, step sync p50/p95, and the model columns.

    The exposed / projected / speed-up / efficiency columns are filled only where the record
    carries compute, and dropped when none does.
    """
    out: list[Table] = []
    for model, grp in by_model(latest(workloads)):
        fields = varying(grp)
        note = (f"{model_summary(grp)}. Step sync: every bucket all-reduced back to back, max over ranks, "
                "measured. Exposed comm, projected step, speed-up and efficiency: "
                f"{MODEL_LABEL} (overlap model, docs/ddp.md), not measurements; {compute_note(grp)}.")
        link = workload_note(grp)
        rows, classes = [], []
        for w in sorted(grp, key=lambda w: (layout_sort_key(w.layout), series_order((series_name(w, fields), w.algo)))):
            flags = []
            if w.wrong > 0:
                flags.append(f"WRONG RESULTS ({w.wrong})")
            if w.skipped:
                flags.append(f"skipped: {w.skip_reason or 'no reason given'}")
            row = [w.layout, series_name(w, fields), str(len(w.buckets)), f"{w.total_bytes / MIB:.4g}"]
            if w.measured:
                ov = workload_overlap(w)
                proj = workload_projection(w)
                row += [_ms(w.step.p50), _ms(w.step.p95 if w.step.p95 is not None else w.step.hi)]  # type: ignore[union-attr]
                row += ([_ms(ov.exposed_us), _ms(ov.step_us), f"{proj.speedup:.3g}×", f"{proj.efficiency:.0%}"]
                        if proj is not None else ["—"] * 4)
            else:
                row += ["—"] * 6
            rows.append(row + ["; ".join(flags) or "—"])
            classes.append("bad" if w.wrong > 0 else "")
        t = Table.of(f"DDP gradient synchronisation: {model}",
                     ["layout", "algorithm", "buckets", "grad MiB", "step sync p50 (ms)", "step sync p95 (ms)",
                      "exposed comm (ms)", "projected step (ms)", "speed-up", "efficiency", "note"], rows,
                     align="llrrrrrrrrl", note=note + (f" {link}." if link else ""), row_classes=classes)
        for header in ("exposed comm (ms)", "projected step (ms)", "speed-up", "efficiency", "note"):
            t.drop_blank_column(header)
        out.append(t)
    return out


def answer_table(workloads: Sequence[Workload]) -> Table:
    """The report's DDP answer: per model and layout, the fastest algorithm's step sync against the library's.

    Empty (no rows) without measured workload records. With compute, the fastest algorithm's
    projected step and speed-up (a model from measured communication times) are added.
    """
    ws = [w for w in latest(workloads) if w.measured]
    rows = []
    for model, grp in by_model(ws):
        fields = varying(grp)
        f = frame(grp).assign(p50=[w.step.p50 for w in grp])  # type: ignore[union-attr]
        for layout, g in sorted(f.groupby("layout", sort=False), key=lambda kv: layout_sort_key(kv[0])):
            best = g.loc[g["p50"].idxmin(), "record"]
            lib = g.loc[g["algo"] == LIBRARY_ALGO, "p50"]
            proj = workload_projection(best)
            ov = workload_overlap(best)
            rows.append([model, layout, series_name(best, fields), _ms(best.step.p50),  # type: ignore[union-attr]
                         _ms(lib.min()) if len(lib) else "—",
                         f"{lib.min() / best.step.p50:.2f}×" if len(lib) and best.step.p50 > 0 else "—",  # type: ignore[union-attr]
                         _ms(ov.step_us) if proj is not None else "—",
                         f"{proj.speedup:.3g}×" if proj is not None else "—"])
    t = Table.of("DDP step time", ["model", "layout", "fastest sync", "step sync p50 (ms)", "library sync p50 (ms)",
                                   "library ÷ fastest", "projected step (ms)", "projected speed-up"], rows,
                 align="lllrrrrr",
                 note="Step sync: every gradient bucket all-reduced back to back, max over ranks, measured. "
                      f"Projected step and speed-up (with compute): {MODEL_LABEL}, not measurements.")
    for header in ("library sync p50 (ms)", "library ÷ fastest", "projected step (ms)", "projected speed-up"):
        t.drop_blank_column(header)
    return t


MEASURED_TITLE = "DDP step: predicted vs measured (PyTorch DDP)"


def _pct(pred: float, meas: float) -> str:
    return f"{(pred / meas - 1):+.0%}" if meas > 0 and not math.isnan(pred) and not math.isnan(meas) else "—"


def _num(v: float) -> str:
    return "—" if v is None or math.isnan(v) else fmt_num(v)


def machine_note(measured: Sequence[Measured]) -> str:
    """The caveat, once: the CPUs the ranks shared, their threads, the CPU model, PyTorch's version."""
    parts = sorted({f"{m.online_cpus} online CPUs shared by the node's {m.ranks_per_node} ranks "
                    f"({m.threads_per_rank} compute thread{'s' * (m.threads_per_rank > 1)} + Gloo's worker each), "
                    f"{m.cpu_model or 'CPU unknown'}, PyTorch {m.torch}" for m in measured})
    return "Machine: " + "; ".join(parts) + "."


def measured_tables(measured: Sequence[Measured], workloads: Sequence[Workload]) -> list[Table]:
    """Predicted vs measured step and speed-up per model, then where the step's time goes.

    Empty without ``ddp_measured`` records. Measured: PyTorch's DDP (bench/ddp_torch.py), medians
    over repetitions of each repetition's p50. Predicted: the overlap model fed collbench's
    bucket times and compute profile (library algorithm: Gloo's, what DDP runs).
    """
    cs = compare(measured, workloads)
    if not cs:
        return []
    head, parts = [], []
    for c in sorted(cs, key=lambda c: (c.model, layout_sort_key(c.layout))):
        ov = [workload_overlap(w) for w in c.predicted]
        med = median_of
        step, pred = c.measured("step_ms"), c.step_ms
        lo, hi = min(m.step_ms for m in c.reps), max(m.step_ms for m in c.reps)
        head.append([c.model, c.layout, str(len(c.reps)), _num(step), f"{_num(lo)}–{_num(hi)}", _num(pred),
                     _pct(pred, step), _num(c.measured("single_ms")), _num(c.t1_ms),
                     f"{_num(c.measured('speedup'))}×", f"{_num(c.speedup)}×"])
        comp = [w.compute for w in c.predicted]
        profile_ms = med(x.forward_ms + x.backward_ms + x.optimizer_ms for x in comp)  # type: ignore[union-attr]
        parts.append([c.model, c.layout,
                      _num(c.measured("no_sync_ms")), _num(profile_ms),
                      _num(c.measured("noop_hook_ms") - c.measured("no_sync_ms")), _num(med(o.copy_us / 1e3 for o in ov)),
                      _num(c.measured("step_ms") - c.measured("noop_hook_ms")), _num(med(o.exposed_us / 1e3 for o in ov)),
                      _num(med(o.sync_us / 1e3 for o in ov)), _num(med(o.share for o in ov))])
    note = (f"Measured: PyTorch's own DDP step (bench/ddp_torch.py), median over repetitions of each one's p50, "
            "max over ranks; one process: the global batch without DDP. Predicted: the overlap model (docs/ddp.md) "
            "fed collbench's measured bucket all-reduce times (library algorithm, the runs measured beside it) and "
            f"the per-parameter compute profile. {machine_note(measured)}")
    t1 = Table.of(MEASURED_TITLE,
                  ["model", "layout", "reps", "measured step p50 (ms)", "range over reps (ms)", "predicted step (ms)",
                   "predicted ÷ measured − 1", "measured one process (ms)", "projected one process (ms)",
                   "measured speed-up", "projected speed-up"], head, align="llrrrrrrrrr", note=note)
    t2 = Table.of("DDP step: where the time goes, measured vs model",
                  ["model", "layout", "compute: no_sync (ms)", "compute: profile F+B+O (ms)",
                   "DDP copies: no-op hook − no_sync (ms)", "DDP copies: model (ms)",
                   "exposed sync: step − no-op hook (ms)", "exposed sync: model (ms)", "collbench sync p50 (ms)",
                   "overlap share φ"], parts, align="llrrrrrrrr",
                  note="Each measured part is a difference of PyTorch steps (synced, no-op communication hook, "
                       "no_sync), medians over repetitions; the model's from collbench's records. The no-op hook "
                       "minus no_sync also holds DDP's buffer broadcast (BatchNorm) and its bookkeeping.")
    return [t1, t2]


def algorithm_table(workloads: Sequence[Workload]) -> Table:
    """"Would my step be faster with another algorithm than the library's?": per model and layout, each
    algorithm's modelled step (overlap model, docs/ddp.md) and its ratio to the library's. Empty without
    compute or without a second algorithm."""
    ws = [w for w in latest(workloads) if w.measured and w.compute is not None]
    fields = varying(ws) if ws else []
    names = sorted({(series_name(w, fields), w.algo) for w in ws}, key=series_order)
    if len(names) < 2:
        return Table.of("DDP step by algorithm", ["model", "layout"])
    rows = []
    for model, grp in by_model(ws):
        for layout in sorted({w.layout for w in grp}, key=layout_sort_key):
            steps = {series_name(w, fields): workload_overlap(w).step_us for w in grp if w.layout == layout}
            lib = next((steps[n] for n, a in names if a == LIBRARY_ALGO and n in steps), None)
            best = min(steps, key=lambda n: steps[n])  # type: ignore[arg-type,return-value]
            cells = [(f"{_ms(steps[n])} ({steps[n] / lib:.2f})" if lib and n in steps and a != LIBRARY_ALGO  # type: ignore[operator]
                      else _ms(steps[n]) if n in steps else "—") for n, a in names]
            rows.append([model, layout, *cells, best])
    return Table.of("DDP step by algorithm", ["model", "layout", *(n for n, _ in names), "fastest step"], rows,
                    align="ll" + "r" * len(names) + "l",
                    note="Modelled step in ms (÷ the library's), from each algorithm's measured bucket all-reduce times "
                         f"and the record's compute: {MODEL_LABEL}. {workload_note(ws)}".rstrip() )
