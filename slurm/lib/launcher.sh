# shellcheck shell=bash disable=SC2034  # globals shared by the pieces of sweep.sh
# slurm/sweep.sh: how a step is launched — srun (PMIx) or mpirun inside the allocation — and
# the Open MPI environment the situation needs (sourced).

# setup_mpi_env -> OVERSUB, exported OMPI_* variables. Root needs Open MPI's permission; more
# ranks than cores is only assumed where it is intended (the local test cluster, or
# COLLBENCH_OVERSUBSCRIBE=1), never silently on a real cluster.
setup_mpi_env() {
  OVERSUB=0
  if [[ ${COLLBENCH_OVERSUBSCRIBE:-} == 1 || -n ${COLLBENCH_CLUSTER_STATE:-} ]]; then OVERSUB=1; fi
  if [[ $(id -u) == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  if ((OVERSUB)); then
    export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
    local why="COLLBENCH_OVERSUBSCRIBE=1"
    [[ -n ${COLLBENCH_CLUSTER_STATE:-} ]] && why="local test cluster $COLLBENCH_CLUSTER_STATE"
    [[ $LAUNCHER == mpirun ]] && why+="; mpirun --oversubscribe"
    say "more ranks than cores allowed ($why): OMPI_MCA_mpi_yield_when_idle=$OMPI_MCA_mpi_yield_when_idle"
  fi
}

# launch_cmd N R -> CMD[]: the step's command line on PICKED[] (see pick_hosts).
launch_cmd() {
  local n=$1 r=$2 hosts
  hosts=$(
    IFS=,
    echo "${PICKED[*]}"
  )
  CMD=()
  if ((STEP_TIMEOUT > 0)); then CMD+=(timeout --signal=TERM --kill-after=30 "$STEP_TIMEOUT"); fi
  case $LAUNCHER in
    srun)
      # one step; steps of this job run one after another, each gets the nodes it names.
      # --kill-on-bad-exit: a rank that dies ends the step instead of hanging the others.
      CMD+=(srun --mpi="$SRUN_MPI" --nodes="$n" --ntasks="$((n * r))" --ntasks-per-node="$r"
        --nodelist="$hosts" --kill-on-bad-exit=1 --job-name="collbench-${n}x$r")
      # After a node loss the failed step stays RUNNING in slurmctld (it waits for the lost
      # node's word) and keeps its CPUs on the surviving nodes: share them (steps of this job
      # run one at a time anyway), else srun waits "Requested nodes are busy" until the limit.
      [[ -n ${LOST:-} ]] && CMD+=(--overlap)
      # shellcheck disable=SC2206  # word-splitting intended
      [[ -n ${COLLBENCH_SRUN_ARGS:-} ]] && CMD+=(${COLLBENCH_SRUN_ARGS})
      ;;
    mpirun)
      local hs=() h
      for h in "${PICKED[@]}"; do hs+=("$h:$r"); done
      CMD+=(mpirun -np "$((n * r))" --map-by "ppr:$r:node" --host "$(
        IFS=,
        echo "${hs[*]}"
      )")
      ((OVERSUB)) && CMD+=(--oversubscribe --bind-to none)
      [[ $(id -u) == 0 ]] && CMD+=(--allow-run-as-root)
      [[ -n ${LOST:-} ]] && export SLURM_OVERLAP=1 # mpirun starts its daemons with srun: as above
      # shellcheck disable=SC2206
      [[ -n ${COLLBENCH_MPIRUN_ARGS:-} ]] && CMD+=(${COLLBENCH_MPIRUN_ARGS})
      ;;
  esac
  # shellcheck disable=SC2206  # e.g. COLLBENCH_WRAP="slurm/profile.sh --ranks 0 --"
  [[ -n ${COLLBENCH_WRAP:-} ]] && CMD+=(${COLLBENCH_WRAP})
  # --links: every layout of the job judges efficiency against the same link rates.
  CMD+=("$BIN" --config "$SWEEP" --json "$OUT/results.jsonl" --links "$OUT/links.json" "${RESUME_ARG[@]}" "${EXTRA[@]}")
}
