#!/usr/bin/env bash
# Node-aware algorithms vs flat ones, the library and Open MPI's coll/han on the emulated
# cluster (slurm/testbed), the inter-node link rate-limited so TCP does not just compete for
# the cores (issue 19). One interleaved collbench run per layout, then plots and report.
#
#   bench/hier_testbed.sh [BUILD_DIR] [--rate RATE] [--layouts L1,L2,...] [--out DIR] [-- COLLBENCH-ARGS...]
#
# Defaults: build, --rate 1gbit, --layouts 2x2,2x3,3x2,3+1 (3+1: 3 ranks on n1, 1 on n2),
# --out results/local/hier-<UTC time>. The sweep is slurm/sweeps/hier.yaml (its cases; layouts
# come from --layouts). Brings the testbed up with the rate and takes it down again when it
# made it. Results: OUT/results.jsonl, OUT/plots/ (report.html, summary.md).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$REPO/scripts/lib.sh"
PROG=hier_testbed
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
build=build
[[ $# -gt 0 && $1 != -* ]] && { build=$1; shift; }
rate=1gbit layouts=2x2,2x3,3x2,3+1 out=$REPO/results/local/hier-$(date -u +%Y%m%dT%H%M%SZ) extra=()
while (($#)); do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --layouts) layouts=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
bin=$(realpath -- "$build/collbench")
[[ -x $bin ]] || die "no collbench in $build (build it: scripts/build.sh)"
testbed=$REPO/slurm/testbed
state=${COLLBENCH_TESTBED_STATE:-/tmp/collbench-testbed}
max_nodes=0
IFS=, read -r -a want <<<"$layouts"
for l in "${want[@]}"; do
  if [[ $l =~ ^([0-9]+)x[0-9]+$ ]]; then n=${BASH_REMATCH[1]}; else n=$(tr -cd + <<<"$l" | wc -c); n=$((n + 1)); fi
  ((n > max_nodes)) && max_nodes=$n
done
made=0
"$testbed/nodes.sh" check "$max_nodes" --state "$state" 2>/dev/null || made=1
"$testbed/nodes.sh" up "$max_nodes" --state "$state" --rate "$rate" >/dev/null
cleanup() { ((made)) && "$testbed/nodes.sh" down --state "$state" >/dev/null 2>&1 || true; }
trap cleanup EXIT
mkdir -p "$out"
for l in "${want[@]}"; do
  say "$l: collbench --config slurm/sweeps/hier.yaml (inter-node link tbf $rate)"
  "$testbed/mpirun.sh" --state "$state" --no-up "$l" -- "$bin" --config "$REPO/slurm/sweeps/hier.yaml" \
    --json "$out/results.jsonl" --quiet "${extra[@]}" || warn "$l: collbench exited $?"
done
MPLBACKEND=Agg /usr/bin/python3 "$REPO/analysis/collplot" "$out" -o "$out/plots" >"$out/plots.log" 2>&1 ||
  warn "collplot failed (see $out/plots.log)"
say "results: $out/results.jsonl  report: $out/plots/report.html"
