"""The runs and what went wrong in them: skipped points and verification failures, loaded machines,
every run's metadata."""
from __future__ import annotations

import pandas as pd

from ..load import Dataset, layout_sort_key
from ..model import series_of
from ..points import size_cells
from ..tables import BLANK, Table


PROBLEMS_TITLE = "Skipped points and verification failures"


def problems_table(ds: Dataset) -> Table:
    """Skipped points and verification failures: the things a reader must not miss (wrong results first)."""
    r = ds.results.assign(series=series_of(ds.results))
    keys = ["op", "series", "layout"]
    bad = r[r["wrong"] > 0].groupby(keys, sort=False).agg(
        points=("wrong", "size"), wrong=("wrong", "sum"),
        sizes=("bytes", lambda b: ", ".join(size_cells(sorted(set(b))[:6])))).reset_index()
    skipped = r[r["skipped"]].groupby(keys, sort=False).agg(
        points=("skipped", "size"),
        reasons=("skip_reason", lambda s: "; ".join(sorted(set(s.fillna("no reason given")))))).reset_index()
    frame = pd.concat([
        pd.DataFrame({"op": bad["op"], "algorithm": bad["series"], "layout": bad["layout"], "what": "WRONG RESULTS",
                      "points": bad["points"].astype(str),
                      "detail": [f"{w} wrong elements at {s}" for w, s in zip(bad["wrong"], bad["sizes"])]}),
        pd.DataFrame({"op": skipped["op"], "algorithm": skipped["series"], "layout": skipped["layout"],
                      "what": "skipped", "points": skipped["points"].astype(str), "detail": skipped["reasons"]}),
    ], ignore_index=True)
    return Table(PROBLEMS_TITLE, frame, align="llllrl",
                 row_classes=["bad"] * len(bad) + [""] * len(skipped))


PROBLEMS_ID = "problems"


def problems_line(ds: Dataset) -> str:
    """One line: how many points were skipped (the commonest reasons) and how many reported wrong results."""
    r = ds.results
    skipped, wrong = int(r["skipped"].sum()), int((r["wrong"] > 0).sum())
    if not skipped and not wrong:
        return ""
    parts = []
    if wrong:
        parts.append(f"{wrong} point(s) with WRONG RESULTS")
    if skipped:
        sk = r[r["skipped"]]
        why = sk["skip_reason"].fillna("no reason given").str.replace(r"^[\w:]+/[\w:]+: ", "", regex=True)
        per_algo = []
        for algo, g in sk.assign(why=why).groupby("algo", sort=False):
            layouts = ", ".join(sorted(g["layout"].unique(), key=layout_sort_key))
            reason = g["why"].mode().iloc[0]
            reason = reason if len(reason) <= 70 else reason.split(" (")[0][:69]  # the gist; the table has it all
            per_algo.append((len(g), f"{algo} ×{len(g)} on {layouts} ({reason})"))
        per_algo.sort(key=lambda t: -t[0])
        more = f"; {len(per_algo) - 3} more algorithms" if len(per_algo) > 3 else ""
        parts.append(f"{skipped} point(s) skipped: " + "; ".join(t for _, t in per_algo[:3]) + more)
    return "; ".join(parts)


def _loads(v: object) -> list[float] | None:
    return [float(x) for x in v] if isinstance(v, (list, tuple)) and len(v) == 3 else None


def _cpus(run: pd.Series) -> int | None:
    """The run's online CPUs (rank 0's node), else hwloc's PUs of its first node (records before online_cpus)."""
    if isinstance(run.get("online_cpus"), (int, float)) and not pd.isna(run.get("online_cpus")):
        return int(run["online_cpus"])
    hw = run.get("hardware")
    if isinstance(hw, list) and hw and hw[0].get("pus"):
        return int(hw[0]["pus"])
    return None


LOAD_SLACK = 1.0  # runnable tasks above the bound before a run counts as loaded (load_warnings)


def load_warnings(ds: Dataset) -> list[str]:
    """Per run whose 1-minute load at its start or end exceeded the CPUs: a line saying so.

    The bound is the online CPUs, or the run's own world size when that is larger — a run's own
    ranks (and the previous step's, run just before) count in the load for up to a minute, and
    a layout with more ranks than CPUs loads the machine that much by itself — plus one runnable
    task of slack (the launcher's and the job daemons' moments awake: an idle 2-core machine
    ended a 2-rank step at 2.1 and a 4-rank one at 4.2); anything above is other work competing
    for the CPUs while the run was timed. Runs whose records predate the field are not judged.
    """
    out = []
    for run in ds.runs.sort_values("start_time", na_position="last").to_dict("records"):
        start, end, cpus = _loads(run.get("loadavg")), _loads(run.get("end_loadavg")), _cpus(pd.Series(run))
        if cpus is None or (start is None and end is None):
            continue
        bound = max(cpus, int(run.get("world_size") or 0))
        over = [f"{what} {lv[0]:.1f}" for what, lv in (("at its start", start), ("at its end", end))
                if lv is not None and lv[0] > bound + LOAD_SLACK]
        if over:
            out.append(f"run {run['run_id']} ({run.get('layout', '?')}): load {' and '.join(over)} (1-minute "
                       f"average) on {cpus} online CPUs, above {'the CPUs' if bound == cpus else 'its ' + str(bound) + ' ranks'}: "
                       "other work competed for the CPUs while it was timed, so its spreads are wide and close "
                       "results are ties; re-run it on an idle machine to rank them")
    return out


def _load_cell(start: object, end: object) -> str:
    a, b = _loads(start), _loads(end)
    if a is None and b is None:
        return BLANK
    f = lambda lv: BLANK if lv is None else f"{lv[0]:.2f}"  # noqa: E731
    return f"{f(a)} / {f(b)}"


def runs_table(ds: Dataset) -> Table:
    """Every run's metadata; the inter-node link only for multi-node runs (a single node crosses none)."""
    runs = ds.runs.assign(start=ds.runs["start_time"].fillna("")).sort_values(["start", "run_id"])

    def slurm(s: dict | None) -> str:
        if not s:
            return BLANK
        extra = {k: v for k, v in s.items() if k != "job_id" and v not in (None, "")}
        return str(s.get("job_id", "?")) + (" (" + ", ".join(f"{k}={v}" for k, v in extra.items()) + ")" if extra else "")

    frame = pd.DataFrame({
        "run_id": runs["run_id"], "source": runs["source"].str.rsplit(":", n=1).str[0],
        "start": runs["start_time"].fillna(BLANK),
        "end / exit": [f"{e} / {x}" if isinstance(e, str) else "no end record (killed?)"
                       for e, x in zip(runs["end_time"], runs["exit_status"])],
        "layout": [f"{lay} ({w} ranks)" for lay, w in zip(runs["layout"], runs["world_size"])],
        "backend": [f"{b}/{d}" for b, d in zip(runs["backend"], runs["device"])],
        "hosts": [", ".join(h) if h else BLANK for h in runs["hosts"]],
        "versions": [", ".join(f"{k} {v}" for k, v in (vs or {}).items() if v) or BLANK for vs in runs["versions"]],
        "git": runs["git_commit"].fillna(BLANK), "slurm job": [slurm(s) for s in runs["slurm"]],
        "inter-node link": [link if isinstance(link, str) and link and (n or 0) > 1 else BLANK
                            for link, n in zip(runs["inter_node_link"], runs["nodes"])],
        "load start / end (CPUs)": [_load_cell(a, b) + (f" ({int(n)})" if isinstance(n, (int, float)) and not pd.isna(n)
                                                        else "")
                                    for a, b, n in zip(runs["loadavg"], runs["end_loadavg"], runs["online_cpus"])],
        "argv": [" ".join(a) if a else BLANK for a in runs["argv"]]})
    t = Table("Runs", frame.reset_index(drop=True), align="l" * 13).drop_blank_column("inter-node link")
    if "load start / end (CPUs)" in t.drop_blank_column("load start / end (CPUs)").headers:
        t.note = "load: the 1-minute load average on rank 0's node at the run's start and end, and its online CPUs"
    return t
