#!/usr/bin/env bash
# Nsight Systems profile of a collbench run, one report per rank. Put it between the launcher
# and the program:
#
#   srun [SRUN-OPTS] slurm/profile.sh [OPTIONS] -- collbench ARGS...
#   mpirun [MPIRUN-OPTS] slurm/profile.sh [OPTIONS] -- collbench ARGS...
#
# Each selected rank runs `nsys profile --trace=TRACE --output=OUT/collbench.%q{RANKVAR}
# --nvtx-domain-include=collbench collbench ARGS` (RANKVAR = OMPI_COMM_WORLD_RANK under mpirun,
# SLURM_PROCID under srun, PMIX_RANK otherwise); the other ranks run collbench unprofiled (they
# must still run: it is one MPI job).
#
# Options:
#   --ranks LIST      ranks to profile, e.g. 0,3 or 0-3,8 or all (default: all)
#   --trace LIST      nsys -t list (default nvtx,mpi,osrt; cuda is added when the collbench
#                     arguments contain --device cuda)
#   --out DIR         report folder (default ${COLLBENCH_PROFILE_OUT:-nsys-<jobid>|nsys-local})
#   --mpi-impl IMPL   for -t mpi: openmpi (default) or mpich
#   --nvtx-domains L  NVTX domains recorded (with nvtx in --trace): default collbench, the
#                     domain of every collbench range; all = no filter (other libraries' too)
#   --nsys PATH       the nsys binary (default: nsys on PATH, $NSYS)
#   --nsys-args "…"   more options for `nsys profile` (word-split), e.g. "--sample=none"
#   -h, --help        this text
# Exit: the program's (or nsys's) exit status; 2 when nsys is missing or the usage is wrong.
# Open the per-rank reports on one timeline in nsys-ui: File > Open... selecting all of them, or
# File > New multi-report view; NVTX ranges: nsys stats --report nvtx_sum OUT/collbench.0.nsys-rep
# (docs/profiling.md: which ranges, how to check the reports' time alignment).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
PROG=profile

# in_list RANK LIST: RANK is in LIST ("all", "0,3", "0-3,8")
in_list() {
  local rank=$1 item lo hi
  [[ $2 == all ]] && return 0
  local IFS=,
  for item in $2; do
    if [[ $item =~ ^([0-9]+)-([0-9]+)$ ]]; then
      lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
      ((rank >= lo && rank <= hi)) && return 0
    elif [[ $item =~ ^[0-9]+$ ]]; then
      ((rank == item)) && return 0
    else
      die "bad --ranks item '$item' (expected N, N-M or all)"
    fi
  done
  return 1
}

# rank_var: the environment variable that holds this process's world rank
rank_var() {
  local v
  # mpirun sets OMPI_COMM_WORLD_RANK; inside a Slurm allocation mpirun's daemons are started by
  # srun, so SLURM_PROCID is then the daemon's index, not the rank: check OMPI_* first.
  for v in OMPI_COMM_WORLD_RANK SLURM_PROCID PMIX_RANK PMI_RANK; do
    [[ -n ${!v:-} ]] && { echo "$v"; return 0; }
  done
  return 1
}

main() {
  local ranks=all trace=nvtx,mpi,osrt out=${COLLBENCH_PROFILE_OUT:-} mpi_impl=openmpi domains=collbench
  local nsys=${NSYS:-nsys} nsys_args=()
  while (($#)); do
    case $1 in
      --ranks) ranks=${2:?--ranks needs a list}; shift 2 ;;
      --ranks=*) ranks=${1#*=}; shift ;;
      --trace) trace=${2:?--trace needs a list}; shift 2 ;;
      --trace=*) trace=${1#*=}; shift ;;
      --out) out=${2:?--out needs a folder}; shift 2 ;;
      --out=*) out=${1#*=}; shift ;;
      --mpi-impl) mpi_impl=${2:?--mpi-impl needs openmpi or mpich}; shift 2 ;;
      --mpi-impl=*) mpi_impl=${1#*=}; shift ;;
      --nvtx-domains) domains=${2:?--nvtx-domains needs a list or all}; shift 2 ;;
      --nvtx-domains=*) domains=${1#*=}; shift ;;
      --nsys) nsys=${2:?--nsys needs a path}; shift 2 ;;
      --nsys=*) nsys=${1#*=}; shift ;;
      --nsys-args) read -r -a nsys_args <<<"${2:-}"; shift 2 ;;
      --nsys-args=*) read -r -a nsys_args <<<"${1#*=}"; shift ;;
      -h | --help) usage_from_header; exit 0 ;;
      --) shift; break ;;
      *) die "unknown option '$1'; usage: profile.sh [--ranks 0,3] [--trace nvtx,mpi,osrt] [--out DIR] -- collbench ARGS..." ;;
    esac
  done
  (($#)) || die "no program given; usage: profile.sh [OPTIONS] -- collbench ARGS..."
  [[ $domains =~ ^[A-Za-z0-9_.:-]+(,[A-Za-z0-9_.:-]+)*$ ]] ||
    die "bad --nvtx-domains '$domains' (expected NAME,NAME... or all)"
  # every rank checks the whole list, so a bad item stops all of them alike
  [[ $ranks == all || $ranks =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
    die "bad --ranks '$ranks' (expected N, N-M, a comma list of them, or all)"

  local nsys_bin
  nsys_bin=$(command -v "$nsys" 2>/dev/null) ||
    die "nsys (Nsight Systems) not found${NSYS:+ at $NSYS}: install it (https://developer.nvidia.com/nsight-systems) or pass --nsys PATH"

  # --device cuda in the program's arguments -> also trace CUDA
  local a prev=""
  for a in "$@"; do
    if [[ $a == --device=cuda || ($prev == --device && $a == cuda) ]]; then
      [[ ,$trace, == *,cuda,* ]] || trace+=",cuda"
    fi
    prev=$a
  done

  local var rank
  if var=$(rank_var); then rank=${!var}; else var="" rank=0; fi
  if ! in_list "$rank" "$ranks"; then
    exec "$@"
  fi

  out=${out:-nsys-${SLURM_JOB_ID:-local}}
  mkdir -p "$out"
  local name="$out/collbench"
  # inside slurm/sweep.sh (COLLBENCH_WRAP) each step's reports carry its layout
  [[ ${COLLBENCH_LAYOUT:-} =~ ^[0-9]+x[0-9]+$ ]] && name+=".$COLLBENCH_LAYOUT"
  if [[ -n $var ]]; then name+=".%q{$var}"; else name+=".$rank"; fi
  local cmd=("$nsys_bin" profile --trace="$trace" --output="$name" --force-overwrite=true)
  [[ ,$trace, == *,mpi,* ]] && cmd+=(--mpi-impl="$mpi_impl")
  # nsys accepts the domain filter only with NVTX tracing on
  [[ ,$trace, == *,nvtx,* && $domains != all ]] && cmd+=(--nvtx-domain-include="$domains")
  cmd+=("${nsys_args[@]}" "$@")
  [[ $rank == 0 || -n ${COLLBENCH_PROFILE_VERBOSE:-} ]] && log "rank $rank: ${cmd[*]}"
  exec "${cmd[@]}"
}

main "$@"
