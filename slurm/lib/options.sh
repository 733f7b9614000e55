# shellcheck shell=bash disable=SC2034  # globals shared by the pieces of sweep.sh
# slurm/sweep.sh: its options, and what they name — the collbench binary, the sweep file, the
# layouts to run (sourced; reads REPO, sets the globals below).

# parse_args "$@" -> SWEEP_ARG LAYOUTS_ARG OUT_ARG LAUNCHER LAUNCHER_FLAG ANALYSIS TUNE STEP_TIMEOUT EXTRA[]
parse_args() {
  SWEEP_ARG="" LAYOUTS_ARG="" OUT_ARG=${COLLBENCH_OUT:-}
  LAUNCHER=${COLLBENCH_LAUNCHER:-} LAUNCHER_FLAG="" # empty: choose_launcher picks
  ANALYSIS=${COLLBENCH_ANALYSIS:-1}
  TUNE=${COLLBENCH_TUNE:-0}
  EXTRA=()
  while (($#)); do
    case $1 in
      --out) [[ $# -ge 2 ]] || die "--out needs a folder"; OUT_ARG=$2; shift 2 ;;
      --out=*) OUT_ARG=${1#*=}; shift ;;
      --layouts) [[ $# -ge 2 ]] || die "--layouts needs a list"; LAYOUTS_ARG=$2; shift 2 ;;
      --layouts=*) LAYOUTS_ARG=${1#*=}; shift ;;
      --launcher) [[ $# -ge 2 ]] || die "--launcher needs srun or mpirun"; LAUNCHER=$2 LAUNCHER_FLAG=1; shift 2 ;;
      --launcher=*) LAUNCHER=${1#*=} LAUNCHER_FLAG=1; shift ;;
      --no-analysis) ANALYSIS=0; shift ;;
      --tune) TUNE=1; shift ;;
      -h | --help) usage_from_header; exit 0 ;;
      --) shift; EXTRA=("$@"); break ;;
      -*) die "unknown option '$1' (collbench options go after '--'; see --help)" ;;
      *)
        [[ -z $SWEEP_ARG ]] || die "only one sweep file please ('$SWEEP_ARG', '$1'); collbench options go after '--'"
        SWEEP_ARG=$1; shift ;;
    esac
  done
  case $LAUNCHER in "" | srun | mpirun) ;; *) die "launcher must be srun or mpirun, not '$LAUNCHER'" ;; esac
  [[ $TUNE == [01] ]] || die "COLLBENCH_TUNE must be 0 or 1, not '$TUNE'"
  STEP_TIMEOUT=${COLLBENCH_STEP_TIMEOUT:-0}
  [[ $STEP_TIMEOUT =~ ^[0-9]+$ ]] || die "COLLBENCH_STEP_TIMEOUT must be seconds"
}

# find_binary -> BIN (absolute, executable), RESUME_ARG[] (--resume when collbench offers it):
# $COLLBENCH, else an installed tree's bin/collbench, else the checkout's build/collbench.
find_binary() {
  if [[ -n ${COLLBENCH:-} ]]; then
    BIN=$(command -v "$COLLBENCH" 2>/dev/null || true)
    [[ $BIN == */* ]] || BIN=$COLLBENCH
  elif [[ -n $COLLBENCH_INSTALLED_BINDIR ]]; then
    BIN="$COLLBENCH_INSTALLED_BINDIR/collbench" # an installed tree: its own program (lib.sh)
  else
    BIN="$REPO/build/collbench"
  fi
  [[ $BIN == /* ]] || BIN="$PWD/$BIN"
  [[ -x $BIN ]] || die "collbench binary '$BIN' not found or not executable (build it: scripts/build.sh, install it: cmake --install, or set COLLBENCH=/path/to/collbench)"
  RESUME_ARG=()
  # no pipe into grep -q: it exits at the first match, collbench's --help gets SIGPIPE and
  # pipefail turns the match into a failure (seen: resumed jobs without --resume)
  if grep -q -- '--resume' <<<"$("$BIN" --help 2>/dev/null)"; then RESUME_ARG=(--resume); fi
}

# find_sweep -> SWEEP: the sweep file's absolute path, tried relative to the current directory
# (= the submit directory under sbatch), then the submit directory, then the checkout.
find_sweep() {
  local p=${SWEEP_ARG:-slurm/sweeps/default.yaml} base
  SWEEP=""
  if [[ $p == /* ]]; then
    [[ -f $p ]] && SWEEP=$p
  else
    for base in "$PWD" "${SLURM_SUBMIT_DIR:-}" "$REPO"; do
      if [[ -n $base && -f $base/$p ]]; then
        SWEEP="$(cd "$(dirname "$base/$p")" && pwd)/$(basename "$p")"
        break
      fi
    done
  fi
  [[ -n $SWEEP ]] || die "sweep file '$p' not found (looked in $PWD and $REPO)"
}

# read_backend -> BACKEND, MPI_NAME, MPI_FAMILY, SRUN_MPI: the sweep's backend (with the extra
# arguments), the MPI the binary was built against and srun's --mpi for its steps: none when the
# backend's ranks meet without MPI under srun (gloo: its own rendezvous, docs/launching.md), else
# the PMI the MPI's library speaks (mpi_family).
read_backend() {
  local out boots
  out=$("$BIN" --config "$SWEEP" "${EXTRA[@]}" --print-backend 2>&1) ||
    die "'$BIN --config $SWEEP ${EXTRA[*]} --print-backend' failed: $out"
  read -r BACKEND boots <<<"$out"
  read_mpi
  if [[ " $boots " == *" srun "* && ! " ${boots%% srun *} " == *" mpi "* ]]; then SRUN_MPI=none; fi
}

# choose_launcher -> LAUNCHER, LAUNCHER_WHY (when not --launcher / COLLBENCH_LAUNCHER): srun,
# except Open MPI on the local emulated cluster: its own mpirun inside the allocation (why:
# docs/local-cluster.md#open-mpi-starts-with-mpirun-here).
choose_launcher() {
  LAUNCHER_WHY=""
  [[ -z $LAUNCHER ]] || return 0
  LAUNCHER=srun
  if [[ -n ${COLLBENCH_CLUSTER_STATE:-} && $MPI_FAMILY == openmpi && $BACKEND == mpi ]]; then
    LAUNCHER=mpirun
    LAUNCHER_WHY=" (Open MPI on the local emulated cluster: docs/local-cluster.md#open-mpi-starts-with-mpirun-here)"
  fi
}

# read_mpi -> MPI_NAME (first line of MPI_Get_library_version, from `collbench --version`'s
# "mpi:" line), MPI_FAMILY, SRUN_MPI. Read from the binary, so a sweep never launches an MPICH
# build the Open MPI way (N singletons) because of a setting kept by hand.
read_mpi() {
  local out
  out=$("$BIN" --version 2>&1) || die "'$BIN --version' failed: $out"
  MPI_NAME=$(sed -n 's/^mpi: *//p' <<<"$out" | head -n1)
  mpi_family "$MPI_NAME"
}

# mpi_family LIBRARY-VERSION -> MPI_FAMILY, SRUN_MPI. Open MPI 4 starts under Slurm's PMIx plugin
# (Debian's does not speak pmi2); MPICH and its derivatives (MVAPICH, Intel MPI) through their
# PMI-1/PMI-2 client, which Slurm's pmi2 plugin serves (Debian's MPICH fails under pmix). Anything
# else: the cluster's MpiDefault (srun without --mpi). COLLBENCH_SRUN_ARGS="--mpi=..." comes after
# ours on srun's command line, and srun takes the last.
mpi_family() {
  case $1 in
    "Open MPI"*) MPI_FAMILY=openmpi SRUN_MPI=pmix ;;
    MPICH* | MVAPICH* | "Intel(R) MPI"*) MPI_FAMILY=mpich SRUN_MPI=pmi2 ;;
    *) MPI_FAMILY=unknown SRUN_MPI="" ;;
  esac
}

# read_layouts -> LAYOUTS[]: --layouts, else the sweep file's, else the whole allocation
# (needs HOSTS/SLOTS from read_allocation).
read_layouts() {
  local l out
  LAYOUTS=()
  if [[ -n $LAYOUTS_ARG ]]; then
    IFS=', ' read -r -a LAYOUTS <<<"$LAYOUTS_ARG"
  else
    out=$("$BIN" --config "$SWEEP" --print-layouts 2>&1) ||
      die "'$BIN --config $SWEEP --print-layouts' failed: $out"
    mapfile -t LAYOUTS < <(tr -d ' \r' <<<"$out" | grep -v '^$' || true)
  fi
  for l in "${LAYOUTS[@]}"; do
    [[ $l =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "bad layout '$l' (expected NxR, e.g. 2x4)"
  done
  if ((${#LAYOUTS[@]} == 0)); then
    LAYOUTS=("${#HOSTS[@]}x${SLOTS[0]}")
    say "the sweep names no layouts: using the whole allocation, ${LAYOUTS[0]}"
  fi
}
