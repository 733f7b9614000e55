#!/usr/bin/env bash
# slurm/profile.sh without Nsight Systems: the exact `nsys profile` command lines it runs, seen
# by a recording stand-in `nsys` first on PATH (tests/slurm/nsys_standin.py: records its argv
# and the rank's environment, expands %q{VAR} in --output as nsys does, then execs the program,
# so the profiled run still happens).
#
#   profile_test.sh local /path/to/collbench
#     options and errors in one process (trace list, cuda added for --device cuda, the NVTX
#     domain filter and `all`, --mpi-impl only with mpi, --nsys-args, the exit status passed
#     through; nsys missing, bad --ranks, bad --nvtx-domains: exit 2, one line, nothing run);
#     then `mpirun -np 4 profile.sh --ranks 0,3 -- collbench …` with COLLBENCH_LAYOUT=1x4 (as
#     sweep.sh exports it): nsys for ranks 0 and 3 only, --output …/collbench.1x4.%q{OMPI_COMM_WORLD_RANK}
#     naming one report per rank, every rank's collbench run verified (wrong = 0).
#   profile_test.sh srun /path/to/collbench
#     on the local Slurm cluster (2 emulated nodes): `srun -N 2 --ntasks-per-node=1 --mpi=pmix
#     profile.sh --ranks 0,1 -- collbench …`: nsys for ranks 0 and 1 (one per node) with
#     --output …/collbench.%q{SLURM_PROCID}, the run verified on 2 nodes. Exit 77 (skip) when
#     network namespaces are not available (not root).
# Exit 0 pass, 1 fail, 77 skip.
set -uo pipefail
# shellcheck source=tests/slurm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MODE=${1:-}
[[ $MODE == local || $MODE == srun ]] || fail "usage: profile_test.sh local|srun /path/to/collbench"
PROFILE=$repo/slurm/profile.sh
PY=/usr/bin/python3
[[ -x $PY ]] || fail "$PY not found"

# standin DIR: a folder holding `nsys` (a link to the stand-in), to put first on PATH.
standin() {
  mkdir -p "$1"
  ln -sf "$repo/tests/slurm/nsys_standin.py" "$1/nsys"
}

# expect LOG CHECK-ARGS...: the stand-in's log against the expected command lines (Python below).
expect() {
  "$PY" - "$@" <<'PY' || fail "stand-in log ${1##*/}: see above"
import json, sys
log, want_n, want_opts, program = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
# want_opts: the options, "|"-separated, exactly as profile.sh must pass them (in order);
# {R} stands for the rank, checked against the rank variable's value in that process.
try:
    entries = [json.loads(l) for l in open(log)]
except FileNotFoundError:
    entries = []
errors = []
if len(entries) != want_n:
    errors.append(f"{len(entries)} nsys invocations, expected {want_n}: {[e['argv'] for e in entries]}")
for e in entries:
    opts = e["argv"][1:len(e["argv"]) - len(e["program"])]
    want = want_opts.split("|")
    if e["argv"][0] != "profile" or opts != want or e["program"] != program:
        errors.append(f"argv {e['argv']}\n  expected profile {want} {program}")
for line in errors:
    print("  " + line)
sys.exit(1 if errors else 0)
PY
}

# ranks_and_names LOG VAR OUTDIR LAYOUT RANKS: which ranks ran nsys (by VAR), on which hosts, and
# the report names those processes resolve (OUTDIR/collbench[.LAYOUT].RANK, distinct per rank).
ranks_and_names() {
  "$PY" - "$@" <<'PY' || fail "per-rank report names: see above"
import json, sys
log, var, outdir, layout, ranks = sys.argv[1:6]
entries = [json.loads(l) for l in open(log)]
got = sorted(int(e["env"][var]) for e in entries)
want = sorted(int(r) for r in ranks.split(","))
errors = [] if got == want else [f"nsys ran on ranks {got} ({var}), expected {want}"]
stem = f"{outdir}/collbench" + (f".{layout}" if layout else "")
for e in entries:
    r = e["env"][var]
    if e["options"].get("--output") != f"{stem}.%q{{{var}}}":
        errors.append(f"rank {r}: --output {e['options'].get('--output')!r}, expected {stem}.%q{{{var}}}")
    if e["output_resolved"] != f"{stem}.{r}":
        errors.append(f"rank {r}: the report name resolves to {e['output_resolved']!r}, expected {stem}.{r}")
for line in errors:
    print("  " + line)
print("  " + ", ".join(f"rank {e['env'][var]} on {e['host']}: {e['output_resolved'].rsplit('/', 1)[-1]}.nsys-rep" for e in entries))
sys.exit(1 if errors else 0)
PY
}

# verified JSONL WORLD NODES: the collbench run happened on every rank: one run record of WORLD
# ranks on NODES nodes, results for every size, all verified, none wrong.
verified() {
  "$PY" - "$@" <<'PY' || fail "collbench results ${1##*/}: see above"
import json, sys
path, world, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recs = [json.loads(l) for l in open(path)]
runs = [r for r in recs if r["type"] == "run"]
res = [r for r in recs if r["type"] == "result"]
errors = []
if len(runs) != 1 or runs[0]["world_size"] != world or runs[0]["nodes"] != nodes:
    errors.append(f"run records: {[(r['world_size'], r['nodes']) for r in runs]}, expected one of {world} ranks on {nodes} nodes")
if sorted(r["bytes"] for r in res) != [1024, 2048, 4096] or any(not r["checked"] or r["wrong"] != 0 for r in res):
    errors.append(f"results: {[(r['bytes'], r['checked'], r['wrong']) for r in res]}")
for line in errors:
    print("  " + line)
sys.exit(1 if errors else 0)
PY
}

BIN=$(realpath "${2:-}" 2>/dev/null) || BIN=""
[[ -n $BIN && -x $BIN ]] || fail "usage: profile_test.sh $MODE /path/to/collbench (not executable: '${2:-}')"
ARGS=(--op allreduce --algo ring -b 1K -e 4K -n 3 -w 1 --quiet)

if [[ $MODE == local ]]; then
  command -v mpirun >/dev/null || fail "mpirun not found (apt-get install openmpi-bin)"
  work=$(mktemp -d /tmp/collbench-profile-test.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  standin "$work/bin"
  # No launcher variables from the environment the test runs in (e.g. inside a Slurm job).
  unset OMPI_COMM_WORLD_RANK SLURM_PROCID PMIX_RANK PMI_RANK COLLBENCH_LAYOUT NSYS COLLBENCH_PROFILE_OUT
  P="$work/bin:$PATH"

  step "one process: defaults, --device cuda adds cuda, exit status passed through"
  L=$work/one.log
  NSYS_STANDIN_LOG=$L PATH=$P "$PROFILE" --out "$work/one" -- /bin/sh -c 'exit 7' sh --device cuda
  rc=$?
  ((rc == 7)) || fail "exit status $rc, expected the program's 7"
  expect "$L" 1 "--trace=nvtx,mpi,osrt,cuda|--output=$work/one/collbench.0|--force-overwrite=true|--mpi-impl=openmpi|--nvtx-domain-include=collbench" \
    /bin/sh -c 'exit 7' sh --device cuda
  [[ -d $work/one ]] || fail "--out folder $work/one not created"

  step "--trace nvtx,osrt (no --mpi-impl), --nvtx-domains collbench,NCCL, --nsys-args"
  L=$work/two.log
  NSYS_STANDIN_LOG=$L PATH=$P "$PROFILE" --trace nvtx,osrt --nvtx-domains collbench,NCCL --out "$work/two" \
    --nsys-args "--sample=none --cpuctxsw=none" -- /bin/true || fail "exit $?"
  expect "$L" 1 "--trace=nvtx,osrt|--output=$work/two/collbench.0|--force-overwrite=true|--nvtx-domain-include=collbench,NCCL|--sample=none|--cpuctxsw=none" /bin/true

  step "--nvtx-domains all and a trace without nvtx: no domain filter"
  L=$work/three.log
  NSYS_STANDIN_LOG=$L PATH=$P "$PROFILE" --nvtx-domains all --out "$work/three" -- /bin/true || fail "exit $?"
  NSYS_STANDIN_LOG=$L PATH=$P "$PROFILE" --trace osrt --out "$work/three" -- /bin/true || fail "exit $?"
  "$PY" - "$L" "$work/three" <<'PY' || fail "--nvtx-domains all / --trace osrt"
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
o = sys.argv[2] + "/collbench.0"
want = [["profile", "--trace=nvtx,mpi,osrt", f"--output={o}", "--force-overwrite=true", "--mpi-impl=openmpi", "/bin/true"],
        ["profile", "--trace=osrt", f"--output={o}", "--force-overwrite=true", "/bin/true"]]
got = [x["argv"] for x in e]
if got != want:
    print(f"  got {got}\n  expected {want}")
    sys.exit(1)
PY

  step "usage errors: exit 2, one line, nothing run"
  L=$work/errors.log
  # error NAME EXPECTED-TEXT PATH ARGS...: profile.sh with PATH must exit 2 with one line.
  error() {
    local what=$1 text=$2 path=$3 out rc
    shift 3
    out=$(NSYS_STANDIN_LOG=$L PATH=$path "$PROFILE" "$@" 2>&1 >/dev/null)
    rc=$?
    ((rc == 2)) || fail "$what: exit $rc, expected 2 ($out)"
    [[ $(wc -l <<<"$out") == 1 && $out == *"$text"* ]] || fail "$what: expected one line with '$text', got: $out"
    step "  $what: $out"
  }
  error "no nsys" "nsys (Nsight Systems) not found" "$P" --nsys "$work/none/nsys" --out "$work/e" -- /bin/true
  error "bad --ranks" "bad --ranks '0,x'" "$P" --ranks 0,x --out "$work/e" -- /bin/true
  error "bad --nvtx-domains" "bad --nvtx-domains" "$P" --nvtx-domains "a b" --out "$work/e" -- /bin/true
  error "no program" "no program given" "$P" --out "$work/e"
  [[ ! -e $L && ! -e $work/e ]] || fail "an erroneous call ran nsys or created its --out folder"

  step "mpirun -np 4 profile.sh --ranks 0,3 -- collbench (COLLBENCH_LAYOUT=1x4, as in a sweep step)"
  L=$work/mpi.log
  rm -f "$work/mpi.jsonl"
  NSYS_STANDIN_LOG=$L PATH=$P COLLBENCH_LAYOUT=1x4 timeout 120 mpirun -np 4 --oversubscribe \
    "$PROFILE" --ranks 0,3 --out "$work/mpi" -- "$BIN" "${ARGS[@]}" --json "$work/mpi.jsonl" ||
    fail "mpirun profile.sh: exit $?"
  expect "$L" 2 "--trace=nvtx,mpi,osrt|--output=$work/mpi/collbench.1x4.%q{OMPI_COMM_WORLD_RANK}|--force-overwrite=true|--mpi-impl=openmpi|--nvtx-domain-include=collbench" \
    "$BIN" "${ARGS[@]}" --json "$work/mpi.jsonl"
  ranks_and_names "$L" OMPI_COMM_WORLD_RANK "$work/mpi" 1x4 0,3
  verified "$work/mpi.jsonl" 4 1
  step "PASS"
  exit 0
fi

# --- srun on the local Slurm cluster ---------------------------------------------------------
require_netns
require_cluster_tools "$BIN"
cluster_test profile "${PROFILE_TEST_BUDGET:-150}"
standin "$work/bin"
step "start.sh --nodes 2 --cpus 4"
timeout 60 "$CLUSTER/start.sh" --nodes 2 --cpus 4 >/dev/null || fail "start.sh"
L=$work/srun.log
# One rank per node (a core each): with ranks sharing cores, srun --mpi=pmix can lose an Open
# MPI rank in MPI_Init (docs/local-cluster.md#open-mpi-starts-with-mpirun-here).
step "srun -N 2 --ntasks-per-node=1 --mpi=pmix profile.sh --ranks 0,1 -- collbench"
(cd "$work" && env -u OMPI_COMM_WORLD_RANK -u COLLBENCH_LAYOUT NSYS_STANDIN_LOG="$L" PATH="$work/bin:$PATH" \
  OMPI_MCA_mpi_yield_when_idle=1 timeout "$(left)" "$C" srun -N 2 --ntasks-per-node=1 --mpi=pmix \
  "$PROFILE" --ranks 0,1 --out "$work/srun" -- "$BIN" "${ARGS[@]}" --json "$work/srun.jsonl") ||
  fail "srun profile.sh: exit $?"
expect "$L" 2 "--trace=nvtx,mpi,osrt|--output=$work/srun/collbench.%q{SLURM_PROCID}|--force-overwrite=true|--mpi-impl=openmpi|--nvtx-domain-include=collbench" \
  "$BIN" "${ARGS[@]}" --json "$work/srun.jsonl"
ranks_and_names "$L" SLURM_PROCID "$work/srun" "" 0,1
"$PY" - "$L" <<'PY' || fail "ranks 0 and 1 must run on different nodes"
import json, sys
hosts = {json.loads(l)["host"] for l in open(sys.argv[1])}
sys.exit(0 if len(hosts) == 2 else 1)
PY
verified "$work/srun.jsonl" 2 2
ok=1
step "PASS"
