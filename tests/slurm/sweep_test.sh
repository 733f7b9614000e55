#!/usr/bin/env bash
# End-to-end test of slurm/sweep.sh on a real (local) Slurm cluster of 3 emulated nodes:
#   A. sbatch -N 3 --ntasks-per-node=2 slurm/sweep.sh small.yaml (layouts 1x2 2x1 2x2 3x2):
#      every step ok, results for every layout, wrong == 0, nodes/ranks_per_node per layout,
#      run records' slurm.job_id == the job id, plots when collplot + matplotlib are there;
#   B. the same output folder again, plus a layout that does not fit (4x2 on 3 nodes):
#      nothing is run again (resume), 4x2 is skipped with a message;
#   C. the mpirun launcher (COLLBENCH_LAUNCHER=mpirun) for 2x2 inside a 2-node allocation;
#   D. --tune on a one-layout sweep (1x2, allreduce ring + library): plots and tuning.yaml in
#      the job folder, the file valid (load_tuning) with one allreduce entry for 1x2 naming only
#      measured algorithms, collbench --dry-run --algo auto accepts it, the printed command;
#   E. a gloo sweep (srun --mpi=none, no MPI) on 2x1 and 2x2 into D's folder: every op and
#      algorithm verified across 2 nodes, launcher srun (--no-analysis: A ran sweep.sh's analysis,
#      and analysis.backends_side_by_side checks a report of an mpi and a gloo run).
#
#   sweep_test.sh /path/to/collbench
# Exit 0 pass, 1 fail, 77 skip (not root / no network namespaces). Bounded (≈ 270 s at most);
# the cluster is always stopped; on failure the daemons' and steps' log tails are printed.
set -uo pipefail
# shellcheck source=tests/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_netns
require_cluster_tools "${1:-}"
cluster_test sweep "${SWEEP_TEST_BUDGET:-270}"

# --- the sweep file: small.yaml when it has exactly the layouts this test is about ----------
want="1x2,2x1,2x2,3x2"
SWEEP="$repo/slurm/sweeps/small.yaml"
have=""
[[ -f $SWEEP ]] && have=$("$BIN" --config "$SWEEP" --print-layouts 2>/dev/null | paste -sd, -)
if [[ $have != "$want" ]]; then
  step "small.yaml layouts are '${have:-<none>}', not $want: using a test-local sweep file"
  SWEEP="$work/e2e.yaml"
  cat >"$SWEEP" <<'YAML'
name: slurm-e2e
layouts: ["1x2", "2x1", "2x2", "3x2"]
defaults: {min_bytes: 8, max_bytes: 4K, step_factor: 8, iters: 5, warmup: 1}
cases:
  - {op: allreduce, algo: all}
  - {op: broadcast, algo: all}
YAML
  have=$("$BIN" --config "$SWEEP" --print-layouts | paste -sd, -) || fail "collbench --print-layouts on $SWEEP"
  [[ $have == "$want" ]] || fail "collbench --print-layouts printed '$have', expected '$want'"
fi
step "sweep file: $SWEEP ($have)"

# --- helpers --------------------------------------------------------------------------------
count_runs() { grep -cE '"type" *: *"run"' "$1" 2>/dev/null || true; }

# check OUTDIR LAYOUTS: steps ok, results per layout, wrong == 0, job ids, nodes/rpn
check() {
  "$PY" - "$1" "$2" <<'PY'
import json, sys
out, layouts = sys.argv[1], sys.argv[2].split(",")
errors = []
rows = [l.rstrip("\n").split("\t") for l in open(f"{out}/steps.tsv")][1:]
ok_job = {}
for r in rows:
    layout, status, _code, _secs, job = r[:5]
    if status == "failed":
        errors.append(f"steps.tsv: {layout} failed in job {job}")
    if status == "ok":
        if layout in ok_job:
            errors.append(f"steps.tsv: {layout} ran ok twice (jobs {ok_job[layout]} and {job})")
        ok_job[layout] = job
for l in layouts:
    if l not in ok_job:
        errors.append(f"steps.tsv: no ok step for {l}")
runs, results, ends = {}, {}, set()
for i, line in enumerate(open(f"{out}/results.jsonl"), 1):
    try:
        rec = json.loads(line)
    except ValueError as e:
        errors.append(f"results.jsonl:{i}: not JSON: {e}")
        continue
    t = rec.get("type")
    if t == "run":
        runs[rec["run_id"]] = rec
    elif t == "result":
        results.setdefault(rec["run_id"], []).append((i, rec))
    elif t == "end":
        ends.add(rec.get("run_id"))
per_layout = {}
for rid, run in runs.items():
    layout = f'{run.get("nodes")}x{run.get("ranks_per_node")}'
    per_layout.setdefault(layout, []).append(rid)
    job = (run.get("slurm") or {}).get("job_id")
    if layout in ok_job and str(job) != ok_job[layout]:
        errors.append(f"run {rid} ({layout}): slurm.job_id {job!r}, expected {ok_job[layout]}")
    if rid not in ends:
        errors.append(f"run {rid} ({layout}): no end record")
    n, r = run.get("nodes"), run.get("ranks_per_node")
    measured = 0
    for i, res in results.get(rid, []):
        if (res.get("nodes"), res.get("ranks_per_node"), res.get("world_size")) != (n, r, n * r):
            errors.append(f"results.jsonl:{i}: nodes/ranks_per_node/world_size "
                          f'{res.get("nodes")}/{res.get("ranks_per_node")}/{res.get("world_size")}, run says {n}x{r}')
        if res.get("wrong") != 0:
            errors.append(f'results.jsonl:{i}: wrong = {res.get("wrong")} ({res.get("op")}/{res.get("algo")} {res.get("bytes")} B)')
        if not res.get("skipped"):
            measured += 1
    if measured == 0:
        errors.append(f"run {rid} ({layout}): no measured result")
for l in layouts:
    if len(per_layout.get(l, [])) != 1:
        errors.append(f"{l}: {len(per_layout.get(l, []))} run records, expected exactly 1")
extra = set(per_layout) - set(layouts)
if extra:
    errors.append(f"unexpected layouts in results: {sorted(extra)}")
nres = sum(len(v) for v in results.values())
for e in errors:
    print("check:", e)
print(f"check: {out}: {len(runs)} runs, {nres} results, layouts {sorted(per_layout)}, "
      f"jobs {ok_job}: {'OK' if not errors else f'{len(errors)} problem(s)'}")
sys.exit(1 if errors else 0)
PY
}

# --- cluster ----------------------------------------------------------------------------------
step "start.sh --nodes 3 --cpus 4"
timeout 60 "$CLUSTER/start.sh" --nodes 3 --cpus 4 || fail "start.sh"

# --- A: the sweep -----------------------------------------------------------------------------
OUT="$work/out"
submit JA -N 3 --ntasks-per-node=2 slurm/sweep.sh --out "$OUT" "$SWEEP"
wait_job "$JA" COMPLETED 180
sed -n '/^sweep: summary of job/,$p' "$work/job-$JA.out"
check "$OUT" "$want" || fail "job $JA: results check"
for f in results.jsonl steps.tsv slurm-env.txt nodelist.txt steps/1x2.log steps/3x2.log; do
  [[ -s $OUT/$f ]] || fail "job folder lacks $f"
done
[[ $(paste -sd' ' "$OUT/nodelist.txt") == "n1 n2 n3" ]] || fail "nodelist.txt: $(paste -sd' ' "$OUT/nodelist.txt")"
grep -qx "SLURM_JOB_ID=$JA" "$OUT/slurm-env.txt" || fail "slurm-env.txt lacks SLURM_JOB_ID=$JA"
if [[ -f $repo/analysis/collplot ]] && "$PY" -c 'import matplotlib' 2>/dev/null; then
  [[ -s $OUT/plots/report.html ]] || fail "no plots/report.html (analysis at the end of sweep.sh)"
  step "plots: $(find "$OUT/plots" -name '*.png' | wc -l) PNGs + report.html"
fi

# --- B: resume + a layout that does not fit -------------------------------------------------
runs_before=$(count_runs "$OUT/results.jsonl")
submit JB -N 3 --ntasks-per-node=2 slurm/sweep.sh --out "$OUT" --layouts "$want,4x2" --no-analysis "$SWEEP"
wait_job "$JB" COMPLETED 60
sed -n '/^sweep: summary of job/,$p' "$work/job-$JB.out"
runs_after=$(count_runs "$OUT/results.jsonl")
((runs_after == runs_before)) || fail "resume: job $JB added $((runs_after - runs_before)) run record(s), expected none"
for l in ${want//,/ }; do
  grep -q "^sweep: $l: already ok (job $JA" "$work/job-$JB.out" || fail "job $JB: no 'already ok' message for $l"
done
grep -q '^sweep: 4x2: skipped, needs 4 nodes' "$work/job-$JB.out" || fail "job $JB: no skip message for 4x2"
awk -F'\t' -v j="$JB" '$5==j && $2=="ok"' "$OUT/steps.tsv" | grep -q . && fail "job $JB ran a step"
awk -F'\t' -v j="$JB" '$5==j && $1=="4x2" && $2=="skipped"' "$OUT/steps.tsv" | grep -q . || fail "steps.tsv: 4x2 not recorded skipped"
check "$OUT" "$want" || fail "results check after the resumed job"

# --- C: the mpirun launcher -------------------------------------------------------------------
OUT_C="$work/out-mpirun"
submit JC -N 2 --ntasks-per-node=2 --export=ALL,COLLBENCH_LAUNCHER=mpirun slurm/sweep.sh --out "$OUT_C" --layouts 2x2 --no-analysis "$SWEEP"
wait_job "$JC" COMPLETED 90
grep -q '^sweep: 2x2: mpirun -np 4 --map-by ppr:2:node --host n1:2,n2:2 --oversubscribe' "$work/job-$JC.out" ||
  fail "job $JC: no mpirun step line"
check "$OUT_C" 2x2 || fail "job $JC (mpirun launcher): results check"

# --- D: --tune: a tuning file at the end of the job ---------------------------------------------
OUT_D="$work/out-tune"
cat >"$work/tune.yaml" <<'YAML'
name: slurm-tune
layouts: ["1x2"]
defaults: {min_bytes: 8, max_bytes: 4K, step_factor: 4, iters: 10, warmup: 2, interleave: true}
cases:
  - {op: allreduce, algo: [ring, library]}
YAML
submit JD -N 1 --ntasks-per-node=2 slurm/sweep.sh --out "$OUT_D" --tune "$work/tune.yaml"
wait_job "$JD" COMPLETED 90
grep -E '^sweep: (colltune|tuning|use it)' "$work/job-$JD.out"
check "$OUT_D" 1x2 || fail "job $JD (--tune): results check"
[[ -s $OUT_D/tuning.yaml ]] || fail "job $JD: no tuning.yaml in $OUT_D (--tune)"
"$PY" - "$repo/analysis" "$OUT_D/tuning.yaml" <<'PY' || fail "job $JD: tuning.yaml check"
import sys
sys.path.insert(0, sys.argv[1])
from collbench_analysis.tune import load_tuning
t = load_tuning(sys.argv[2])  # raises on a file that does not follow collbench-tuning/1
keys = [(e.op, e.backend, e.device, e.layout.nodes, e.layout.ranks_per_node) for e in t.entries]
assert keys == [("allreduce", "mpi", "cpu", 1, 2)], f"entries {keys}, expected one: allreduce mpi/cpu 1x2"
algos = {r.algo for r in t.entries[0].ranges}
assert algos <= {"ring", "library"}, f"ranges name {algos}, measured were ring and library"
print(f"tuning.yaml: {t.entries[0].label}: " + "; ".join(r.label for r in t.entries[0].ranges))
PY
out=$("$BIN" --dry-run --ranks 2 --op allreduce --algo auto --tuning "$OUT_D/tuning.yaml" -b 8 -e 4K 2>&1) ||
  fail "collbench --dry-run --algo auto --tuning $OUT_D/tuning.yaml: $out"
grep -qxF "sweep: use it: mpirun -np 2 $BIN --op allreduce --algo auto --tuning $OUT_D/tuning.yaml" "$work/job-$JD.out" ||
  fail "job $JD: no 'use it: mpirun -np 2 … --algo auto --tuning $OUT_D/tuning.yaml' line"
if [[ -f $repo/analysis/collplot ]] && "$PY" -c 'import matplotlib' 2>/dev/null; then
  [[ -s $OUT_D/plots/report.html ]] || fail "job $JD: no plots/report.html next to tuning.yaml"
fi

# --- E: Gloo without MPI: srun --mpi=none steps across 2 nodes, into D's folder --------------
# Every op and algorithm of the gloo backend (custom ones over Gloo's TCP pairs, Gloo's own
# calls and variants), verified on 2 nodes x 1 and 2 ranks; rank 0 serves the rendezvous on
# n1 and every rank reaches it through the emulated network (10.77.0.0/24).
cat >"$work/gloo.yaml" <<'YAML'
name: slurm-gloo
layouts: ["2x1", "2x2"]
defaults: {backend: gloo, min_bytes: 8, max_bytes: 512, step_factor: 8, iters: 2, warmup: 1, timeout: 30}
cases:
  - {op: all, algo: [all, "library:all"]}
YAML
submit JE -N 2 --ntasks-per-node=2 slurm/sweep.sh --out "$OUT_D" --no-analysis "$work/gloo.yaml"
wait_job "$JE" COMPLETED 150
grep -q '^sweep: 2x1: .*srun --mpi=none' "$work/job-$JE.out" || fail "job $JE: no 'srun --mpi=none' step line for 2x1"
check "$OUT_D" 1x2,2x1,2x2 || fail "job $JE (gloo): results check"
"$PY" - "$OUT_D/results.jsonl" <<'PY' || fail "job $JE: gloo results"
import json, sys
runs, algos, ops = {}, set(), set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "run":
        runs[r["run_id"]] = r
    elif r["type"] == "result" and runs[r["run_id"]]["backend"] == "gloo" and not r["skipped"]:
        run = runs[r["run_id"]]
        assert run["versions"]["launcher"] == "srun", run["versions"]
        assert r["wrong"] == 0, r
        if run["nodes"] == 2:
            algos.add(r["algo"])
            ops.add(r["op"])
want_ops = {"broadcast", "reduce", "allreduce", "gather", "allgather", "scatter", "reduce_scatter", "alltoall"}
assert ops >= want_ops, f"ops measured across 2 nodes: {sorted(ops)}"
assert {"library", "ring", "naive"} <= algos and any(a.startswith("library:") for a in algos), sorted(algos)
print(f"gloo across 2 nodes: {len(ops)} ops, algorithms {sorted(algos)}")
PY

ok=1
step "PASS (jobs $JA $JB $JC $JD $JE)"
