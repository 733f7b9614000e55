#!/usr/bin/env bash
# Stop the local collbench Slurm cluster started by start.sh, and only that:
#   1. `scontrol shutdown` (slurmctld + all slurmds) if our slurmctld is alive;
#   2. wait (bounded), then SIGTERM / SIGKILL whatever of our slurmctld/slurmd is left, by the
#      PIDs in <state>/pids (checked: right command, command line naming <state>);
#   3. job processes left in our node namespaces (slurmstepd and its descendants);
#   4. munged by PID; 5. slurm/testbed/nodes.sh down.
# Safe when nothing runs and after a crash (stale pid files are checked, then removed).
#
#   stop.sh [--state DIR]      DIR defaults to ${COLLBENCH_CLUSTER_STATE:-/tmp/collbench-cluster}
# Logs and configuration stay in DIR for inspection (start.sh reuses DIR).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
while (($#)); do
  case $1 in
    --state) STATE=$2; shift 2 ;;
    --state=*) STATE=${1#*=}; shift ;;
    -h | --help) usage_from_header; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[[ $(id -u) == 0 ]] || die "must run as root"
STATE=$(realpath -m "$STATE")
PIDS="$STATE/pids"
rc=0

ctl_pf="$PIDS/slurmctld.pid"
slurmd_pfs=()
for pf in "$PIDS"/slurmd-*.pid; do [[ -e $pf ]] && slurmd_pfs+=("$pf"); done

# 1. orderly shutdown through slurmctld
if is_ours "$(pidfile_pid "$ctl_pf")" slurmctld; then
  log "scontrol shutdown"
  timeout 20 "$NODES_SH" exec --state "$STATE/testbed" switch \
    env SLURM_CONF="$STATE/etc/slurm.conf" scontrol shutdown >/dev/null 2>&1 ||
    log "scontrol shutdown failed; falling back to signals"
fi
# 2. bounded wait, then SIGTERM to all that is left (at once), then SIGKILL
wait_pid_gone "$ctl_pf" slurmctld 10 || true
left=()
for pf in "$ctl_pf" "${slurmd_pfs[@]}"; do
  name=slurmd; [[ $pf == "$ctl_pf" ]] && name=slurmctld
  pid=$(pidfile_pid "$pf")
  if [[ -n $pid ]] && is_ours "$pid" "$name"; then
    log "SIGTERM $name ($pid)"; kill -TERM "$pid" 2>/dev/null; left+=("$pf:$name")
  fi
done
for entry in "${left[@]}"; do wait_pid_gone "${entry%%:*}" "${entry##*:}" 5 || true; done
stop_pid "$ctl_pf" slurmctld 1 || rc=1
for pf in "${slurmd_pfs[@]}"; do stop_pid "$pf" slurmd 1 || rc=1; done

# 3. job leftovers: slurmstepd (and descendants) inside our node namespaces
descendants() { # PIDs of the trees rooted at "$@"
  ps -e -o pid=,ppid= | awk -v roots="$*" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { parent[$1] = $2; pids[NR] = $1 }
    END { changed = 1
      while (changed) { changed = 0
        for (i in pids) { p = pids[i]; if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 } } }
      for (p in keep) print p }'
}
steps=()
for ns in $(testbed_namespaces); do
  [[ $ns == "$TESTBED_SWITCH_NS" ]] && continue # jobs run on the nodes
  for pid in $(ip netns pids "$ns" 2>/dev/null); do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == slurmstepd ]] && steps+=("$pid")
  done
done
if ((${#steps[@]})); then
  victims=$(descendants "${steps[@]}" | tr '\n' ' ')
  log "killing leftover job processes: $victims"
  kill -TERM $victims 2>/dev/null || true
  sleep 1
  kill -KILL $victims 2>/dev/null || true
fi

# 4. munged
stop_pid "$PIDS/munged.pid" munged 5 || rc=1
rm -f "$STATE/munge/munge.socket" "$STATE/munge/munge.socket.lock"

# 5. nodes
"$NODES_SH" down --state "$STATE/testbed" || rc=1
rm -f "$STATE/cluster.sig" "$STATE/env.sh"
((rc == 0)) && log "stopped (state $STATE)" || log "stopped with warnings (state $STATE)"
exit $rc
