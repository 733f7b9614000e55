#!/usr/bin/env bash
# Issue 19's selection target, end to end: tune on one run, re-measure in another.
#
#   bench/auto_round.sh [BUILD_DIR] [--out DIR] [--rate RATE|none] [--layouts L1,L2,...] [--tie RULE]
#
# A: slurm/sweeps/tuning.yaml on each layout (1xR under plain mpirun, NxR with N > 1 on the
#    emulated cluster, slurm/testbed, its link at --rate, default 1gbit) -> OUT/A.jsonl;
#    analysis/colltune --tie RULE (default median) OUT/A.jsonl -> OUT/tuning.yaml, and with the
#    other rule -> OUT/tuning-other.yaml, which auto_check.py judges offline on B.
# B: the same sweep with every algorithm plus auto (--tuning OUT/tuning.yaml), interleaved at
#    every size -> OUT/B.jsonl; bench/auto_check.py OUT/B.jsonl prints auto against the best
#    single algorithm and the library per size (targets 0.95 and 0.97).
# Defaults: build, --layouts 1x2,1x4,2x2, --out results/local/auto-<UTC time>. Run again with the
# same --out to resume (collbench --resume: points already recorded are skipped). Exit: that of
# auto_check.py (0 every target met, 1 not), 2 on usage errors or a failed run.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/scripts/lib.sh"
PROG=auto_round
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
build=build
[[ $# -gt 0 && $1 != -* ]] && { build=$1; shift; }
tie=median rate=1gbit layouts=1x2,1x4,2x2 out=$REPO/results/local/auto-$(date -u +%Y%m%dT%H%M%SZ)
while (($#)); do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --layouts) layouts=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tie) tie=$2; shift 2 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
bin=$(realpath -- "$build/collbench")
[[ -x $bin ]] || die "no collbench in $build (build it: scripts/build.sh)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
mkdir -p "$out"
sweep=$REPO/slurm/sweeps/tuning.yaml
testbed=$REPO/slurm/testbed
state=${COLLBENCH_TESTBED_STATE:-/tmp/collbench-testbed}
IFS=, read -r -a want <<<"$layouts"
max_nodes=1
for l in "${want[@]}"; do
  [[ $l =~ ^([0-9]+)x([0-9]+)$ ]] || die "layout '$l' is not NxR"
  ((BASH_REMATCH[1] > max_nodes)) && max_nodes=${BASH_REMATCH[1]}
done
made=0
if ((max_nodes > 1)); then
  "$testbed/nodes.sh" check "$max_nodes" --state "$state" 2>/dev/null || made=1
  "$testbed/nodes.sh" up "$max_nodes" --state "$state" --rate "$rate" >/dev/null
fi
cleanup() { ((made)) && "$testbed/nodes.sh" down --state "$state" >/dev/null 2>&1 || true; }
trap cleanup EXIT

# sweep CONFIG JSON: every layout, one collbench run each
sweep() {
  local l n r resume=()
  [[ -s $2 ]] && resume=(--resume)  # run again into the same --out: points already there are skipped
  for l in "${want[@]}"; do
    n=${l%x*} r=${l#*x}
    say "$l: collbench --config $(basename "$1") -> $(basename "$2")"
    if ((n == 1)); then
      mpirun -np "$r" --oversubscribe --bind-to none -x OMPI_MCA_mpi_yield_when_idle "$bin" --config "$1" --json "$2" --quiet "${resume[@]}"
    else
      "$testbed/mpirun.sh" --state "$state" --no-up "$l" -- "$bin" --config "$1" --json "$2" --quiet "${resume[@]}"
    fi || die "$l: collbench exited $?"
  done
}

sweep "$sweep" "$out/A.jsonl"
other=spread
[[ $tie == spread ]] && other=median
/usr/bin/python3 "$REPO/analysis/colltune" --tie "$tie" "$out/A.jsonl" -o "$out/tuning.yaml" >"$out/tune.log" 2>&1 ||
  die "colltune failed (see $out/tune.log)"
/usr/bin/python3 "$REPO/analysis/colltune" --tie "$other" "$out/A.jsonl" -o "$out/tuning-other.yaml" >"$out/tune-other.log" 2>&1 ||
  die "colltune --tie $other failed (see $out/tune-other.log)"
# B: the same cases with auto beside every algorithm, reading the tuning file from A
sed -e 's/algo: all/algo: [all, auto]/' -e "s|^defaults:|defaults:\n  tuning: $out/tuning.yaml|" "$sweep" >"$out/B.yaml"
sweep "$out/B.yaml" "$out/B.jsonl"
say "tuned on $out/A.jsonl, re-measured in $out/B.jsonl"
/usr/bin/python3 "$REPO/bench/auto_check.py" "$out/B.jsonl" --offline "$out/tuning-other.yaml" | tee "$out/auto_check.txt"
exit "${PIPESTATUS[0]}"
