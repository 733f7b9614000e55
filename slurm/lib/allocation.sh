# shellcheck shell=bash disable=SC2034  # globals shared by the pieces of sweep.sh
# slurm/sweep.sh: the Slurm allocation it runs in — its nodes and task slots per node, and
# which nodes a layout gets (sourced).

# expand_counts "4(x2),2" -> "4 4 2"  (format of SLURM_TASKS_PER_NODE / SLURM_JOB_CPUS_PER_NODE)
expand_counts() {
  local item out=() n k i
  local IFS=,
  for item in $1; do
    if [[ $item =~ ^([0-9]+)\(x([0-9]+)\)$ ]]; then
      n=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
      for ((i = 0; i < k; i++)); do out+=("$n"); done
    elif [[ $item =~ ^[0-9]+$ ]]; then
      out+=("$item")
    fi
  done
  IFS=' '
  echo "${out[*]}"
}

# read_allocation -> JOB_ID, HOSTS[] (the allocation's nodes), SLOTS[] (task slots on each)
read_allocation() {
  [[ -n ${SLURM_JOB_ID:-} ]] || die "not inside a Slurm allocation (no SLURM_JOB_ID): submit with 'sbatch slurm/sweep.sh ...' or run it inside salloc"
  command -v srun >/dev/null || die "srun not found"
  JOB_ID=$SLURM_JOB_ID
  local nodelist=${SLURM_JOB_NODELIST:-${SLURM_NODELIST:-}}
  [[ -n $nodelist ]] || die "SLURM_JOB_NODELIST is not set"
  mapfile -t HOSTS < <(scontrol show hostnames "$nodelist")
  ((${#HOSTS[@]})) || die "could not expand the node list '$nodelist' (scontrol show hostnames)"
  local counts=${SLURM_TASKS_PER_NODE:-${SLURM_JOB_CPUS_PER_NODE:-}}
  read -r -a SLOTS <<<"$(expand_counts "$counts")"
  if ((${#SLOTS[@]} != ${#HOSTS[@]})); then
    warn "cannot match tasks per node '$counts' to ${#HOSTS[@]} nodes; assuming ${SLURM_NTASKS_PER_NODE:-1} each"
    SLOTS=()
    local i
    for ((i = 0; i < ${#HOSTS[@]}; i++)); do SLOTS+=("${SLURM_NTASKS_PER_NODE:-1}"); done
  fi
}

# pick_hosts R N -> PICKED[]: the first N nodes of the allocation with at least R task slots;
# fails when there are fewer.
pick_hosts() {
  local r=$1 n=$2 i
  PICKED=()
  for ((i = 0; i < ${#HOSTS[@]} && ${#PICKED[@]} < n; i++)); do
    ((SLOTS[i] >= r)) && PICKED+=("${HOSTS[i]}")
  done
  ((${#PICKED[@]} == n))
}

# refresh_allocation -> HOSTS[], SLOTS[] without the nodes lost since (gone from the job's node
# list — Slurm drops a failed node from a --no-kill job — or not responding/down/drained);
# LOST_NOW: those just dropped, LOST: all dropped so far. Returns 1 when a node was dropped.
refresh_allocation() {
  local job_nodes nodelist h st i hosts=() slots=()
  LOST_NOW=""
  nodelist=$(scontrol show job "$JOB_ID" 2>/dev/null | sed -n 's/^ *NodeList=\([^ ]*\).*/\1/p' | head -n1)
  [[ -n $nodelist && $nodelist != "(null)" ]] || return 0 # cannot tell: keep what we have
  job_nodes=" $(scontrol show hostnames "$nodelist" 2>/dev/null | paste -sd' ' -) "
  for ((i = 0; i < ${#HOSTS[@]}; i++)); do
    h=${HOSTS[i]}
    st=$(sinfo -h -N -n "$h" -o %T 2>/dev/null | head -n1 || true)
    if [[ $job_nodes == *" $h "* && $st != *'*' && ! $st =~ down|drain|fail ]]; then
      hosts+=("$h") slots+=("${SLOTS[i]}")
    else
      LOST_NOW+="${LOST_NOW:+,}$h"
      say "node $h lost (Slurm state: ${st:-unknown}; the job's nodes: $nodelist): later layouts run on the others"
    fi
  done
  [[ -n $LOST_NOW ]] || return 0
  HOSTS=("${hosts[@]}") SLOTS=("${slots[@]}")
  LOST+="${LOST:+,}$LOST_NOW"
  return 1
}
