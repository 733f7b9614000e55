#!/usr/bin/env bash
# Proof test for slurm/cluster: a 3-node local Slurm cluster on the emulated nodes; srun,
# srun --mpi=pmix with Open MPI (2 nodes x 2 ranks), sbatch + polling; clean stop.
# Exit 0 pass, 1 fail, 77 skip (not root / no network namespaces).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_netns
for c in slurmctld slurmd munged mpicxx; do command -v $c >/dev/null || fail "'$c' not installed (apt-get install slurm-wlm munge libopenmpi-dev)"; done

# Fixed state dir: a run killed by a CTest timeout leaves it behind, and the next run's
# start.sh/stop.sh then stops exactly those leftovers (by their pid files).
STATE=${TMPDIR:-/tmp}/collbench-cluster-test
export COLLBENCH_CLUSTER_STATE=$STATE
"$CLUSTER/stop.sh" >/dev/null 2>&1
work=$(mktemp -d /tmp/collbench-cluster-work.XXXXXX)
C="$CLUSTER/client.sh"
our_daemons() { # live (non-zombie) munged/slurmctld/slurmd/slurmstepd naming our state dir
  ps -eo pid=,stat=,comm=,args= | awk -v s="$STATE/" '$2 !~ /^Z/ && $3 ~ /^(munged|slurmctld|slurmd|slurmstepd)$/ && index($0, s)'
}
cleanup() {
  "$CLUSTER/stop.sh" >/dev/null 2>&1
  rm -rf "$work"
  [[ ${keep_state:-0} == 1 ]] || rm -rf "$STATE"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
claim_testbed "$STATE/testbed"
build_probe "$work/mpi_probe"
cd "$work" || fail "cd $work"

step "start.sh --nodes 3 --cpus 4"
timeout 60 "$CLUSTER/start.sh" --nodes 3 --cpus 4 || { keep_state=1; fail "start.sh (logs: $STATE/log)"; }
timeout 20 "$CLUSTER/start.sh" --nodes 3 --cpus 4 || fail "start.sh again (must be a no-op)"
timeout 10 "$C" sinfo

step "srun -N3 hostname"
out=$(timeout 30 "$C" srun -N3 hostname) || fail "srun -N3 hostname: $out"
got=$(sort <<<"$out" | paste -sd " " -); step "hosts: $got"
[[ $got == "n1 n2 n3" ]] || fail "expected 'n1 n2 n3', got '$got'"

step "srun -N2 --ntasks-per-node=2 --mpi=pmix mpi_probe pingpong"
out=$(timeout 60 "$C" srun -N2 --ntasks-per-node=2 --mpi=pmix "$work/mpi_probe" pingpong) || fail "srun mpi_probe: $out"
echo "$out"
n=$(grep -c '^rank ' <<<"$out")
[[ $n == 4 ]] || fail "expected 4 rank lines from one world of size 4, got $n (singletons?)"
for r in 0 1 2 3; do
  grep -qx "rank $r size 4 host n$((r / 2 + 1)) local 2" <<<"$out" || fail "rank $r: expected 'rank $r size 4 host n$((r / 2 + 1)) local 2'"
done
step "8 B half round trip under srun: intra $(awk '$2=="0-1"{print $8}' <<<"$out") us, inter $(awk '$2=="0-2"{print $8}' <<<"$out") us"

step "sbatch + poll squeue"
cat >"$work/job.sh" <<JOB
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=1 -o $work/job-%j.out -J cbtest
echo "batch host \$(hostname)"
srun hostname | sort
srun "$work/mpi_probe"
JOB
job=$(timeout 20 "$C" sbatch --parsable "$work/job.sh") || fail "sbatch: $job"
step "job $job submitted"
st=$(timeout 60 "$CLUSTER/wait-job.sh" --timeout 50 "$job"); rc=$?
step "job $job: $st"
cat "$work/job-$job.out" 2>/dev/null
((rc == 0)) || fail "job $job ended $st (rc $rc)"
grep -qx "batch host n1" "$work/job-$job.out" || fail "job output lacks 'batch host n1'"
grep -qx "rank 1 size 2 host n2 local 1" "$work/job-$job.out" || fail "job output lacks the MPI line of rank 1"

step "kill slurmd n2 by hand, then stop.sh"
kill -9 "$(cat "$STATE/pids/slurmd-n2.pid")"
timeout 60 "$CLUSTER/stop.sh" || fail "stop.sh"
timeout 60 "$CLUSTER/stop.sh" || fail "stop.sh (second time)"
sleep 0.2
left=$(our_daemons); [[ -z $left ]] || fail "daemons left: $left"
left=$(testbed_namespaces); [[ -z $left ]] || fail "namespaces left: $left"
step "PASS"
