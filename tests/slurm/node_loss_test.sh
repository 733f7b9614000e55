#!/usr/bin/env bash
# A node lost in the middle of a sweep, on a real (local) Slurm cluster of 3 emulated nodes
# (SlurmdTimeout 15 s, start.sh's default):
#   1. sbatch -N 3 --ntasks-per-node=2 slurm/sweep.sh (its #SBATCH --no-kill) over layouts
#      1x2, 3x1, 2x1, 3x2; once the 3x1 step has recorded 3 points, node n3 is lost
#      (slurm/cluster/node.sh kill n3: SIGKILL to its slurmd, slurmstepd and rank);
#   2. the 3x1 step ends in bounded time (< 60 s after the kill; measured and printed),
#      steps.tsv records it failed with the lost node, the job is not cancelled, 2x1 still
#      runs on n1+n2, 3x2 is skipped (needs 3 nodes), the points 3x1 finished before the loss
#      are kept, every line is JSON;
#   3. n3 back (node.sh start n3), the "to resume:" command the job printed is submitted as
#      is: 1x2 and 2x1 are not run again, 3x1 runs again and measures only the missing points,
#      3x2 runs.
#
#   node_loss_test.sh /path/to/collbench
# Exit 0 pass, 1 fail, 77 skip (not root / no network namespaces). Bounded (≈ 150 s at most).
set -uo pipefail
# shellcheck source=tests/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_netns
require_cluster_tools "${1:-}"
cluster_test node-loss "${NODE_LOSS_TEST_BUDGET:-160}"

# Points of fixed length (--min-time), so "mid-step" does not depend on the machine's speed:
# 5 sizes x 2 algorithms = 10 points a layout. timeout: how long the surviving ranks wait
# for the lost one before they give up (exit 3).
SWEEP="$work/node-loss.yaml"
cat >"$SWEEP" <<'YAML'
name: node-loss
layouts: ["1x2", "3x1", "2x1", "3x2"]
defaults: {min_bytes: 8, max_bytes: 2K, step_factor: 4, iters: 5, warmup: 1, min_time: 0.5, max_iters: 100000, timeout: 15}
cases:
  - {op: allreduce, algo: [ring, library]}
YAML
POINTS=10

step "start.sh --nodes 3 --cpus 4"
timeout 60 "$CLUSTER/start.sh" --nodes 3 --cpus 4 || fail "start.sh"
grep -qx 'SlurmdTimeout=15' "$STATE/etc/slurm.conf" || fail "slurm.conf: SlurmdTimeout is not 15"

OUT="$work/out"
# --launcher srun: the srun path after a loss (--overlap); Open MPI's default here is mpirun
submit J1 -N 3 --ntasks-per-node=2 slurm/sweep.sh --launcher srun --out "$OUT" --no-analysis "$SWEEP"

# results of the last run record when it is the 3x1 one (the step in progress), else 0
points_3x1() {
  awk '/"type":"run"/ { n = /"nodes":3,/ && /"ranks_per_node":1,/ ? 0 : -1; next }
       /"type":"result"/ && n >= 0 { n++ } END { print (n > 0 ? n : 0) }' "$OUT/results.jsonl" 2>/dev/null || echo 0
}
for ((i = 0; i < 600; i++)); do
  (($(points_3x1) >= 3)) && break
  st=$("$C" squeue -h -j "$J1" -o %T 2>/dev/null)
  [[ $st == RUNNING || $st == PENDING ]] || fail "job $J1 is '$st' before the 3x1 step recorded 3 points"
  sleep 0.2
done
(($(points_3x1) >= 3)) || fail "the 3x1 step recorded $(points_3x1) points in 120 s"
t_kill=$(now)
killed=$("$CLUSTER/node.sh" kill n3) || fail "node.sh kill n3"
kept=$(points_3x1)
step "n3 lost during the 3x1 step ($kept points recorded): SIGKILL to $killed"

# 2. the step ends, bounded; steps.tsv says why
for ((i = 0; i < 300; i++)); do
  grep -q $'^3x1\t' "$OUT/steps.tsv" && break
  sleep 0.2
done
grep -q $'^3x1\t' "$OUT/steps.tsv" || fail "the 3x1 step did not end within 60 s of the node loss"
t_end=$(elapsed "$t_kill")
step "3x1 step ended ${t_end} s after the node loss: $(grep $'^3x1\t' "$OUT/steps.tsv" | cut -f2,3,7)"
wait_job "$J1" FAILED 90 # one step failed -> exit 1; not NODE_FAIL / CANCELLED: --no-kill kept the job
t_job=$(elapsed "$t_kill")
sed -n '/^sweep: summary of job/,$p' "$work/job-$J1.out"
awk -F'\t' '$1=="1x2" && $2=="ok"' "$OUT/steps.tsv" | grep -q . || fail "steps.tsv: 1x2 not ok"
awk -F'\t' '$1=="3x1" && $2=="failed" && $7 ~ /node\(s\) lost: n3/' "$OUT/steps.tsv" | grep -q . ||
  fail "steps.tsv: 3x1 not recorded failed with 'node(s) lost: n3'"
awk -F'\t' '$1=="2x1" && $2=="ok"' "$OUT/steps.tsv" | grep -q . || fail "steps.tsv: 2x1 did not run ok on the remaining nodes"
awk -F'\t' '$1=="3x2" && $2=="skipped" && $7 ~ /needs 3 nodes, allocation has 2 \(lost: n3\)/' "$OUT/steps.tsv" | grep -q . ||
  fail "steps.tsv: 3x2 not skipped for the lost node"
grep -q '^sweep: node n3 lost' "$work/job-$J1.out" || fail "job $J1: no 'node n3 lost' message"
grep -q '^sweep: 2x1: srun .*--nodelist=n1,n2 .*--overlap' "$work/job-$J1.out" || fail "job $J1: 2x1 not launched on n1,n2 with --overlap"
resume=$(sed -n 's/^sweep: to resume: //p' "$work/job-$J1.out")
[[ -n $resume ]] || fail "job $J1 printed no 'to resume:' command"
step "resume command: $resume"

# 3. the node comes back; the printed command resumes
"$CLUSTER/node.sh" start n3 || fail "node.sh start n3"
# as printed; only --parsable added, for the job id
J2=$(timeout 30 "$C" bash -c "${resume/ sbatch / sbatch --parsable }") || fail "the resume command failed: $J2"
J2=${J2%%;*}
step "job $J2: the resume command"
wait_job "$J2" COMPLETED 60
sed -n '/^sweep: summary of job/,$p' "$work/job-$J2.out"
for l in 1x2 2x1; do
  grep -q "^sweep: $l: already ok (job $J1" "$work/job-$J2.out" || fail "job $J2: $l not skipped as already ok"
done
for l in 3x1 3x2; do
  awk -F'\t' -v j="$J2" -v l=$l '$5==j && $1==l && $2=="ok"' "$OUT/steps.tsv" | grep -q . || fail "steps.tsv: $l not ok in job $J2"
done
"$PY" "$repo/tests/slurm/resume_check.py" "$OUT/results.jsonl" 3x1 "$POINTS" || fail "3x1 records after the resume"

step "FIGURES node-loss: n3 killed after $kept of $POINTS 3x1 points; step ended ${t_end} s after, job ${t_job} s after (2x1 ran, 3x2 skipped); resumed job $J2 completed"
ok=1
step "PASS (jobs $J1 $J2)"
