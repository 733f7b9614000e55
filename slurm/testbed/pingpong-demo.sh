#!/usr/bin/env bash
# collbench pingpong within a node vs across nodes, on the emulated testbed (one command).
#
#   slurm/testbed/pingpong-demo.sh [LAYOUT] [-- EXTRA-COLLBENCH-ARGS...]
#
# LAYOUT (default 2x2: 2 nodes x 2 ranks) must have >= 2 nodes. Runs
#   collbench --op pingpong --algo latency,bw,bibw -b 8 -e 4M -f 4 --pairs auto
# through mpirun.sh: rank 0 <-> rank 1 share node n1 (shared memory, vader), rank 0 <-> the
# first rank of n2 crosses the emulated switch (TCP). The table prints both pairs side by side
# per size: time p50 and bandwidth each, and the inter/intra time ratio. Extra arguments go to
# collbench (they override these: e.g. -- -e 64M -n 50, or -- --json pp.jsonl for the records).
# Nodes the demo brings up are brought down again at the end.
#
# Environment: COLLBENCH (the binary; default build/collbench under the repository),
# COLLBENCH_TESTBED_STATE (testbed state dir, as for mpirun.sh). Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
layout=2x2
if (($#)) && [[ $1 != -- ]]; then layout=$1; shift; fi
[[ $layout =~ ^([0-9]+)x([0-9]+)$ ]] || die "LAYOUT must be NxR, got '$layout'"
((10#${BASH_REMATCH[1]} >= 2)) || die "LAYOUT needs at least 2 nodes for an inter-node pair, got '$layout'"
nodes=$((10#${BASH_REMATCH[1]}))
[[ ${1:-} == -- ]] && shift
collbench=${COLLBENCH:-$repo/build/collbench}
[[ -n $COLLBENCH_INSTALLED_BINDIR ]] && collbench=${COLLBENCH:-$COLLBENCH_INSTALLED_BINDIR/collbench} # installed (lib.sh)
[[ -x $collbench ]] || die "no collbench at $collbench (build it: scripts/build.sh, or set COLLBENCH)"
[[ $(id -u) == 0 ]] || die "must run as root (network namespaces)"

state=${COLLBENCH_TESTBED_STATE:-/tmp/collbench-testbed}
if ! "$here/nodes.sh" check "$nodes" --state "$state"; then
  "$here/nodes.sh" up "$nodes" --state "$state" -q >&2
  trap '"$here/nodes.sh" down --state "$state" -q >/dev/null 2>&1' EXIT
fi
"$here/mpirun.sh" --state "$state" "$layout" -- "$collbench" --op pingpong --algo latency,bw,bibw \
  -b 8 -e 4M -f 4 --pairs auto "$@"
