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

# A signal (time limit, scancel) during a step: record it failed, so a resubmission runs it again.
CURRENT="" CURRENT_T0=""
on_signal() {
  local sig=$1
  if [[ -n $CURRENT ]]; then
    record "$CURRENT" failed "$((128 + sig))" "$(elapsed "$CURRENT_T0")" "interrupted by signal $sig (time limit or scancel)"
  fi
  say "interrupted by signal $sig; the job folder $OUT can be resumed (--out)"
  exit "$((128 + sig))"
}

run_layout() { # LAYOUT: skip it (done, does not fit) or run it as one step; FAILED counts failures
  local layout=$1 n r prev rc t0 secs log
  n=${layout%x*} r=${layout#*x}
  if prev=$(already_ok "$layout"); then
    say "$layout: already ok (job $prev, same configuration), not run again"
    record "$layout" skipped - 0 "resume: ok in job $prev"
    return 0
  fi
  if ((n > ${#HOSTS[@]})); then
    say "$layout: skipped, needs $n nodes, the allocation has ${#HOSTS[@]}"
    record "$layout" skipped - 0 "needs $n nodes, allocation has ${#HOSTS[@]}"
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
  CURRENT=$layout CURRENT_T0=$(now)
  t0=$CURRENT_T0
  rc=0
  "${CMD[@]}" </dev/null >>"$log" 2>&1 || rc=$?
  secs=$(elapsed "$t0")
  CURRENT=""
  if ((rc == 0)); then
    say "$layout: ok in ${secs} s"
    record "$layout" ok 0 "$secs" ""
  else
    FAILED=$((FAILED + 1))
    say "$layout: FAILED (exit $rc) after ${secs} s; last lines of $log:"
    tail -n 15 "$log" | sed "s/^/$PROG:   | /"
    record "$layout" failed "$rc" "$secs" "see steps/$layout.log"
  fi
}

# run_layouts LAYOUT...: every layout in order, then one jobs.tsv line for this job.
run_layouts() {
  local started l
  started=$(date -Is)
  FAILED=0 SUMMARY=()
  trap 'on_signal 15' TERM
  trap 'on_signal 2' INT
  trap 'on_signal 10' USR1
  for l in "$@"; do run_layout "$l"; done
  trap - TERM INT USR1
  printf '%s\t%s\t%s\t%s\t%s\n' "$JOB_ID" "$started" "$(date -Is)" "$(
    IFS=,
    echo "${HOSTS[*]}"
  )" "$FAILED" >>"$OUT/jobs.tsv"
}

print_summary() {
  local s
  echo
  say "summary of job $JOB_ID ($OUT/steps.tsv):"
  printf '%s: %-8s %-8s %5s %8s  %s\n' "$PROG" layout status exit seconds note
  for s in "${SUMMARY[@]}"; do echo "$PROG: $s"; done
}
