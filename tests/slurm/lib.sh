# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the sourcing scripts
# Shared helpers for tests/slurm/*.sh (sourced).
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TESTBED="$repo/slurm/testbed"
CLUSTER="$repo/slurm/cluster"
SKIP=77
t0=$(date +%s.%N)
say() { printf "[%6.2fs] %s\n" "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{print a-b}')" "$*"; }
fail() { say "FAIL: $*"; exit 1; }
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
  local ns busy=""
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^cb-(switch|n[0-9]+)$' || true); do
    [[ -n $(ip netns pids "$ns" 2>/dev/null) ]] && busy+=" $ns"
  done
  [[ -z $busy ]] || fail "testbed namespaces in use by running processes:$busy (stop them: slurm/cluster/stop.sh or slurm/testbed/nodes.sh down)"
  "$TESTBED/nodes.sh" down --state "${1:-/tmp/collbench-testbed}" -q >/dev/null 2>&1 || true
}

our_ns_left() { ip netns list | awk '{print $1}' | grep -E '^cb-(switch|n[0-9]+)$' || true; }

# Compile tests/slurm/mpi_probe.cpp into $1.
build_probe() {
  command -v mpicxx >/dev/null || fail "mpicxx not found (apt-get install libopenmpi-dev)"
  mpicxx -O2 -o "$1" "$repo/tests/slurm/mpi_probe.cpp" || fail "mpicxx mpi_probe.cpp failed"
}
