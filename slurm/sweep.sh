#!/usr/bin/env bash
#SBATCH --job-name=collbench
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --time=00:30:00
#SBATCH --output=collbench-%j.out
#
# collbench sweep as one Slurm batch job: one allocation, one job step per node layout.
#
#   sbatch [SBATCH-OPTS] slurm/sweep.sh [OPTIONS] [SWEEP.yaml] [-- EXTRA-COLLBENCH-ARGS...]
#
# SWEEP.yaml defaults to slurm/sweeps/default.yaml. Its `layouts:` (NxR = N nodes x R ranks per
# node, from `collbench --config SWEEP.yaml --print-layouts`) are run one after another, each
# as ONE step `srun --mpi=pmix -N N --ntasks-per-node=R ... collbench --config SWEEP.yaml
# --json <jobdir>/results.jsonl EXTRA...`. Layouts that do not fit the allocation are skipped
# with a message. A failed step is recorded and the sweep goes on; the job fails (exit 1)
# at the end if any step failed.
#
# Options:
#   --out DIR          job folder (default $COLLBENCH_OUT, else $COLLBENCH_RESULTS/<jobid>);
#                      an existing folder is resumed: layouts recorded ok are not run again
#   --layouts LIST     run only these layouts (e.g. 2x2,3x1) instead of the YAML's
#   --launcher L       srun (default, PMIx) or mpirun (sites without PMIx)
#   --no-analysis      do not run analysis/collplot at the end
#   -h, --help         this text
#
# Environment:
#   COLLBENCH            the collbench binary (default <repo>/build/collbench)
#   COLLBENCH_RESULTS    parent of job folders (default <submit dir>/results)
#   COLLBENCH_OUT        job folder (like --out)
#   COLLBENCH_LAUNCHER   srun | mpirun (like --launcher)
#   COLLBENCH_SRUN_ARGS / COLLBENCH_MPIRUN_ARGS   extra launcher options (word-split)
#   COLLBENCH_STEP_TIMEOUT  seconds one step may take (0 = no limit, the default)
#   COLLBENCH_WRAP       a command put before collbench in every step (word-split), e.g.
#                        "$PWD/slurm/profile.sh --ranks 0 --out $PWD/prof --"
#   COLLBENCH_OVERSUBSCRIBE=1  more ranks than cores are intended (also implied by the local
#                        test cluster, slurm/cluster/): yield_when_idle, mpirun --oversubscribe
#   COLLBENCH_ANALYSIS=0 same as --no-analysis;  COLLBENCH_REPO: the collbench checkout
#
# Job folder: results.jsonl, steps.tsv, steps/<layout>.log, slurm-env.txt, nodelist.txt,
# job.txt (scontrol show job), jobs.tsv (one line per job that used the folder), sweep.yaml,
# plots/. See slurm/README.md.
set -euo pipefail

PROG=sweep
say() { echo "$PROG: $*"; }
warn() { echo "$PROG: warning: $*" >&2; }
die() {
  echo "$PROG: error: $*" >&2
  exit 2
}

usage() {
  local self
  self=$(self_path)
  if [[ -r $self ]]; then
    sed -n '8,42p' "$self" | sed 's/^# \{0,1\}//'
  else
    echo "usage: sbatch [SBATCH-OPTS] slurm/sweep.sh [--out DIR] [--layouts LIST] [--launcher srun|mpirun] [SWEEP.yaml] [-- ARGS...]"
  fi
}

# --- where are we ---------------------------------------------------------------------------
# Under sbatch this script runs as a copy in slurmd's spool folder, so its own path says
# nothing about the checkout; the original path is in `scontrol show job` (Command=).
script_dir() { cd "$(dirname "${BASH_SOURCE[0]}")" 2>/dev/null && pwd; }
submitted_script() {
  [[ -n ${SLURM_JOB_ID:-} ]] && command -v scontrol >/dev/null || return 0
  scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *Command=\([^ ]*\).*/\1/p' | head -n1
}
self_path() {
  local d
  d=$(script_dir)
  if [[ -f $d/sweep.sh && -d $d/cluster ]]; then echo "$d/sweep.sh"; else submitted_script; fi
}
is_repo() { [[ -n $1 && -f $1/slurm/sweep.sh && -d $1/slurm/sweeps ]]; }
find_repo() {
  local c sub
  sub=$(submitted_script)
  for c in "${COLLBENCH_REPO:-}" "$(script_dir)/.." "${sub:+$(dirname "$sub")/..}" \
    "${SLURM_SUBMIT_DIR:-}" "$PWD"; do
    if is_repo "$c"; then
      (cd "$c" && pwd)
      return 0
    fi
  done
  return 1
}

# resolve_file PATH: absolute path of an existing file, tried relative to the current
# directory (= the submit directory under sbatch) and then to the repository.
resolve_file() {
  local p=$1
  if [[ $p == /* ]]; then
    [[ -f $p ]] && { echo "$p"; return 0; }
    return 1
  fi
  local base
  for base in "$PWD" "${SLURM_SUBMIT_DIR:-}" "${REPO:-}"; do
    [[ -n $base && -f $base/$p ]] && { echo "$(cd "$(dirname "$base/$p")" && pwd)/$(basename "$p")"; return 0; }
  done
  return 1
}

# --- the allocation -------------------------------------------------------------------------
# expand_counts "4(x2),2" -> "4 4 2"  (format of SLURM_TASKS_PER_NODE / SLURM_JOB_CPUS_PER_NODE)
expand_counts() {
  local item out=() n k i
  local IFS=,
  for item in $1; do
    if [[ $item =~ ^([0-9]+)\(x([0-9]+)\)$ ]]; then
      n=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
      for ((i = 0; i < k; i++)); do out+=("$n"); done
    elif [[ $item =~ ^[0-9]+$ ]]; then
      out+=("$item")
    fi
  done
  IFS=' '
  echo "${out[*]}"
}

read_allocation() {
  [[ -n ${SLURM_JOB_ID:-} ]] || die "not inside a Slurm allocation (no SLURM_JOB_ID): submit with 'sbatch slurm/sweep.sh ...' or run it inside salloc"
  command -v srun >/dev/null || die "srun not found"
  JOB_ID=$SLURM_JOB_ID
  local nodelist=${SLURM_JOB_NODELIST:-${SLURM_NODELIST:-}}
  [[ -n $nodelist ]] || die "SLURM_JOB_NODELIST is not set"
  mapfile -t HOSTS < <(scontrol show hostnames "$nodelist")
  ((${#HOSTS[@]})) || die "could not expand the node list '$nodelist' (scontrol show hostnames)"
  local counts=${SLURM_TASKS_PER_NODE:-${SLURM_JOB_CPUS_PER_NODE:-}}
  read -r -a SLOTS <<<"$(expand_counts "$counts")"
  if ((${#SLOTS[@]} != ${#HOSTS[@]})); then
    warn "cannot match tasks per node '$counts' to ${#HOSTS[@]} nodes; assuming ${SLURM_NTASKS_PER_NODE:-1} each"
    SLOTS=()
    local h
    for h in "${HOSTS[@]}"; do SLOTS+=("${SLURM_NTASKS_PER_NODE:-1}"); done
  fi
}

# pick_hosts R N: the first N nodes of the allocation with at least R task slots, or fail.
pick_hosts() {
  local r=$1 n=$2 i
  PICKED=()
  for ((i = 0; i < ${#HOSTS[@]} && ${#PICKED[@]} < n; i++)); do
    ((SLOTS[i] >= r)) && PICKED+=("${HOSTS[i]}")
  done
  ((${#PICKED[@]} == n))
}

# --- Open MPI environment ---------------------------------------------------------------------
# Only what this situation needs: root needs Open MPI's permission; more ranks than cores is
# only assumed where it is intended (the local test cluster or COLLBENCH_OVERSUBSCRIBE=1).
setup_mpi_env() {
  OVERSUB=0
  if [[ ${COLLBENCH_OVERSUBSCRIBE:-} == 1 || -n ${COLLBENCH_CLUSTER_STATE:-} ]]; then OVERSUB=1; fi
  if [[ $(id -u) == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  if ((OVERSUB)); then
    export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
    local why="COLLBENCH_OVERSUBSCRIBE=1"
    [[ -n ${COLLBENCH_CLUSTER_STATE:-} ]] && why="local test cluster $COLLBENCH_CLUSTER_STATE"
    [[ $LAUNCHER == mpirun ]] && why+="; mpirun --oversubscribe"
    say "more ranks than cores allowed ($why): OMPI_MCA_mpi_yield_when_idle=$OMPI_MCA_mpi_yield_when_idle"
  fi
}

# --- steps ----------------------------------------------------------------------------------
now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" 'BEGIN{printf "%.1f", a-b}'; }

record() { # layout status exit seconds message
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$JOB_ID" "$CONFIG_KEY" "$5" >>"$OUT/steps.tsv"
  SUMMARY+=("$(printf '%-8s %-8s %5s %8s  %s' "$1" "$2" "$3" "$4" "$5")")
}

already_ok() { # layout -> job id that completed it with this configuration
  awk -F'\t' -v l="$1" -v c="$CONFIG_KEY" '$1==l && $2=="ok" && $6==c {j=$5} END{if (j!="") {print j} else {exit 1}}' "$OUT/steps.tsv"
}

launch_cmd() { # N R -> CMD array
  local n=$1 r=$2 hosts
  hosts=$(
    IFS=,
    echo "${PICKED[*]}"
  )
  CMD=()
  if ((STEP_TIMEOUT > 0)); then CMD+=(timeout --signal=TERM --kill-after=30 "$STEP_TIMEOUT"); fi
  case $LAUNCHER in
    srun)
      # one step; steps of this job run one after another, each gets the nodes it names.
      # --kill-on-bad-exit: a rank that dies ends the step instead of hanging the others.
      CMD+=(srun --mpi=pmix --nodes="$n" --ntasks="$((n * r))" --ntasks-per-node="$r"
        --nodelist="$hosts" --kill-on-bad-exit=1 --job-name="collbench-${n}x$r")
      # shellcheck disable=SC2206  # word-splitting intended
      [[ -n ${COLLBENCH_SRUN_ARGS:-} ]] && CMD+=(${COLLBENCH_SRUN_ARGS})
      ;;
    mpirun)
      local hs=() h
      for h in "${PICKED[@]}"; do hs+=("$h:$r"); done
      CMD+=(mpirun -np "$((n * r))" --map-by "ppr:$r:node" --host "$(
        IFS=,
        echo "${hs[*]}"
      )")
      ((OVERSUB)) && CMD+=(--oversubscribe --bind-to none)
      [[ $(id -u) == 0 ]] && CMD+=(--allow-run-as-root)
      # shellcheck disable=SC2206
      [[ -n ${COLLBENCH_MPIRUN_ARGS:-} ]] && CMD+=(${COLLBENCH_MPIRUN_ARGS})
      ;;
  esac
  # shellcheck disable=SC2206  # e.g. COLLBENCH_WRAP="slurm/profile.sh --ranks 0 --"
  [[ -n ${COLLBENCH_WRAP:-} ]] && CMD+=(${COLLBENCH_WRAP})
  CMD+=("$BIN" --config "$SWEEP" --json "$OUT/results.jsonl" "${RESUME_ARG[@]}" "${EXTRA[@]}")
}

CURRENT="" CURRENT_T0=""
on_signal() {
  local sig=$1
  if [[ -n $CURRENT ]]; then
    record "$CURRENT" failed "$((128 + sig))" "$(elapsed "$CURRENT_T0")" "interrupted by signal $sig (time limit or scancel)"
  fi
  say "interrupted by signal $sig; the job folder $OUT can be resumed (--out)"
  exit "$((128 + sig))"
}

run_layout() { # layout
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

# --- analysis -------------------------------------------------------------------------------
analyze() {
  local collplot="$REPO/analysis/collplot" py=${COLLBENCH_PYTHON:-/usr/bin/python3}
  if [[ $ANALYSIS == 0 ]]; then
    say "analysis skipped (--no-analysis)"
  elif [[ ! -s $OUT/results.jsonl ]]; then
    say "no results to analyse"
  elif [[ -z $REPO || ! -f $collplot ]]; then
    say "note: analysis/collplot not found; analyse later with: sbatch --dependency=afterany:$JOB_ID slurm/analyze.sh $OUT"
  elif ! "$py" -c 'import matplotlib' 2>/dev/null; then
    say "note: $py has no matplotlib here; analyse elsewhere: sbatch --dependency=afterany:$JOB_ID slurm/analyze.sh $OUT  (or: analysis/collplot $OUT -o $OUT/plots)"
  else
    say "analysis: $collplot $OUT -o $OUT/plots"
    if MPLBACKEND=${MPLBACKEND:-Agg} "$py" "$collplot" "$OUT" -o "$OUT/plots" >"$OUT/plots.log" 2>&1; then
      say "plots: $OUT/plots/ (report.html, summary.md)"
    else
      warn "analysis failed (see $OUT/plots.log); the measurements are in $OUT/results.jsonl"
      tail -n 5 "$OUT/plots.log" | sed "s/^/$PROG:   | /" >&2
    fi
  fi
}

# --- main -----------------------------------------------------------------------------------
main() {
  local sweep_arg="" layouts_arg="" out_arg=${COLLBENCH_OUT:-}
  LAUNCHER=${COLLBENCH_LAUNCHER:-srun}
  ANALYSIS=${COLLBENCH_ANALYSIS:-1}
  EXTRA=()
  while (($#)); do
    case $1 in
      --out) [[ $# -ge 2 ]] || die "--out needs a folder"; out_arg=$2; shift 2 ;;
      --out=*) out_arg=${1#*=}; shift ;;
      --layouts) [[ $# -ge 2 ]] || die "--layouts needs a list"; layouts_arg=$2; shift 2 ;;
      --layouts=*) layouts_arg=${1#*=}; shift ;;
      --launcher) [[ $# -ge 2 ]] || die "--launcher needs srun or mpirun"; LAUNCHER=$2; shift 2 ;;
      --launcher=*) LAUNCHER=${1#*=}; shift ;;
      --no-analysis) ANALYSIS=0; shift ;;
      -h | --help) usage; exit 0 ;;
      --) shift; EXTRA=("$@"); break ;;
      -*) die "unknown option '$1' (collbench options go after '--'; see --help)" ;;
      *)
        [[ -z $sweep_arg ]] || die "only one sweep file please ('$sweep_arg', '$1'); collbench options go after '--'"
        sweep_arg=$1; shift ;;
    esac
  done
  case $LAUNCHER in srun | mpirun) ;; *) die "launcher must be srun or mpirun, not '$LAUNCHER'" ;; esac
  STEP_TIMEOUT=${COLLBENCH_STEP_TIMEOUT:-0}
  [[ $STEP_TIMEOUT =~ ^[0-9]+$ ]] || die "COLLBENCH_STEP_TIMEOUT must be seconds"

  REPO=$(find_repo) || REPO=""
  read_allocation

  # the binary
  if [[ -n ${COLLBENCH:-} ]]; then
    BIN=$(command -v "$COLLBENCH" 2>/dev/null || true)
    [[ $BIN == */* ]] || BIN=$COLLBENCH
  else
    [[ -n $REPO ]] || die "cannot find the collbench checkout (submit from it, or set COLLBENCH=/path/to/collbench and COLLBENCH_REPO)"
    BIN="$REPO/build/collbench"
  fi
  [[ $BIN == /* ]] || BIN="$PWD/$BIN"
  [[ -x $BIN ]] || die "collbench binary '$BIN' not found or not executable (build it: scripts/build.sh, or set COLLBENCH=/path/to/collbench)"

  # the sweep file
  sweep_arg=${sweep_arg:-slurm/sweeps/default.yaml}
  SWEEP=$(resolve_file "$sweep_arg") || die "sweep file '$sweep_arg' not found (looked in $PWD${REPO:+ and $REPO})"

  # the layouts
  local layouts=() l out
  if [[ -n $layouts_arg ]]; then
    IFS=', ' read -r -a layouts <<<"$layouts_arg"
  else
    out=$("$BIN" --config "$SWEEP" --print-layouts 2>&1) ||
      die "'$BIN --config $SWEEP --print-layouts' failed: $out"
    mapfile -t layouts < <(tr -d ' \r' <<<"$out" | grep -v '^$' || true)
  fi
  for l in "${layouts[@]}"; do
    [[ $l =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "bad layout '$l' (expected NxR, e.g. 2x4)"
  done
  if ((${#layouts[@]} == 0)); then
    layouts=("${#HOSTS[@]}x${SLOTS[0]}")
    say "the sweep names no layouts: using the whole allocation, ${layouts[0]}"
  fi

  # the job folder
  local results=${COLLBENCH_RESULTS:-${SLURM_SUBMIT_DIR:-$PWD}/results}
  OUT=${out_arg:-$results/$JOB_ID}
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

  RESUME_ARG=()
  if "$BIN" --help 2>/dev/null | grep -q -- '--resume'; then RESUME_ARG=(--resume); fi

  setup_mpi_env
  local started
  started=$(date -Is)
  say "job $JOB_ID on ${HOSTS[*]} (tasks per node: ${SLOTS[*]}), launcher $LAUNCHER"
  say "collbench: $BIN"
  say "sweep: $SWEEP (config $CONFIG_KEY)${EXTRA[*]:+, extra args: ${EXTRA[*]}}"
  say "layouts: ${layouts[*]}"
  say "output: $OUT"

  FAILED=0 SUMMARY=()
  trap 'on_signal 15' TERM
  trap 'on_signal 2' INT
  trap 'on_signal 10' USR1
  for l in "${layouts[@]}"; do run_layout "$l"; done
  trap - TERM INT USR1

  printf '%s\t%s\t%s\t%s\t%s\n' "$JOB_ID" "$started" "$(date -Is)" "$(
    IFS=,
    echo "${HOSTS[*]}"
  )" "$FAILED" >>"$OUT/jobs.tsv"

  echo
  say "summary of job $JOB_ID ($OUT/steps.tsv):"
  printf '%s: %-8s %-8s %5s %8s  %s\n' "$PROG" layout status exit seconds note
  local s
  for s in "${SUMMARY[@]}"; do echo "$PROG: $s"; done
  analyze
  say "results: $OUT/results.jsonl"
  if ((FAILED)); then
    say "$FAILED step(s) failed"
    exit 1
  fi
  say "done"
}

main "$@"
