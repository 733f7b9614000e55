#!/usr/bin/env bash
# A collbench sweep through a real Slurm cluster on this one machine: starts the local
# cluster (slurm/cluster/start.sh: munge, slurmctld, one slurmd per emulated node), submits
# slurm/sweep.sh with sbatch, waits, prints the step summary and where the results and plots
# are, and stops the cluster it started (always, also on failure or Ctrl-C).
#
#   slurm/local-sweep.sh [--timeout S] [--nodes N] [SWEEP.yaml] [-- EXTRA-COLLBENCH-ARGS...]
#
# SWEEP.yaml defaults to slurm/sweeps/small.yaml. The allocation is sized from the sweep's
# layouts (`collbench --print-layouts`): -N <largest N> --ntasks-per-node=<largest R>
# (3 x 2 for small.yaml); --nodes N asks for more nodes (layouts that need more than the
# allocation are skipped by sweep.sh). Needs root (network namespaces), slurm-wlm, munge.
#
# Environment: COLLBENCH (binary, default build/collbench; installed: P/bin/collbench),
# COLLBENCH_RESULTS (default results/local, ignored by git; installed: ./results/local),
# COLLBENCH_CLUSTER_STATE (default /tmp/collbench-cluster),
# COLLBENCH_LOCAL_TIMEOUT (seconds to wait for the job, default 1800), COLLBENCH_OUT (resume
# into that job folder). A cluster already running in the same state folder is used and
# left running.
# Exit status: 0 when the job COMPLETED, 1 when it failed, 124 when it timed out (cancelled),
# 2 on usage/setup errors.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/scripts/lib.sh"
PROG=local-sweep
CLUSTER="$REPO/slurm/cluster"
STARTED=0 JOB="" WAIT_PID="" STATE_FILE=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n ${WAIT_PID:-} ]]; then # wait-job.sh and its squeue poll (by PID)
    local kids
    kids=$(ps -o pid= --ppid "$WAIT_PID" 2>/dev/null | tr '\n' ' ')
    # shellcheck disable=SC2086
    kill "$WAIT_PID" $kids 2>/dev/null || true
  fi
  [[ -n ${STATE_FILE:-} ]] && rm -f "$STATE_FILE"
  if [[ -n $JOB && ${JOB_DONE:-0} == 0 ]]; then
    say "cancelling job $JOB"
    "$CLUSTER/client.sh" scancel "$JOB" >/dev/null 2>&1 || true
  fi
  if ((STARTED)); then
    say "stopping the local cluster ($COLLBENCH_CLUSTER_STATE)"
    "$CLUSTER/stop.sh" >/dev/null 2>&1 || warn "stop.sh reported problems; run $CLUSTER/stop.sh"
  fi
  exit "$rc"
}

cluster_running() { # a healthy cluster of ours in the state folder?
  [[ -f $COLLBENCH_CLUSTER_STATE/env.sh ]] && timeout 10 "$CLUSTER/client.sh" sinfo -h >/dev/null 2>&1
}

main() {
  local sweep="" timeout_s=${COLLBENCH_LOCAL_TIMEOUT:-1800} want_nodes=0 extra=()
  while (($#)); do
    case $1 in
      --timeout) timeout_s=${2:?--timeout needs seconds}; shift 2 ;;
      --timeout=*) timeout_s=${1#*=}; shift ;;
      --nodes) want_nodes=${2:?--nodes needs a number}; shift 2 ;;
      --nodes=*) want_nodes=${1#*=}; shift ;;
      -h | --help) usage_from_header; exit 0 ;;
      --) shift; extra=("$@"); break ;;
      -*) die "unknown option '$1' (collbench options go after '--')" ;;
      *) [[ -z $sweep ]] || die "only one sweep file please"; sweep=$1; shift ;;
    esac
  done
  [[ $timeout_s =~ ^[0-9]+$ && $want_nodes =~ ^[0-9]+$ ]] || die "--timeout and --nodes take numbers"
  [[ $(id -u) == 0 ]] || die "must run as root (the local cluster uses network namespaces)"

  local bin=${COLLBENCH:-$REPO/build/collbench} results=$REPO/results/local
  if [[ -n $COLLBENCH_INSTALLED_BINDIR ]]; then # an installed tree (scripts/lib.sh)
    bin=${COLLBENCH:-$COLLBENCH_INSTALLED_BINDIR/collbench} results=$PWD/results/local
  fi
  [[ $bin == /* ]] || bin="$PWD/$bin"
  [[ -x $bin ]] || die "collbench binary '$bin' not found (scripts/build.sh, or COLLBENCH=/path/to/collbench)"
  sweep=${sweep:-$REPO/slurm/sweeps/small.yaml}
  [[ -f $sweep ]] || die "sweep file '$sweep' not found"
  sweep=$(cd "$(dirname "$sweep")" && pwd)/$(basename "$sweep")

  # size the allocation from the layouts
  local layouts n=0 r=1 l
  layouts=$("$bin" --config "$sweep" --print-layouts) || die "$bin --config $sweep --print-layouts failed"
  for l in $layouts; do
    [[ $l =~ ^([0-9]+)x([0-9]+)$ ]] || die "bad layout '$l' from --print-layouts"
    ((BASH_REMATCH[1] > n)) && n=${BASH_REMATCH[1]}
    ((BASH_REMATCH[2] > r)) && r=${BASH_REMATCH[2]}
  done
  ((n > 0)) || { n=3 r=2; }
  ((want_nodes > n)) && n=$want_nodes
  local cpus=$((r > 4 ? r : 4))
  say "sweep $sweep: layouts $(echo "$layouts" | paste -sd ' ' -); allocation -N $n --ntasks-per-node=$r"

  export COLLBENCH_CLUSTER_STATE=${COLLBENCH_CLUSTER_STATE:-/tmp/collbench-cluster}
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if cluster_running; then
    local sig
    sig=$(cat "$COLLBENCH_CLUSTER_STATE/cluster.sig" 2>/dev/null || true)
    local have=0
    [[ $sig =~ nodes=([0-9]+) ]] && have=${BASH_REMATCH[1]}
    ((have >= n)) ||
      die "a local cluster ($sig) is already running in $COLLBENCH_CLUSTER_STATE but the sweep needs $n nodes: stop it ($CLUSTER/stop.sh) or use another COLLBENCH_CLUSTER_STATE"
    say "using the local cluster already running in $COLLBENCH_CLUSTER_STATE ($sig); it stays running"
  else
    local busy
    busy=$(busy_testbed_namespaces | paste -sd ' ' -)
    [[ -z $busy ]] || die "the emulated-node namespaces are in use by another cluster or test ($busy); stop it first (slurm/cluster/stop.sh --state DIR, or slurm/testbed/nodes.sh down)"
    STARTED=1
    "$CLUSTER/start.sh" --nodes "$n" --cpus "$cpus" || die "could not start the local cluster (logs: $COLLBENCH_CLUSTER_STATE/log/)"
  fi

  export COLLBENCH=$bin
  export COLLBENCH_RESULTS=${COLLBENCH_RESULTS:-$results}
  mkdir -p "$COLLBENCH_RESULTS"
  cd "$REPO"
  JOB=$("$CLUSTER/client.sh" sbatch --parsable -N "$n" --ntasks-per-node="$r" \
    --output="$COLLBENCH_RESULTS/collbench-%j.out" slurm/sweep.sh "$sweep" -- "${extra[@]}") ||
    die "sbatch failed: $JOB"
  JOB=${JOB%%;*}
  local out_file="$COLLBENCH_RESULTS/collbench-$JOB.out" jobdir=${COLLBENCH_OUT:-$COLLBENCH_RESULTS/$JOB}
  say "submitted job $JOB; waiting (at most ${timeout_s} s); output: $out_file"
  local state rc=0
  # wait-job.sh in the background: `wait` returns at once on SIGTERM/SIGINT (a foreground
  # child would delay our trap until the job ends)
  STATE_FILE=$(mktemp)
  "$CLUSTER/wait-job.sh" --timeout "$timeout_s" "$JOB" >"$STATE_FILE" &
  WAIT_PID=$!
  wait "$WAIT_PID" || rc=$?
  WAIT_PID=""
  state=$(cat "$STATE_FILE")
  ((rc == 0 || rc == 1)) && JOB_DONE=1
  ((rc == 124)) && state="TIMEOUT (still running after ${timeout_s} s; cancelled)"
  echo
  if [[ -f $out_file ]]; then
    # the job's own summary (from "summary of job" to the end)
    sed -n '/^sweep: summary of job/,$p' "$out_file"
    [[ $rc == 0 ]] || { echo "--- last lines of $out_file:"; tail -n 30 "$out_file"; }
  fi
  echo
  say "job $JOB: $state"
  say "job output:  $out_file"
  say "job folder:  $jobdir  (results.jsonl, steps.tsv, steps/*.log)"
  if [[ -d $jobdir/plots ]]; then say "plots:       $jobdir/plots/report.html"; fi
  case $rc in
    0) return 0 ;;
    124) return 124 ;;
    *) return 1 ;;
  esac
}

main "$@"
