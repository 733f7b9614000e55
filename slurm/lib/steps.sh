# shellcheck shell=bash disable=SC2034  # globals shared by the pieces of sweep.sh
# slurm/sweep.sh: the job folder and its step log — one job step per layout, recorded in
# steps.tsv (which is also what resume reads), interrupted steps recorded on the way out, the
# summary at the end (sourced).

# open_job_folder -> OUT (absolute), CONFIG_KEY; writes the folder's job-level files.
open_job_folder() {
  local results=${COLLBENCH_RESULTS:-${SLURM_SUBMIT_DIR:-$PWD}/results}
  OUT=${OUT_ARG:-$results/$JOB_ID}
  [[ $OUT == /* ]] || OUT="$PWD/$OUT"
  mkdir -p "$OUT/steps" || die "cannot create $OUT"
  OUT=$(cd "$OUT" && pwd)
  [[ -f $OUT/steps.tsv ]] || printf 'layout\tstatus\texit_code\tseconds\tjob_id\tconfig\tmessage\n' >"$OUT/steps.tsv"
  env | grep '^SLURM_' | sort >"$OUT/slurm-env.txt" || true
  printf '%s\n' "${HOSTS[@]}" >"$OUT/nodelist.txt"
  scontrol show job "$JOB_ID" >"$OUT/job.txt" 2>/dev/null || true
  # configuration key: the sweep file's content + the extra arguments (resume is per key)
  CONFIG_KEY=$({ cat "$SWEEP"; printf '\0%s' "${EXTRA[@]}"; } | sha256sum | cut -c1-12)
  cp "$SWEEP" "$OUT/sweep.yaml" 2>/dev/null || true
}

record() { # LAYOUT STATUS EXIT SECONDS MESSAGE: one steps.tsv line + one summary line
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$JOB_ID" "$CONFIG_KEY" "$5" >>"$OUT/steps.tsv"
  SUMMARY+=("$(printf '%-8s %-8s %5s %8s  %s' "$1" "$2" "$3" "$4" "$5")")
}

already_ok() { # LAYOUT -> the job id that completed it with this configuration
  awk -F'\t' -v l="$1" -v c="$CONFIG_KEY" '$1==l && $2=="ok" && $6==c {j=$5} END{if (j!="") {print j} else {exit 1}}' "$OUT/steps.tsv"
}

# Signals. USR1 is the time-limit warning (#SBATCH --signal=B:USR1@120, sent to this shell
# only): forward SIGTERM to the running step's tasks — collbench stops at the next point
# boundary and writes its end record (it handles TERM/INT, not USR1) — then run no further
# layout. TERM/INT (scancel, the limit itself) reach the step's tasks from Slurm already; a
# second TERM would make collbench give up its point at once, so they are not forwarded.
# Either way the step is waited for (at most STOP_WAIT s, inside Slurm's KillWait), recorded
# `stopped`, the rest of the sweep is recorded not run, and the resume command is printed.
STOP="" STOP_SIG=0 STOP_T0="" STEP_PID="" STOP_WAIT=20
on_signal() { # SIGNUM NAME
  [[ -n $STOP ]] && return 0
  STOP=$2 STOP_SIG=$1 STOP_T0=$(now)
  if [[ $2 == USR1 ]]; then
    say "SIGUSR1: the job's time limit is near: stopping the running step"
    [[ -n $STEP_PID ]] && forward_stop
  else
    say "SIG$2 (scancel or the time limit): stopping"
  fi
  return 0
}

# catch_signals: from the start of the job (USR1's default action would end this shell).
catch_signals() {
  trap 'on_signal 15 TERM' TERM
  trap 'on_signal 2 INT' INT
  trap 'on_signal 10 USR1' USR1
}

# forward_stop: SIGTERM to the running step's tasks (scancel without --batch signals every step
# of the job but not this shell); with mpirun or without scancel, to the launcher: scancel
# would reach only mpirun's daemons, and the ranks ran on to the end of the sweep.
forward_stop() {
  if [[ $LAUNCHER != mpirun ]] && command -v scancel >/dev/null && scancel --signal=TERM "$JOB_ID" 2>/dev/null; then
    say "sent SIGTERM to the running step (scancel --signal=TERM $JOB_ID)"
  else
    kill -TERM "$STEP_PID" 2>/dev/null || true
    say "sent SIGTERM to the launcher ($STEP_PID)"
  fi
}

# run_step LOG -> rc: CMD[] in the background, so that a trapped signal runs its handler at
# once (bash defers traps while a foreground command runs); polled, to bound the wait after
# a stop.
run_step() {
  "${CMD[@]}" </dev/null >>"$1" 2>&1 &
  STEP_PID=$!
  while kill -0 "$STEP_PID" 2>/dev/null; do
    if [[ -n $STOP ]] && (($(elapsed "$STOP_T0" %.0f) > STOP_WAIT)); then
      say "the step did not end within ${STOP_WAIT} s of SIG$STOP; recording it and leaving it to Slurm"
      STEP_PID=""
      return 0
    fi
    sleep 0.2 &
    wait $! 2>/dev/null || true
  done
  rc=0
  wait "$STEP_PID" || rc=$?
  STEP_PID=""
}

run_layout() { # LAYOUT: skip it (done, does not fit) or run it as one step; FAILED counts failures
  local layout=$1 n r prev t0 secs log rc
  n=${layout%x*} r=${layout#*x}
  if [[ -n $STOP ]]; then
    CUT=$((CUT + 1))
    record "$layout" skipped - 0 "not run: sweep stopped by SIG$STOP"
    return 0
  fi
  if prev=$(already_ok "$layout"); then
    say "$layout: already ok (job $prev, same configuration), not run again"
    record "$layout" skipped - 0 "resume: ok in job $prev"
    return 0
  fi
  if ((n > ${#HOSTS[@]})); then
    say "$layout: skipped, needs $n nodes, the allocation has ${#HOSTS[@]}${LOST:+ (lost: $LOST)}"
    record "$layout" skipped - 0 "needs $n nodes, allocation has ${#HOSTS[@]}${LOST:+ (lost: $LOST)}"
    return 0
  fi
  if ! pick_hosts "$r" "$n"; then
    say "$layout: skipped, needs $n nodes with $r tasks each, the allocation has tasks per node ${SLOTS[*]}"
    record "$layout" skipped - 0 "needs $r tasks on $n nodes, allocation has ${SLOTS[*]} per node"
    return 0
  fi
  launch_cmd "$n" "$r"
  log="$OUT/steps/$layout.log"
  {
    echo "# job $JOB_ID step $layout on ${PICKED[*]} at $(date -Is)"
    echo "# ${CMD[*]}"
  } >>"$log"
  say "$layout: ${CMD[*]}"
  export COLLBENCH_LAYOUT=$layout # for wrappers (profile.sh names its reports by it)
  t0=$(now) rc=""
  run_step "$log"
  secs=$(elapsed "$t0")
  if [[ -n $STOP && $rc != 0 ]]; then # (a step that completed as the signal came is ok)
    FAILED=$((FAILED + 1)) CUT=$((CUT + 1))
    say "$layout: stopped by SIG$STOP after ${secs} s (exit ${rc:-none}); finished points are kept"
    record "$layout" stopped "${rc:--}" "$secs" "SIG$STOP ($(stop_reason)), ended $(elapsed "$STOP_T0") s after it; finished points kept"
  elif ((rc == 0)); then
    say "$layout: ok in ${secs} s"
    record "$layout" ok 0 "$secs" ""
  else
    FAILED=$((FAILED + 1))
    say "$layout: FAILED (exit $rc) after ${secs} s; last lines of $log:"
    tail -n 15 "$log" | sed "s/^/$PROG:   | /"
    # A lost node leaves the allocation (sbatch --no-kill): later layouts use what is left.
    if refresh_allocation; then
      record "$layout" failed "$rc" "$secs" "see steps/$layout.log"
    else
      record "$layout" failed "$rc" "$secs" "node(s) lost: $LOST_NOW; see steps/$layout.log"
    fi
  fi
}

stop_reason() {
  case $STOP in
    USR1) echo "time limit near" ;;
    *) echo "scancel or time limit" ;;
  esac
}

# run_layouts LAYOUT...: every layout in order, then one jobs.tsv line for this job.
# -> FAILED (steps failed or stopped), CUT (layouts a signal stopped or kept from running)
run_layouts() {
  local started l
  started=$(date -Is)
  FAILED=0 CUT=0 SUMMARY=() LOST=""
  for l in "$@"; do run_layout "$l"; done
  printf '%s\t%s\t%s\t%s\t%s\n' "$JOB_ID" "$started" "$(date -Is)" "$(
    IFS=,
    echo "${HOSTS[*]}"
  )" "$FAILED" >>"$OUT/jobs.tsv"
}

# resume_hint: the command that submits this sweep again into the same folder, where layouts
# already ok are skipped and collbench --resume skips the points already recorded. It repeats
# the job's nodes, tasks per node, time limit, partition, account, output, SBATCH_SIGNAL and
# COLLBENCH_* settings; other sbatch options (--gres, --exclusive, -C, a --signal given on the
# command line ...) are not visible to the job and must be added again.
resume_hint() {
  local job cmd=() script args=()
  job=$(scontrol show job "$JOB_ID" 2>/dev/null || true)
  field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<" $job" | head -n1; }
  script=$(field Command)
  [[ $script == /* && -f $script ]] || script="$REPO/slurm/sweep.sh"
  cmd=(sbatch -N "${SLURM_JOB_NUM_NODES:-${#HOSTS[@]}}")
  [[ -n ${SLURM_NTASKS_PER_NODE:-} ]] && cmd+=("--ntasks-per-node=$SLURM_NTASKS_PER_NODE")
  local v
  v=$(field TimeLimit) && [[ -n $v && $v != UNLIMITED ]] && cmd+=("--time=$v")
  v=$(field Partition) && [[ -n $v ]] && cmd+=(-p "$v")
  v=$(field Account) && [[ -n $v && $v != "(null)" ]] && cmd+=(-A "$v")
  # the output file's pattern back from its name: the job id, as a whole number, becomes %j
  v=$(field StdOut) && [[ -n $v ]] &&
    cmd+=("--output=$(dirname "$v")/$(basename "$v" | sed -E "s/(^|[^0-9])$JOB_ID([^0-9]|\$)/\1%j\2/g")")
  args=(--out "$OUT")
  [[ -n $LAYOUTS_ARG ]] && args+=(--layouts "$LAYOUTS_ARG")
  [[ -n $LAUNCHER_FLAG ]] && args+=(--launcher "$LAUNCHER") # else chosen again, or the env's
  ((ANALYSIS)) || args+=(--no-analysis)
  ((TUNE)) && args+=(--tune)
  args+=("$SWEEP")
  ((${#EXTRA[@]})) && args+=(-- "${EXTRA[@]}")
  local envs=() e
  # Slurm does not show a job its --signal; SBATCH_SIGNAL, the environment form, it can see
  for e in SBATCH_SIGNAL COLLBENCH COLLBENCH_REPO COLLBENCH_LAUNCHER COLLBENCH_SRUN_ARGS COLLBENCH_MPIRUN_ARGS \
    COLLBENCH_STEP_TIMEOUT COLLBENCH_WRAP COLLBENCH_OVERSUBSCRIBE; do
    [[ -n ${!e:-} ]] && envs+=("$e=${!e}")
  done
  printf 'cd %q && ' "${SLURM_SUBMIT_DIR:-$PWD}"
  ((${#envs[@]})) && printf '%q ' "${envs[@]}"
  printf '%q ' "${cmd[@]}" "$script" "${args[@]}" | sed 's/ $//'
  echo
}

print_summary() {
  local s
  echo
  say "summary of job $JOB_ID ($OUT/steps.tsv):"
  printf '%s: %-8s %-8s %5s %8s  %s\n' "$PROG" layout status exit seconds note
  for s in "${SUMMARY[@]}"; do echo "$PROG: $s"; done
}
