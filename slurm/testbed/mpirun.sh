#!/usr/bin/env bash
# collbench testbed: run an MPI program across emulated nodes with Open MPI's mpirun.
#
#   mpirun.sh [--state DIR] [--no-up] [--print] LAYOUT [MPIRUN-OPTIONS...] -- PROGRAM [ARGS...]
#
# LAYOUT is NxR: N nodes (n1..nN) x R ranks per node (world size N*R, block mapping: ranks
# 0..R-1 on n1, R..2R-1 on n2, ...), or R1+R2+... for uneven nodes (3+1: ranks 0-2 on n1, 3 on
# n2). mpirun itself runs on n1; orted is started on the other
# nodes by rsh-agent.sh. BTLs self,vader,tcp with TCP (and ORTE's OOB) restricted to
# 10.77.0.0/24: ranks on one node talk over shared memory, ranks on different nodes over TCP
# through the emulated switch (rate-limited if the testbed was brought up with --rate).
#
# If the switch or any of n1..nN is missing, the testbed is brought up (grown to N nodes,
# never shrunk, keeping the recorded --rate); --no-up makes that an error instead.
#
# Environment:
#   COLLBENCH_TESTBED_STATE  testbed state dir (default /tmp/collbench-testbed)
#   COLLBENCH_MPIRUN_ENV     names of variables to forward with -x (space/comma separated);
#                            the whole environment is inherited anyway (no ssh), -x makes it explicit
#   COLLBENCH_MPIRUN_ARGS    extra mpirun options (word-split), e.g. "--mca btl self,tcp"
#   COLLBENCH_RSH_AGENT_LOG  file to which rsh-agent.sh logs every launch (debugging)
#   COLLBENCH_INTER_NODE_LINK  what collbench records of the inter-node link (default: says it
#                            is emulated, and the testbed's --rate)
# PROGRAM must be an absolute path or on PATH on every node (the filesystem is shared).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=slurm/testbed/lib.sh
source "$here/lib.sh" # testbed_launch_args, testbed_link_text
testbed_launch_args MPIRUN-OPTIONS "$@" # -> STATE, PRINT, LAYOUT, PER_NODE, N, NP, EXTRA, COMMAND
nodes="$here/nodes.sh"

mkdir -p "$STATE"
hostfile="$STATE/hostfile-${LAYOUT}"
tmp=$(mktemp "$hostfile.XXXXXX")
for ((i = 1; i <= N; i++)); do echo "n$i slots=$((10#${PER_NODE[i - 1]}))"; done >"$tmp"
mv -f "$tmp" "$hostfile"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
# Said in collbench's run record (inter_node_link), so plots of these runs say the link is emulated.
COLLBENCH_INTER_NODE_LINK=${COLLBENCH_INTER_NODE_LINK:-$(testbed_link_text "$STATE")}
export COLLBENCH_INTER_NODE_LINK
xargs_=(-x OMPI_MCA_mpi_yield_when_idle -x COLLBENCH_INTER_NODE_LINK)
cbenv=${COLLBENCH_MPIRUN_ENV:-}
for v in ${cbenv//,/ }; do
  [[ $v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "COLLBENCH_MPIRUN_ENV: bad variable name '$v'"
  xargs_+=(-x "$v")
done
# shellcheck disable=SC2206
user_args=(${COLLBENCH_MPIRUN_ARGS:-})

# Our MCA defaults; a `--mca NAME VALUE` among the user's options replaces ours (Open MPI
# refuses the same parameter twice on one command line).
declare -A mca=(
  [plm_rsh_agent]="$here/rsh-agent.sh" [plm_rsh_no_tree_spawn]=1
  [pml]=ob1 [btl]="self,vader,tcp"
  [btl_tcp_if_include]=10.77.0.0/24 [oob_tcp_if_include]=10.77.0.0/24
)
all_user=("${user_args[@]}" "${EXTRA[@]}")
for ((k = 0; k < ${#all_user[@]}; k++)); do
  case ${all_user[k]} in --mca | -mca | --gmca | -gmca) unset "mca[${all_user[k + 1]:-}]" ;; esac
done
mca_args=()
for k in "${!mca[@]}"; do mca_args+=(--mca "$k" "${mca[$k]}"); done

cmd=(mpirun
  --hostfile "$hostfile" -np "$NP" --map-by slot --bind-to none --oversubscribe
  "${mca_args[@]}" "${xargs_[@]}" "${user_args[@]}" "${EXTRA[@]}" "${COMMAND[@]}")
if ((PRINT)); then printf '%q ' "$nodes" exec n1 "${cmd[@]}"; echo; exit 0; fi
# mpirun runs on n1 (its namespaces, hostname n1); exec keeps the PID so signals reach it.
exec "$nodes" exec --state "$STATE" n1 "${cmd[@]}"
