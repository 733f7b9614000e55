#!/usr/bin/env bash
# collbench testbed: run an MPICH program across emulated nodes with MPICH's mpiexec.hydra.
#
#   mpiexec.sh [--state DIR] [--no-up] [--print] LAYOUT [MPIEXEC-OPTIONS...] -- PROGRAM [ARGS...]
#
# LAYOUT as for mpirun.sh: NxR (N nodes n1..nN x R ranks, block mapping) or R1+R2+... (uneven).
# mpiexec.hydra runs on n1 with `-hosts n1:R1,n2:R2,...` and starts its proxy on the other nodes
# through rsh-agent.sh (`-launcher rsh -launcher-exec`); the ranks find each other through
# hydra's PMI. Across nodes MPICH's UCX is held to TCP on the node's interface (UCX_TLS=self,tcp,
# UCX_NET_DEVICES=eth0, unless set; lib.sh testbed_mpi_env says why): otherwise UCX takes
# shared memory between the emulated nodes and their links carry nothing. Ranks on one node use
# MPICH's own shared memory.
#
# If the switch or any of n1..nN is missing, the testbed is brought up (as mpirun.sh does);
# --no-up makes that an error. --print shows the command instead of running it.
#
# Environment:
#   COLLBENCH_TESTBED_STATE    testbed state dir (default /tmp/collbench-testbed)
#   COLLBENCH_MPIEXEC          the hydra launcher (default: mpiexec.hydra on PATH)
#   COLLBENCH_MPIEXEC_ARGS     extra mpiexec options (word-split), e.g. "-genv MPIR_CVAR_NOLOCAL 1"
#   COLLBENCH_RSH_AGENT_LOG    file to which rsh-agent.sh logs every launch (debugging)
#   COLLBENCH_INTER_NODE_LINK  what collbench records of the inter-node link (default: says it
#                              is emulated, and the testbed's --rate)
# The environment reaches every rank (no ssh: the proxies inherit it). More MPICH ranks than
# cores spin against each other (ch4's progress never yields): for correctness runs preload
# build-mpich/tests/mpich/libcollbench_yield_when_idle.so (LD_PRELOAD); its timings mean nothing.
# PROGRAM must be an absolute path or on PATH on every node (the filesystem is shared).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=slurm/testbed/lib.sh
source "$here/lib.sh" # testbed_launch_args, testbed_mpi_env, testbed_link_text
testbed_launch_args MPIEXEC-OPTIONS "$@" # -> STATE, PRINT, LAYOUT, PER_NODE, N, NP, EXTRA, COMMAND
hydra=${COLLBENCH_MPIEXEC:-mpiexec.hydra}
command -v -- "$hydra" >/dev/null || die "'$hydra' not found (apt-get install mpich, or set COLLBENCH_MPIEXEC)"
hydra=$(command -v -- "$hydra")

eval "$(testbed_mpi_env)"
COLLBENCH_INTER_NODE_LINK=${COLLBENCH_INTER_NODE_LINK:-$(testbed_link_text "$STATE")}
export COLLBENCH_INTER_NODE_LINK
hosts=()
for ((i = 1; i <= N; i++)); do hosts+=("n$i:$((10#${PER_NODE[i - 1]}))"); done
# shellcheck disable=SC2206  # word-splitting intended
user_args=(${COLLBENCH_MPIEXEC_ARGS:-})

cmd=("$hydra" -launcher rsh -launcher-exec "$here/rsh-agent.sh"
  -hosts "$(IFS=,; echo "${hosts[*]}")" -n "$NP" "${user_args[@]}" "${EXTRA[@]}" "${COMMAND[@]}")
if ((PRINT)); then printf '%q ' "$here/nodes.sh" exec n1 "${cmd[@]}"; echo; exit 0; fi
# mpiexec runs on n1 (its namespaces, hostname n1); exec keeps the PID so signals reach it.
exec "$here/nodes.sh" exec --state "$STATE" n1 "${cmd[@]}"
