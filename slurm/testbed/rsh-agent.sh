#!/usr/bin/env bash
# collbench testbed: the remote-launch agent of Open MPI and MPICH's hydra (instead of ssh).
#
#   mpirun --mca plm_rsh_agent /abs/path/slurm/testbed/rsh-agent.sh ...        (mpirun.sh)
#   mpiexec.hydra -launcher rsh -launcher-exec /abs/path/slurm/testbed/rsh-agent.sh ...  (mpiexec.sh)
#
# Both call it like ssh: `rsh-agent.sh [ssh-options] HOST CMD ARGS...`, where CMD ARGS form a
# shell command line (ssh joins them with spaces for the remote shell; hydra quotes its proxy's
# path in it). We enter the emulated node HOST (n2, 2 or 10.77.0.2) through `nodes.sh exec` —
# its network namespace, a fresh UTS namespace with hostname nI, a mount namespace with the
# testbed's /etc/hosts — and run the command line with sh. The environment is inherited as is (unlike ssh), so
# COLLBENCH_TESTBED_STATE and every variable the launcher sees reach its daemon and the ranks.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# skip ssh-style options (Open MPI adds none for a non-ssh agent, but be tolerant)
while (($#)) && [[ $1 == -* ]]; do
  case $1 in -o | -l | -p | -i | -F) shift 2 ;; *) shift ;; esac
done
(($# >= 2)) || { echo "rsh-agent.sh: usage: rsh-agent.sh HOST COMMAND..." >&2; exit 255; }
host=$1; shift
if [[ -n ${COLLBENCH_RSH_AGENT_LOG:-} ]]; then
  printf '%s rsh-agent %s: %s\n' "$(date +%T.%N)" "$host" "$*" >>"$COLLBENCH_RSH_AGENT_LOG"
fi
exec "$here/nodes.sh" exec "$host" sh -c "$*"
