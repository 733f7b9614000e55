#!/usr/bin/env bash
# Wait for a job of the local collbench cluster to finish, polling
# `squeue -h -j JOB -t all -o %T` every 0.2 s (much faster than `sbatch --wait`).
#
#   wait-job.sh [--state DIR] [--timeout SECONDS] JOBID
# Prints the final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...) on stdout.
# Exit: 0 COMPLETED, 1 any other final state, 124 timeout (default 600 s; job left running).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
timeout_s=600
while (($#)); do
  case $1 in
    --state) STATE=$2; shift 2 ;;
    --state=*) STATE=${1#*=}; shift ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --timeout=*) timeout_s=${1#*=}; shift ;;
    -h | --help) usage_from_header; exit 0 ;;
    *) break ;;
  esac
done
(($# == 1)) && [[ $1 =~ ^[0-9]+$ ]] || die "usage: wait-job.sh [--state DIR] [--timeout S] JOBID"
job=$1
STATE=$(realpath -m "$STATE")
deadline=$((SECONDS + timeout_s))
last=""
while ((SECONDS < deadline)); do
  st=$(client squeue -h -j "$job" -t all -o %T 2>/dev/null || true)
  st=${st%%$'\n'*}
  if [[ -z $st ]]; then # purged from slurmctld's memory (MinJobAge), or a failed query
    st=$(client scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n1 || true)
  fi
  case $st in
    COMPLETED) echo "$st"; exit 0 ;;
    FAILED | CANCELLED* | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE | SPECIAL_EXIT | REVOKED)
      echo "$st"; exit 1 ;;
    "") echo UNKNOWN; log "job $job unknown to slurmctld"; exit 1 ;;
  esac
  [[ $st != "$last" ]] && { log "job $job: $st"; last=$st; }
  sleep 0.2
done
log "job $job: still $last after ${timeout_s}s"
exit 124
