# shellcheck shell=bash disable=SC2034  # globals shared by the pieces of sweep.sh
# slurm/sweep.sh: how a step is launched — srun (the MPI's PMI plugin) or the MPI's own launcher
# inside the allocation — and the MPI environment the situation needs (sourced).

# setup_mpi_env -> OVERSUB, exported OMPI_*/UCX_* variables. Root needs Open MPI's permission;
# more ranks than cores is only assumed where it is intended (the local test cluster, or
# COLLBENCH_OVERSUBSCRIBE=1), never silently on a real cluster. On the local cluster the emulated
# nodes share one kernel: testbed_mpi_env keeps both MPIs' inter-node traffic on the emulated
# links (MPICH's UCX would otherwise take shared memory between them).
setup_mpi_env() {
  OVERSUB=0
  if [[ ${COLLBENCH_OVERSUBSCRIBE:-} == 1 || -n ${COLLBENCH_CLUSTER_STATE:-} ]]; then OVERSUB=1; fi
  if [[ $(id -u) == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  if [[ -n ${COLLBENCH_CLUSTER_STATE:-} ]]; then
    eval "$(testbed_mpi_env)"
    [[ $MPI_FAMILY == mpich ]] &&
      say "local cluster (emulated nodes on one kernel): UCX_TLS=$UCX_TLS UCX_NET_DEVICES=$UCX_NET_DEVICES"
  fi
  if ((OVERSUB)); then
    export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
    local why="COLLBENCH_OVERSUBSCRIBE=1"
    [[ -n ${COLLBENCH_CLUSTER_STATE:-} ]] && why="local test cluster $COLLBENCH_CLUSTER_STATE"
    [[ $LAUNCHER == mpirun ]] && why+="; mpirun --oversubscribe"
    if [[ $MPI_FAMILY == mpich ]]; then
      # MPICH has no such setting: ch4's progress never yields (tests/mpich/yield_when_idle.cpp)
      say "more ranks than cores allowed ($why); MPICH ranks spin while they wait${LD_PRELOAD:+ (LD_PRELOAD=$LD_PRELOAD)}"
    else
      say "more ranks than cores allowed ($why): OMPI_MCA_mpi_yield_when_idle=$OMPI_MCA_mpi_yield_when_idle"
    fi
  fi
  [[ $MPI_FAMILY != unknown || $BACKEND != mpi ]] ||
    warn "cannot tell which MPI '$BIN' was built against ('${MPI_NAME:-no mpi: line in --version}'): srun uses the cluster's MpiDefault"
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
      CMD+=(srun ${SRUN_MPI:+--mpi="$SRUN_MPI"} --nodes="$n" --ntasks="$((n * r))" --ntasks-per-node="$r"
        --nodelist="$hosts" --kill-on-bad-exit=1 --job-name="collbench-${n}x$r")
      # After a node loss the failed step stays RUNNING in slurmctld (it waits for the lost
      # node's word) and keeps its CPUs on the surviving nodes: share them (steps of this job
      # run one at a time anyway), else srun waits "Requested nodes are busy" until the limit.
      [[ -n ${LOST:-} ]] && CMD+=(--overlap)
      # shellcheck disable=SC2206  # word-splitting intended
      [[ -n ${COLLBENCH_SRUN_ARGS:-} ]] && CMD+=(${COLLBENCH_SRUN_ARGS})
      ;;
    mpirun)
      [[ -n ${LOST:-} ]] && export SLURM_OVERLAP=1 # both start their daemons with srun: as above
      if [[ $MPI_FAMILY == mpich ]]; then
        # hydra inside an allocation starts its proxies with srun (its slurm launcher)
        CMD+=(mpiexec.hydra -n "$((n * r))" -ppn "$r" -hosts "$hosts")
      else
        local hs=() h
        for h in "${PICKED[@]}"; do hs+=("$h:$r"); done
        CMD+=(mpirun -np "$((n * r))" --map-by "ppr:$r:node" --host "$(
          IFS=,
          echo "${hs[*]}"
        )")
        ((OVERSUB)) && CMD+=(--oversubscribe --bind-to none)
        [[ $(id -u) == 0 ]] && CMD+=(--allow-run-as-root)
      fi
      # shellcheck disable=SC2206
      [[ -n ${COLLBENCH_MPIRUN_ARGS:-} ]] && CMD+=(${COLLBENCH_MPIRUN_ARGS})
      ;;
  esac
  # shellcheck disable=SC2206  # e.g. COLLBENCH_WRAP="slurm/profile.sh --ranks 0 --"
  [[ -n ${COLLBENCH_WRAP:-} ]] && CMD+=(${COLLBENCH_WRAP})
  # --links: every layout of the job judges efficiency against the same link rates.
  CMD+=("$BIN" --config "$SWEEP" --json "$OUT/results.jsonl" --links "$OUT/links.json" "${RESUME_ARG[@]}" "${EXTRA[@]}")
}
