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
