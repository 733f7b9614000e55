# shellcheck shell=bash disable=SC2034  # globals for the scripts that source it
# slurm/testbed/: what the launchers across the emulated nodes share — mpirun.sh (Open MPI) and
# mpiexec.sh (MPICH's hydra) — and what the local Slurm cluster's jobs need from the testbed
# (slurm/cluster/start.sh writes testbed_mpi_env's lines into its env.sh). Sourced.
TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
source "$TESTBED_DIR/../../scripts/lib.sh"

TESTBED_NET=10.77.0          # node nI is 10.77.0.I, the switch 10.77.0.254 (nodes.sh)
TESTBED_SUBNET=10.77.0.0/24
TESTBED_NODE_IF=eth0         # each node's one interface, its veth into the switch

# testbed_mpi_env: the lines (for eval, or an env.sh) that keep MPI traffic between emulated
# nodes on their links. Every node runs on one kernel, so anything that decides "same machine"
# from the kernel bypasses the namespaces, the switch and its tbf rates:
# - Open MPI: pml ob1 (never UCX) with BTLs self,vader,tcp, TCP and ORTE's OOB on the subnet;
#   vader goes by hostname, and each node has its own.
# - MPICH ch4:ucx: MPICH's own shared memory goes by hostname too (intra-node), but UCX 1.13
#   judges its peers by boot id and IPC namespace, so for ranks on other nodes it would pick
#   its shared-memory transports (posix, sysv, cma): seen, 2 x 11 x 1 MiB allreduces moved
#   7 KB through n1's eth0. UCX_TLS=self,tcp and the node's interface keep them on the link.
# Each only where unset: a caller's choice wins. Root may run Open MPI (the testbed is root's).
testbed_mpi_env() {
  cat <<ENV
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=\${OMPI_MCA_mpi_yield_when_idle:-1}
export OMPI_MCA_pml=\${OMPI_MCA_pml:-ob1}
export OMPI_MCA_btl=\${OMPI_MCA_btl:-self,vader,tcp}
export OMPI_MCA_btl_tcp_if_include=\${OMPI_MCA_btl_tcp_if_include:-$TESTBED_SUBNET}
export OMPI_MCA_oob_tcp_if_include=\${OMPI_MCA_oob_tcp_if_include:-$TESTBED_SUBNET}
export UCX_TLS=\${UCX_TLS:-self,tcp}
export UCX_NET_DEVICES=\${UCX_NET_DEVICES:-$TESTBED_NODE_IF}
ENV
}

# testbed_link_text STATE: what collbench records of the inter-node link (run record
# inter_node_link), so plots of these runs say the link is emulated.
testbed_link_text() {
  local rate=unlimited
  [[ -s $1/rate ]] && rate="tbf $(cat "$1/rate")"
  echo "emulated: TCP over veth through a Linux bridge on one machine, rate $rate"
}

# testbed_layout LAYOUT -> PER_NODE[] (ranks on n1, n2, ...), N (nodes), NP (ranks).
# NxR: N nodes x R ranks (block mapping); R1+R2+...: uneven nodes (3+1: ranks 0-2 on n1, 3 on n2).
testbed_layout() {
  local layout=$1 i r
  PER_NODE=()
  if [[ $layout =~ ^([0-9]+)x([0-9]+)$ ]]; then
    for ((i = 0; i < 10#${BASH_REMATCH[1]}; i++)); do PER_NODE+=($((10#${BASH_REMATCH[2]}))); done
  elif [[ $layout =~ ^[0-9]+(\+[0-9]+)+$ ]]; then
    IFS=+ read -r -a PER_NODE <<<"$layout"
  else
    die "LAYOUT must be NxR (nodes x ranks per node) or R1+R2+... (ranks per node), got '$layout'"
  fi
  N=${#PER_NODE[@]} NP=0
  for r in "${PER_NODE[@]}"; do ((10#$r >= 1)) || die "bad layout '$layout'"; NP=$((NP + 10#$r)); done
  ((N >= 1 && N <= 253)) || die "bad layout '$layout'"
}

# testbed_launch_args LAUNCHER-OPTIONS-NAME "$@": the command line mpirun.sh and mpiexec.sh share,
#   [--state DIR] [--no-up] [--print] LAYOUT [LAUNCHER-OPTIONS...] -- PROGRAM [ARGS...]
# -> STATE (absolute, exported as COLLBENCH_TESTBED_STATE), PRINT, LAYOUT (testbed_layout's
# PER_NODE, N, NP), EXTRA[] (the launcher's options), COMMAND[] (PROGRAM ARGS; PROGRAM absolute
# or on PATH: the nodes share the filesystem, not a remote shell's working directory). Then the
# nodes n1..nN are up: if not, the testbed is brought up (grown to N nodes, never shrunk, keeping
# the recorded --rate), or with --no-up that is an error.
testbed_launch_args() {
  local opts=$1 auto_up=1 have want rate=()
  shift
  STATE=${COLLBENCH_TESTBED_STATE:-/tmp/collbench-testbed} PRINT=0
  while (($#)); do
    case $1 in
      --state) STATE=$2; shift 2 ;;
      --state=*) STATE=${1#*=}; shift ;;
      --no-up) auto_up=0; shift ;;
      --print) PRINT=1; shift ;;
      -h | --help) usage_from_header; exit 0 ;;
      *) break ;;
    esac
  done
  (($#)) || die "usage: $PROG [--state DIR] LAYOUT [$opts...] -- PROGRAM [ARGS...]"
  LAYOUT=$1; shift
  testbed_layout "$LAYOUT"
  EXTRA=()
  while (($#)) && [[ $1 != -- ]]; do EXTRA+=("$1"); shift; done
  [[ ${1:-} == -- ]] || die "missing '--' before PROGRAM"
  shift
  (($#)) || die "missing PROGRAM after '--'"
  COMMAND=("$@")
  if [[ $1 != /* ]]; then
    if [[ $1 == */* ]]; then COMMAND[0]=$(realpath -- "$1")
    else command -v -- "$1" >/dev/null || die "PROGRAM '$1' not found on PATH"; fi
  fi
  [[ $(id -u) == 0 ]] || die "must run as root (it enters network namespaces)"
  STATE=$(realpath -m "$STATE")
  export COLLBENCH_TESTBED_STATE=$STATE
  "$TESTBED_DIR/nodes.sh" check "$N" --state "$STATE" && return 0
  ((auto_up)) || die "testbed nodes n1..n$N are not up (run: $TESTBED_DIR/nodes.sh up $N --state $STATE)"
  have=$("$TESTBED_DIR/nodes.sh" status --state "$STATE" 2>/dev/null |
    awk '$1 ~ /^n[0-9]+$/ {sub("n","",$1); if ($1+0>m) m=$1+0} END{print m+0}' || true)
  want=$((have > N ? have : N))
  [[ -s $STATE/rate ]] && rate=(--rate "$(cat "$STATE/rate")")
  "$TESTBED_DIR/nodes.sh" up "$want" --state "$STATE" "${rate[@]}" >&2
}
