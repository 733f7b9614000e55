#!/usr/bin/env bash
# Fault injection on the local collbench cluster: lose one emulated node, and bring it back.
#
#   node.sh [--state DIR] kill NODE    SIGKILL every process in NODE's network namespace — its
#                                      slurmd, slurmstepd and job tasks (ranks) — as a power loss
#                                      would; prints the PIDs killed. slurmctld notices after
#                                      SlurmdTimeout (start.sh --slurmd-timeout) and sets it DOWN.
#   node.sh [--state DIR] start NODE   start NODE's slurmd again and wait (bounded) until Slurm
#                                      shows it idle (ReturnToService=2 returns a DOWN node)
#
# NODE is nI (n1 .. nN of the running cluster). Only the node namespaces of the testbed are
# touched; the switch (slurmctld) cannot be killed this way. DIR defaults to
# ${COLLBENCH_CLUSTER_STATE:-/tmp/collbench-cluster}. Exit 0 done, 1 failed, 2 usage error.
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
(($# == 2)) || die "usage: node.sh [--state DIR] kill|start nI"
action=$1 node=$2
[[ $action == kill || $action == start ]] || die "unknown action '$action' (kill or start)"
[[ $node =~ ^n[1-9][0-9]*$ ]] || die "node must be nI (n1, n2 ...), not '$node'"
[[ $(id -u) == 0 ]] || die "must run as root"
STATE=$(realpath -m "$STATE")
[[ -f $STATE/env.sh ]] || die "no cluster in $STATE (no env.sh): run slurm/cluster/start.sh --state $STATE"
ns="${TESTBED_NODE_NS_PREFIX}${node#n}"
[[ -e /run/netns/$ns ]] || die "node $node has no namespace $ns (is the cluster that big?)"
CONF="$STATE/etc/slurm.conf"

case $action in
  kill)
    # A node's processes are exactly those in its network namespace (slurmd, and what it forked).
    mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null)
    ((${#pids[@]})) || die "no process runs on $node"
    kill -KILL "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do [[ -z $(ip netns pids "$ns" 2>/dev/null) ]] && break; sleep 0.1; done
    [[ -z $(ip netns pids "$ns" 2>/dev/null) ]] || { warn "processes left on $node: $(ip netns pids "$ns" | paste -sd' ')"; exit 1; }
    log "$node lost: SIGKILL to ${pids[*]}"
    echo "${pids[*]}"
    ;;
  start)
    pf="$STATE/pids/slurmd-$node.pid"
    if is_ours "$(pidfile_pid "$pf")" slurmd; then
      log "slurmd on $node already runs"
    else
      start_daemon "$pf" slurmd "$STATE/log/slurmd-$node.out" \
        "$NODES_SH" exec --state "$STATE/testbed" "$node" slurmd -D -N "$node" -f "$CONF"
    fi
    wait_s=${COLLBENCH_CLUSTER_WAIT:-30}
    for ((i = 0; i < wait_s * 10; i++)); do
      st=$(client sinfo -h -N -n "$node" -o %T 2>/dev/null || true)
      [[ $st == idle ]] && { log "$node idle"; exit 0; }
      sleep 0.1
    done
    warn "$node is '${st:-unknown}', not idle, after ${wait_s}s; see $STATE/log/slurmd-$node.log"
    exit 1
    ;;
esac
