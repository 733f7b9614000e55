#!/usr/bin/env bash
# collbench built against MPICH across 2 emulated nodes (issue 36, "Launchers and nodes"): a 2x1
# allreduce (ring and MPICH's own) of 1 MiB, 12 calls each at least, on a local Slurm cluster of
# 2 nodes, with the bytes each node's eth0 sent read from the kernel around every run
# (tests/slurm/mpich_check.py holds the model: 1 MiB each way per call):
#   A. slurm/testbed/mpiexec.sh 2x1 (mpiexec.hydra, the rsh agent): verified, MPICH named, the
#      links carried at least the model; its link calibration goes to links.json, which B and C
#      reuse (so their link bytes are the collectives');
#   B. the same with UCX_TLS=all (UCX's own choice): the links carry under a tenth of the model —
#      UCX takes shared memory between emulated nodes (one kernel), the bypass A and C must not
#      show; it also proves their check can fail;
#   C. sbatch -N 2 --ntasks-per-node=1 slurm/sweep.sh: srun --mpi=pmi2, chosen from the binary;
#      the step ok, verified, schema-valid, MPICH named, slurm.job_id, links >= the model.
#
#   mpich_test.sh /path/to/collbench     (an MPICH build: COLLBENCH_MPI=mpich)
# Exit 0 pass, 1 fail, 77 skip (not root, no network namespaces, an Open MPI build). Two ranks on
# 2 cores: no oversubscription, no yield shim; the timings of these runs are not the point.
set -uo pipefail
# shellcheck source=tests/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_netns
require_cluster_tools "${1:-}" mpiexec.hydra
grep -q '^mpi: MPICH' <<<"$("$BIN" --version 2>&1)" ||
  skip "$BIN is not built against MPICH ($("$BIN" --version 2>&1 | sed -n 's/^mpi: //p' | head -n1)): configure with -DCOLLBENCH_MPI=mpich"
cluster_test mpich "${MPICH_TEST_BUDGET:-150}"
CHECK="$repo/tests/slurm/mpich_check.py"

# sent: "N1 N2", the bytes n1's and n2's eth0 have sent so far (netlink, from the root namespace)
sent() {
  local i out=()
  for i in 1 2; do
    out+=("$(ip -s -j -n "${TESTBED_NODE_NS_PREFIX}$i" link show dev eth0 |
      "$PY" -c 'import json, sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])')") ||
      fail "cannot read n$i's eth0 counters"
  done
  echo "${out[*]}"
}
# delta BEFORE AFTER -> "DN1 DN2"
delta() {
  local a1 a2 b1 b2
  read -r a1 a2 <<<"$1"
  read -r b1 b2 <<<"$2"
  echo "$((b1 - a1)) $((b2 - a2))"
}
ARGS=(--op allreduce --algo "ring,library" -b 1M -e 1M -n 10 -w 2 --quiet)

step "start.sh --nodes 2 --cpus 2"
timeout 60 "$CLUSTER/start.sh" --nodes 2 --cpus 2 >/dev/null || fail "start.sh"

# --- A, B: mpiexec.hydra across the nodes ------------------------------------------------------
hydra() { # JSON ENV... : mpiexec.sh 2x1 collbench ARGS, the links' bytes checked (mode on-link/bypass)
  local json=$1 mode=$2 before after rc=0
  shift 2
  before=$(sent)
  env "$@" timeout 60 "$TESTBED/mpiexec.sh" --state "$STATE/testbed" --no-up 2x1 -- \
    "$BIN" "${ARGS[@]}" --json "$json" --links "$work/links.json" >"$work/hydra.log" 2>&1 || rc=$?
  ((rc == 0)) || { cat "$work/hydra.log"; fail "mpiexec.sh 2x1 ($*): exit $rc"; }
  after=$(sent)
  # shellcheck disable=SC2046
  "$PY" "$CHECK" "$json" "$mode" $(delta "$before" "$after") || fail "mpiexec.sh 2x1 ($*): $mode check"
}
step "A. mpiexec.sh 2x1 (UCX_TLS=self,tcp by default)"
hydra "$work/hydra.jsonl" on-link
step "B. mpiexec.sh 2x1 with UCX_TLS=all"
hydra "$work/bypass.jsonl" bypass UCX_TLS=all

# --- C: the Slurm sweep --------------------------------------------------------------------------
SWEEP="$work/mpich.yaml"
cat >"$SWEEP" <<'YAML'
name: slurm-mpich
layouts: ["2x1"]
defaults: {min_bytes: 1M, max_bytes: 1M, iters: 10, warmup: 2, timeout: 30}
cases:
  - {op: allreduce, algo: [ring, library]}
YAML
OUT="$work/out"
mkdir -p "$OUT"
cp "$work/links.json" "$OUT/links.json" # A's calibration: the step measures no link
before=$(sent)
submit JC -N 2 --ntasks-per-node=1 slurm/sweep.sh --out "$OUT" --no-analysis "$SWEEP"
wait_job "$JC" COMPLETED 90
after=$(sent)
sed -n '/^sweep: summary of job/,$p' "$work/job-$JC.out"
grep -q '^sweep: .*backend mpi (srun --mpi=pmi2)' "$work/job-$JC.out" || fail "job $JC: not launched with srun --mpi=pmi2"
grep -q '^# srun --mpi=pmi2 ' "$OUT/steps/2x1.log" || fail "steps/2x1.log: the step's command is not srun --mpi=pmi2"
awk -F'\t' -v j="$JC" '$1=="2x1" && $2=="ok" && $5==j' "$OUT/steps.tsv" | grep -q . || fail "steps.tsv: 2x1 not ok in job $JC"
# shellcheck disable=SC2046
"$PY" "$CHECK" "$OUT/results.jsonl" on-link $(delta "$before" "$after") "$JC" || fail "job $JC: check"
ok=1
step "PASS"
