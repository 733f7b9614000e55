#!/usr/bin/env bash
# The job's time limit, on a real (local) Slurm cluster:
#   1. SBATCH_SIGNAL=B:USR1@55 sbatch --time=1 slurm/sweep.sh over a sweep longer than 30 s
#      (98 points, one algorithm per case, of >= 0.3 s each: --min-time; short, so that the
#      step ends well within collbench's 3 s grace after SIGTERM — points of >= 0.5 s took
#      0.8-2.8 s on the shared 2-core machine). Slurm sends the batch shell
#      SIGUSR1 55 s before the 1-minute limit (slurmctld checks every 30 s, so up to 30 s
#      more: in practice ~28 s into the job);
#   2. sweep.sh forwards SIGTERM to the step, collbench writes its end record at once
#      (exit_status 143; the point in progress is dropped) and stops, steps.tsv records the step `stopped`, the job ends
#      before the limit (FAILED, exit 1 — not TIMEOUT) and prints the command that resumes;
#      the time from the warning to the job's end is measured and printed;
#   3. that command, submitted as printed (again, at most 5 times, since each job gets the
#      same limit and warning, and each must add points), completes the sweep: every point
#      measured exactly once.
#
#   time_limit_test.sh /path/to/collbench
# Exit 0 pass, 1 fail, 77 skip (not root / no network namespaces). Bounded (≈ 175 s at most; 40-60 s seen).
set -uo pipefail
# shellcheck source=tests/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_netns
require_cluster_tools "${1:-}"
cluster_test time-limit "${TIME_LIMIT_TEST_BUDGET:-175}"

SWEEP="$work/time-limit.yaml"
# Each point takes about min_time of wall time per algorithm (adaptive stopping counts the
# wall time of clock-started windows, not only the ops inside them).
cat >"$SWEEP" <<'YAML'
name: time-limit
layouts: ["1x2"]
defaults: {min_bytes: 8, max_bytes: 64K, step_factor: 2, iters: 5, warmup: 1, min_time: 0.3, max_iters: 1000000, timeout: 20}
cases:
  - {op: allreduce, algo: ring}
  - {op: allreduce, algo: library}
  - {op: broadcast, algo: naive}
  - {op: allgather, algo: ring}
  - {op: allgather, algo: library}
  - {op: broadcast, algo: library}
  - {op: reduce_scatter, algo: ring}
YAML
POINTS=98

step "start.sh --nodes 1 --cpus 4"
timeout 60 "$CLUSTER/start.sh" --nodes 1 --cpus 4 || fail "start.sh"

OUT="$work/out"
export SBATCH_SIGNAL=B:USR1@55
# --launcher srun: the stop through scancel to srun's tasks (Open MPI's default here is mpirun)
submit J1 -N 1 --ntasks-per-node=2 --time=1 slurm/sweep.sh --launcher srun --out "$OUT" --no-analysis "$SWEEP"
unset SBATCH_SIGNAL
grep -q -- '--signal=B:USR1@120' "$repo/slurm/sweep.sh" || fail "sweep.sh asks for no B:USR1 warning"

# 2. the warning, then the end of the job
for ((i = 0; i < 600; i++)); do
  grep -q '^sweep: SIGUSR1' "$work/job-$J1.out" 2>/dev/null && break
  st=$("$C" squeue -h -j "$J1" -o %T 2>/dev/null)
  [[ $st == RUNNING || $st == PENDING ]] || fail "job $J1 is '${st:-gone}' and got no SIGUSR1"
  sleep 0.2
done
grep -q '^sweep: SIGUSR1' "$work/job-$J1.out" || fail "job $J1: no SIGUSR1 within 120 s"
t_sig=$(now)
step "job $J1: SIGUSR1 (time limit near) after $(grep -c '"type":"result"' "$OUT/results.jsonl") points"
wait_job "$J1" FAILED 60
t_exit=$(elapsed "$t_sig")
sed -n '/^sweep: summary of job/,$p' "$work/job-$J1.out"
grep -q '^sweep: sent SIGTERM to the running step' "$work/job-$J1.out" || fail "job $J1: SIGTERM not forwarded to the step"
awk -F'\t' '$1=="1x2" && $2=="stopped" && $3=="143" && $7 ~ /SIGUSR1 \(time limit near\)/' "$OUT/steps.tsv" | grep -q . ||
  fail "steps.tsv: 1x2 not recorded stopped (exit 143) by SIGUSR1"
grep -q 'collbench: received SIGTERM: stopping; finished points are kept' "$OUT/steps/1x2.log" ||
  fail "steps/1x2.log: collbench did not get SIGTERM"
kept=$(grep -c '"type":"result"' "$OUT/results.jsonl")
kept1=$kept
first_end=143
# The watcher writes the end record at once, whatever the point in progress does.
grep -q '"type":"end".*"exit_status":143' "$OUT/results.jsonl" || fail "no end record with exit_status 143"

resume=$(sed -n 's/^sweep: to resume: //p' "$work/job-$J1.out")
[[ $resume == *" --time=00:01:00 "* && $resume == *"SBATCH_SIGNAL=B:USR1@55 "* ]] ||
  fail "the resume command lacks --time=00:01:00 or SBATCH_SIGNAL=B:USR1@55: '$resume'"
step "job $J1 ended ${t_exit} s after the warning with $kept of $POINTS points; resume command: $resume"

# 3. resume until done (each job may be warned again)
jobs=("$J1")
for ((k = 1; k <= 5; k++)); do
  J=$(timeout 30 "$C" bash -c "${resume/ sbatch / sbatch --parsable }") || fail "the resume command failed: $J"
  J=${J%%;*}
  jobs+=("$J")
  step "job $J: the resume command"
  st=$("$CLUSTER/wait-job.sh" --timeout "$(left)" "$J") || true
  step "job $J: $st"
  sed -n '/^sweep: summary of job/,$p' "$work/job-$J.out"
  [[ $st == COMPLETED ]] && break
  [[ $st == FAILED ]] && grep -q '^sweep: SIGUSR1' "$work/job-$J.out" || fail "job $J ended '$st', not stopped by the warning"
  n=$(grep -c '"type":"result"' "$OUT/results.jsonl")
  ((n > kept)) || fail "job $J measured no new point"
  kept=$n
  resume=$(sed -n 's/^sweep: to resume: //p' "$work/job-$J.out")
done
[[ $st == COMPLETED ]] || fail "the sweep did not complete in 5 resumed jobs"
"$PY" "$repo/tests/slurm/resume_check.py" "$OUT/results.jsonl" 1x2 "$POINTS" --first-end "$first_end" || fail "1x2 records after the resume"

step "FIGURES time-limit: SIGUSR1 after $kept1 of $POINTS points; job ended ${t_exit} s after it (end record: $first_end); completed by $((${#jobs[@]} - 1)) resumed job(s)"
ok=1
step "PASS (jobs ${jobs[*]})"
