# shellcheck shell=bash disable=SC2034  # CLUSTER_DIR: for the scripts that source it
# slurm/cluster/*.sh: the local cluster's daemons — started detached and stopped by the PIDs
# they recorded, never by name — and its clients, run inside the switch namespace (sourced).
# Messages go to stderr (log): stdout is data (wait-job.sh prints the job's state there).
SLURM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$SLURM_DIR/../scripts/lib.sh"
CLUSTER_DIR="$SLURM_DIR/cluster"
NODES_SH="$SLURM_DIR/testbed/nodes.sh"
STATE=${COLLBENCH_CLUSTER_STATE:-/tmp/collbench-cluster}

# is_ours PID NAME: PID is alive, its command is NAME, and its command line names our state
# dir (guards against a recycled PID from a stale pid file).
is_ours() {
  local pid=$1 name=$2
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/comm ]] || return 1
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]] || return 1
  grep -qF -- "$STATE/" <<<"$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  # a zombie is as good as gone
  [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]
}
pidfile_pid() { local p=""; read -r p 2>/dev/null <"$1" || true; echo "${p//[^0-9]/}"; }

# stop_pid PIDFILE NAME GRACE_SECONDS: SIGTERM, wait, SIGKILL; only if the PID is ours.
stop_pid() {
  local pf=$1 name=$2 grace=${3:-10} pid i
  pid=$(pidfile_pid "$pf")
  if [[ -n $pid ]] && is_ours "$pid" "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do is_ours "$pid" "$name" || break; sleep 0.1; done
    if is_ours "$pid" "$name"; then
      log "$name ($pid) did not exit after ${grace}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do is_ours "$pid" "$name" || break; sleep 0.1; done
    fi
    is_ours "$pid" "$name" && { warn "$name ($pid) still alive"; return 1; }
    log "stopped $name ($pid)"
  fi
  rm -f "$pf"
  return 0
}

# wait_pid_gone PIDFILE NAME SECONDS: 0 when the process is gone (or never was ours).
wait_pid_gone() {
  local pid i
  pid=$(pidfile_pid "$1")
  [[ -n $pid ]] || return 0
  for ((i = 0; i < $3 * 10; i++)); do is_ours "$pid" "$2" || return 0; sleep 0.1; done
  return 1
}

# start_daemon PIDFILE NAME LOGFILE CMD...: start CMD detached (own session, no tty, stdio to
# LOGFILE so no caller's pipe is held open), record its PID; CMD must exec into NAME without
# forking (nsenter/unshare without --fork, sh -c 'exec ...', daemons in foreground mode).
start_daemon() {
  local pf=$1 name=$2 logf=$3 pid i
  shift 3
  setsid "$@" </dev/null >>"$logf" 2>&1 &
  pid=$!
  echo "$pid" >"$pf"
  for ((i = 0; i < 100; i++)); do
    is_ours "$pid" "$name" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  die "$name did not start (pid $pid); last lines of $logf:
$(tail -n 20 "$logf" 2>/dev/null)"
}

# client CMD...: run a Slurm client inside the switch namespace (where slurmctld runs).
client() {
  SLURM_CONF="$STATE/etc/slurm.conf" "$NODES_SH" exec --state "$STATE/testbed" switch "$@"
}

# ctl_up: slurmctld answers (no pipe into grep -q: pipefail).
ctl_up() { grep -q 'is UP' <<<"$(timeout 10 "$NODES_SH" exec --state "$STATE/testbed" switch env SLURM_CONF="$STATE/etc/slurm.conf" scontrol ping 2>/dev/null)"; }
