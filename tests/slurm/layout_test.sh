#!/usr/bin/env bash
# Node layouts end to end on the emulated cluster (slurm/testbed): collbench's node map, intra- vs
# inter-node pingpong, and collectives (node-aware ones and coll/han included) verified on 2x1, 2x2, 3x2
# and the uneven 3+1.
#   layout_test.sh /path/to/collbench      exit 0 pass, 1 fail, 77 skip (not root / no netns)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_netns
command -v mpirun >/dev/null || skip "Open MPI (mpirun) not installed"
COLLBENCH=${1:-}
[[ -n $COLLBENCH && -x $COLLBENCH ]] || fail "usage: layout_test.sh /path/to/collbench"
PY=/usr/bin/python3
CHECK=$repo/tests/slurm/layout_check.py

testbed_session layout
timeout 30 "$TESTBED/nodes.sh" up 3 -q >/dev/null || fail "nodes.sh up 3"

# run LAYOUT JSON ARGS...: collbench on the testbed, appending to a fresh JSON file.
run() {
  local layout=$1 json=$2
  shift 2
  rm -f "$json"
  timeout 100 "$TESTBED/mpirun.sh" --no-up "$layout" -- "$COLLBENCH" --json "$json" --quiet "$@" ||
    fail "mpirun.sh $layout collbench $*: exit $?"
}

step "2x2 pingpong latency,bw 8 B .. 1 MiB"
run 2x2 "$work/pp.jsonl" --op pingpong --algo latency,bw -b 8 -e 1M
"$PY" "$CHECK" pingpong "$work/pp.jsonl" || fail "pingpong records"

# Inter-node (TCP through the switch) must be measurably slower than intra-node (vader) at 8 B.
# A ratio, not an absolute bound; 4 ranks on 2 shared cores are noisy, so up to 2 retries.
ratio_json=$work/pp.jsonl
for attempt in 1 2 3; do
  if out=$("$PY" "$CHECK" ratio "$ratio_json" 1.5); then
    step "$out"
    break
  fi
  step "attempt $attempt: $out"
  ((attempt < 3)) || fail "inter-node latency not 1.5x the intra-node latency in 3 attempts"
  ratio_json=$work/ratio.jsonl
  run 2x2 "$ratio_json" --op pingpong --algo latency -b 8 -e 8 -n 200
done

# Every algorithm, the node-aware ones and Open MPI's coll/han included, on even layouts and an
# uneven one (3 ranks on n1, 1 on n2).
for layout in 2x1 2x2 3x2 3+1; do
  step "$layout allreduce,broadcast,allgather, every algorithm, 8 B .. 64 KiB"
  run "$layout" "$work/coll-$layout.jsonl" --op allreduce,broadcast,allgather --algo all -b 8 -e 64K -n 3 -w 1
  "$PY" "$CHECK" collectives "$work/coll-$layout.jsonl" "$layout" || fail "collectives on $layout"
done

# "han" is Open MPI's coll/han, not coll/tuned under another name: its communicator selects han
# (coll_base_verbose says which component each new communicator enables), the others do not.
step "2x2 han: coll/han enabled on its communicator only"
rm -f "$work/han.jsonl"
timeout 100 "$TESTBED/mpirun.sh" --no-up 2x2 --mca coll_base_verbose 10 -- "$COLLBENCH" --json "$work/han.jsonl" \
  --quiet --op allreduce --algo han,library -b 8 -e 64K -f 64 -n 3 -w 1 >"$work/han.log" 2>&1 ||
  fail "han run: exit $? ($(tail -n 3 "$work/han.log"))"
enabled=$(grep -c 'selecting *han, priority 100, Enabled' "$work/han.log" || true)
((enabled >= 4)) || fail "coll/han enabled on $enabled communicator(s), want at least one per rank (4)"
grep -q 'selecting *han, priority *0, Disabled' "$work/han.log" || fail "no communicator left coll/han at priority 0"
"$PY" - "$work/han.jsonl" <<'PY' || fail "han records"
import json, sys
res = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "result"]
han = [r for r in res if r["algo"] == "han" and not r["skipped"]]
assert han and all(r["wrong"] == 0 and r["checked"] for r in res), "han not measured, or wrong results"
PY

# Open MPI 4.1's han crashes on an in-place allreduce past one segment (it offsets MPI_IN_PLACE
# as a buffer): refused with the reason, the job goes on; avg (scaled copy, out of place) runs.
step "2x2 han in place: refused, not a crash; han avg measured"
rm -f "$work/han_ip.jsonl"
timeout 100 "$TESTBED/mpirun.sh" --no-up 2x2 -- "$COLLBENCH" --json "$work/han_ip.jsonl" --quiet --op allreduce \
  --algo han,ring --inplace 1 -b 4M -e 4M -n 2 -w 1 >"$work/han_ip.log" 2>&1 ||
  fail "han in place: exit $? ($(tail -n 3 "$work/han_ip.log"))"
timeout 100 "$TESTBED/mpirun.sh" --no-up 2x2 -- "$COLLBENCH" --json "$work/han_ip.jsonl" --quiet --op allreduce \
  --algo han --redop avg -b 4M -e 4M -n 2 -w 1 >>"$work/han_ip.log" 2>&1 ||
  fail "han avg: exit $? ($(tail -n 3 "$work/han_ip.log"))"
"$PY" - "$work/han_ip.jsonl" <<'PY' || fail "han in-place records"
import json, sys
res = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "result"]
inplace = [r for r in res if r["algo"] == "han" and r["in_place"]]
assert inplace and all(r["skipped"] and "MPI_IN_PLACE" in r["skip_reason"] for r in inplace), inplace
avg = [r for r in res if r["algo"] == "han" and r["redop"] == "avg"]
assert avg and all(not r["skipped"] and r["checked"] and r["wrong"] == 0 for r in avg), avg
assert all(r["wrong"] == 0 and not r["skipped"] for r in res if r["algo"] == "ring"), "ring in place"
PY

timeout 30 "$TESTBED/nodes.sh" down --state "$STATE" >/dev/null || fail "nodes.sh down"
left=$(testbed_namespaces)
[[ -z $left ]] || fail "namespaces left: $left"
step "PASS"
