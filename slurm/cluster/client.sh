#!/usr/bin/env bash
# Run a Slurm client (sbatch, srun, squeue, sinfo, scontrol, scancel, salloc ...) against the
# local collbench cluster: sources <state>/env.sh and runs CMD inside the switch namespace
# (where slurmctld listens on 10.77.0.254), keeping the current directory.
#
#   client.sh [--state DIR] CMD [ARGS...]
# DIR defaults to ${COLLBENCH_CLUSTER_STATE:-/tmp/collbench-cluster}.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
while (($#)); do
  case $1 in
    --state) STATE=$2; shift 2 ;;
    --state=*) STATE=${1#*=}; shift ;;
    -h | --help) usage_from_header; exit 0 ;;
    *) break ;;
  esac
done
(($#)) || die "usage: client.sh [--state DIR] CMD [ARGS...]"
STATE=$(realpath -m "$STATE")
[[ -f $STATE/env.sh ]] || die "no cluster in $STATE (no env.sh): run slurm/cluster/start.sh --state $STATE"
source "$STATE/env.sh"
exec "$NODES_SH" exec --state "$STATE/testbed" switch "$@"
