# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the sourcing scripts
# Test helpers for tests/slurm/*.sh (sourced), on top of the scripts' own library.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"
TESTBED="$repo/slurm/testbed"
CLUSTER="$repo/slurm/cluster"
SKIP=77
# Every test line carries the seconds since the start: where a slow or hung step went.
t0=$(now)
step() { printf "[%6.2fs] %s\n" "$(elapsed "$t0" %.2f)" "$*"; }
fail() { step "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit $SKIP; }

# Exit 77 unless we are root and can create (and delete) a network namespace.
require_netns() {
  [[ $(id -u) == 0 ]] || skip "needs root (network namespaces)"
  command -v ip >/dev/null && command -v nsenter >/dev/null && command -v unshare >/dev/null ||
    skip "needs iproute2 (ip) and util-linux (nsenter, unshare)"
  local probe="cbprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then skip "cannot create network namespaces here"; fi
  ip netns del "$probe" 2>/dev/null || true
}

# The testbed namespaces are global (cb-switch, cb-nI). Refuse to run over a live testbed;
# take over a stale one (namespaces without processes, e.g. left by a crashed run).
claim_testbed() {
  local busy
  busy=$(busy_testbed_namespaces | paste -sd ' ' -)
  [[ -z $busy ]] || fail "testbed namespaces in use by running processes: $busy (stop them: slurm/cluster/stop.sh or slurm/testbed/nodes.sh down)"
  "$TESTBED/nodes.sh" down --state "${1:-/tmp/collbench-testbed}" -q >/dev/null 2>&1 || true
}

# testbed_session NAME: this test's own testbed state (STATE, exported for nodes.sh) and scratch
# folder (work); at exit the nodes go down and both folders are removed.
testbed_session() {
  STATE=${TMPDIR:-/tmp}/collbench-$1-test
  export COLLBENCH_TESTBED_STATE=$STATE
  work=$(mktemp -d "/tmp/collbench-$1-work.XXXXXX")
  trap '"$TESTBED/nodes.sh" down --state "$STATE" >/dev/null 2>&1; rm -rf "$STATE" "$work"' EXIT
  trap 'exit 143' TERM INT
  claim_testbed "$STATE"
}

# Compile tests/slurm/mpi_probe.cpp into $1.
build_probe() {
  command -v mpicxx >/dev/null || fail "mpicxx not found (apt-get install libopenmpi-dev)"
  mpicxx -O2 -o "$1" "$repo/tests/slurm/mpi_probe.cpp" || fail "mpicxx mpi_probe.cpp failed"
}

# --- a test on its own local Slurm cluster (sweep_test.sh, node_loss_test.sh, time_limit_test.sh)
# cluster_test NAME BUDGET_S: sets STATE (exported as COLLBENCH_CLUSTER_STATE, a fixed folder so
# a run killed by a CTest timeout is cleaned up by the next), work (scratch, o+x: jobs write
# there), C (client.sh), DEADLINE. At exit the cluster is stopped; with ok=1 both folders are
# removed, otherwise job outputs, steps.tsv, step and daemon log tails are printed and kept.
# Core dumps are allowed (srun passes the limit to the tasks, whose working folder is the
# checkout): a rank that dies by a signal leaves a core, and the diagnostics print its backtrace
# (gdb, where installed). Why: a 3x2 step's rank has died of a SIGSEGV at a null address in about
# 1 of 4 CI runs, with no backtrace (tests/README.md).
cluster_test() {
  STATE=${TMPDIR:-/tmp}/collbench-$1-test
  export COLLBENCH_CLUSTER_STATE=$STATE
  DEADLINE=$((SECONDS + $2))
  "$CLUSTER/stop.sh" >/dev/null 2>&1
  work=$(mktemp -d "/tmp/collbench-$1-work.XXXXXX")
  chmod 755 "$work"
  C="$CLUSTER/client.sh"
  ok=0
  ulimit -c unlimited 2>/dev/null || true
  core_mark="$work/.core-mark"
  : >"$core_mark"
  trap cluster_test_cleanup EXIT
  trap 'exit 143' TERM INT
  claim_testbed "$STATE/testbed"
}
cluster_test_logs() {
  local f
  echo "===== diagnostics ====="
  for f in "$work"/job-*.out; do [[ -f $f ]] && { echo "--- $f"; tail -n 40 "$f"; }; done
  for f in "$work"/out*/steps.tsv; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done
  for f in "$work"/out*/steps/*.log; do [[ -f $f ]] && { echo "--- $f (tail)"; tail -n 20 "$f"; }; done
  for f in "$STATE"/log/slurmctld.log "$STATE"/log/slurmd-n*.log; do
    [[ -f $f ]] && { echo "--- $f (tail)"; tail -n 25 "$f"; }
  done
  timeout 10 "$C" squeue -t all 2>/dev/null || true
  cluster_test_cores
}
# The backtrace of every core a task left in the checkout during this test; the core is moved to
# $work (kept with it).
cluster_test_cores() {
  local f
  for f in "$repo"/core "$repo"/core.*; do
    [[ -f $f && $f -nt $core_mark ]] || continue
    mv "$f" "$work/" && f="$work/$(basename "$f")"
    echo "--- $f: $(file -b "$f" 2>/dev/null | cut -c1-160)"
    if command -v gdb >/dev/null; then
      timeout 60 gdb -q -batch -ex 'info threads' -ex 'thread apply all bt 30' "$BIN" "$f" 2>&1 | tail -n 120
    else
      echo "(no gdb here: the core is kept)"
    fi
  done
}
cluster_test_cleanup() {
  ((ok)) || cluster_test_logs
  "$CLUSTER/stop.sh" >/dev/null 2>&1
  if ((ok)); then rm -rf "$work" "$STATE"; else echo "kept: $work (state $STATE)"; fi
}
# left: seconds left of the test's budget (at least 5).
left() { local l=$((DEADLINE - SECONDS)); ((l > 5)) && echo "$l" || echo 5; }

# submit OUTVAR SBATCH-AND-SCRIPT-ARGS...: sbatch from the checkout with COLLBENCH=$BIN and the
# job's output in $work/job-<id>.out.
submit() {
  local __var=$1 id
  shift
  id=$(cd "$repo" && COLLBENCH=$BIN timeout 30 "$C" sbatch --parsable --output="$work/job-%j.out" "$@") ||
    fail "sbatch $*: $id"
  id=${id%%;*}
  printf -v "$__var" '%s' "$id"
  step "job $id: sbatch $*"
}
# wait_job JOB EXPECTED-STATE MAX-SECONDS (bounded by the budget; the job is cancelled on timeout)
wait_job() {
  local st rc=0 limit=$3
  (($(left) < limit)) && limit=$(left)
  st=$("$CLUSTER/wait-job.sh" --timeout "$limit" "$1") || rc=$?
  step "job $1: $st"
  ((rc == 124)) && { timeout 10 "$C" scancel "$1"; fail "job $1 still running after ${limit}s"; }
  [[ $st == "$2" ]] || fail "job $1 ended $st, expected $2"
}
# require_cluster_tools BIN [LAUNCHER]: slurm, munge and the MPI's launcher (default Open MPI's
# mpirun; MPICH's mpiexec.hydra) installed; BIN (collbench) executable.
require_cluster_tools() {
  local c
  for c in slurmctld slurmd munged srun "${2:-mpirun}"; do
    command -v "$c" >/dev/null || fail "'$c' not installed (apt-get install slurm-wlm munge openmpi-bin mpich)"
  done
  BIN=${1:-${COLLBENCH:-}}
  [[ -n $BIN ]] || fail "usage: $(basename "$0") /path/to/collbench"
  BIN=$(realpath "$BIN" 2>/dev/null) || BIN=""
  [[ -n $BIN && -x $BIN ]] || fail "collbench binary '${1:-}' not found or not executable"
  PY=/usr/bin/python3
  [[ -x $PY ]] || fail "$PY not found"
}
