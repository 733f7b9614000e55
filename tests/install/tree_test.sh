#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` and the installed tree used without the checkout (from a
# folder outside it, COLLBENCH and COLLBENCH_REPO unset):
#   A. the modulefile, read by environment-modules: `module load collbench` puts P/bin first on
#      PATH and sets COLLBENCH_SLURM; then P is moved to Q (the tree is relocatable: RUNPATH
#      $ORIGIN-relative, scripts/installed.sh relative) and everything below runs from Q;
#   B. Q/bin/collbench: its RUNPATH names no build folder; a 2-rank mpirun sweep, verified;
#   C. the installed sweep.sh's binary lookup (find_binary) -> Q/bin/collbench;
#   D. Q/bin/collplot (report.html + figures), colltune, collcompare on those results;
#   E. pip: a venv with --system-site-packages, `pip install --no-build-isolation --no-index` of
#      the checkout's analysis/ (a copy: the build writes into the source folder), the console
#      scripts collplot/collcompare/colltune from the venv, the package's own schema copy;
#   F. (root + network namespaces) Q/share/collbench/slurm/local-sweep.sh: a real local Slurm
#      cluster runs the installed sweep.sh on 1x2 and 2x1, which finds Q/bin/collbench by itself
#      and makes the plots with the installed collplot; the cluster is stopped again.
#
#   tree_test.sh SOURCE_DIR BUILD_DIR
# Exit 0 pass, 1 fail, 77 skipped: A-E passed but F could not run (no root or no network
# namespaces), so the check shrank: ctest shows it Skipped (SKIP_RETURN_CODE), not Passed.
set -uo pipefail
src=$1 build=$2
t0=$(date +%s.%N)
step() { printf '[%6.2fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')" "$*"; }
fail() { step "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
export MPLBACKEND=Agg OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset COLLBENCH COLLBENCH_REPO COLLBENCH_OUT COLLBENCH_RESULTS

work=$(mktemp -d /tmp/collbench-install-test.XXXXXX)
chmod 755 "$work" # Slurm jobs (F) write below it
cluster_state=/tmp/collbench-install-test-cluster
cleanup() {
  if [[ -d $cluster_state && -x $work/q/share/collbench/slurm/cluster/stop.sh ]]; then
    COLLBENCH_CLUSTER_STATE=$cluster_state "$work/q/share/collbench/slurm/cluster/stop.sh" >/dev/null 2>&1 &&
      rm -rf "$cluster_state"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

step "cmake --install $build --prefix $work/p"
cmake --install "$build" --prefix "$work/p" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/collbench bin/collplot bin/collcompare bin/colltune share/collbench/slurm/sweep.sh \
  share/collbench/slurm/profile.sh share/collbench/slurm/analyze.sh share/collbench/slurm/local-sweep.sh \
  share/collbench/slurm/sweeps/small.yaml share/collbench/scripts/lib.sh share/collbench/scripts/installed.sh \
  share/collbench/analysis/collbench_analysis/cli.py share/collbench/analysis/collbench_analysis/collbench-1.json \
  share/collbench/analysis/pyproject.toml share/collbench/modulefiles/collbench/; do
  [[ -e $work/p/$f ]] || fail "not installed: P/$f"
done
[[ ! -L $work/p/share/collbench/analysis/collbench_analysis/collbench-1.json ]] || fail "the installed schema is a link"

# --- A. the modulefile (environment-modules), then move the tree --------------------------------
init=/usr/share/modules/init/bash
[[ -f $init ]] || fail "environment-modules is not installed ($init; scripts/deps.sh installs it)"
got=$(env -i PATH=/usr/bin:/bin HOME="$work" bash -c "source $init >/dev/null 2>&1
  module use $work/p/share/collbench/modulefiles && module load collbench || exit 1
  echo \"\$(command -v collbench) \$COLLBENCH_SLURM \$COLLBENCH_ROOT \${PATH%%:*}\"" 2>&1) || fail "module load collbench: $got"
[[ $got == "$work/p/bin/collbench $work/p/share/collbench/slurm $work/p $work/p/bin" ]] ||
  fail "after module load: '$got', expected '$work/p/bin/collbench $work/p/share/collbench/slurm $work/p $work/p/bin'"
step "module load collbench (environment-modules): PATH starts with P/bin, COLLBENCH_SLURM=P/share/collbench/slurm"
mv "$work/p" "$work/q"
Q=$work/q
mkdir -p "$work/run"
cd "$work/run" || fail "cd $work/run"
step "the tree moved to $Q; working in $work/run"

# --- B. the program --------------------------------------------------------------------------
dyn=$(objdump -p "$Q/bin/collbench" "$Q"/lib*/collbench/*.so | grep -E 'RPATH|RUNPATH')
echo "$dyn"
! grep -qF "$build" <<<"$dyn" || fail "an installed file's RUNPATH names the build folder"
grep -q 'RUNPATH *\$ORIGIN/\.\./lib[^:]*/collbench' <<<"$dyn" || fail "bin/collbench's RUNPATH is not \$ORIGIN-relative"
"$Q/bin/collbench" --list >list.txt 2>&1 || { cat list.txt; fail "collbench --list"; }
step "mpirun -np 2 $Q/bin/collbench (allreduce: ring, library, 8 B - 4 KiB)"
mpirun --oversubscribe -np 2 "$Q/bin/collbench" --op allreduce --algo ring,library -b 8 -e 4K -f 8 \
  -n 5 -w 1 --json r.jsonl >run.txt 2>&1 || { cat run.txt; fail "mpirun collbench"; }
$PY - r.jsonl "$Q/bin/collbench" <<'PY' || fail "the results"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
run = next(r for r in recs if r["type"] == "run")
assert run["argv"][0] == sys.argv[2], run["argv"][0]
res = [r for r in recs if r["type"] == "result"]
assert len(res) == 8 and {r["algo"] for r in res} == {"ring", "library"}, [(r["algo"], r["bytes"]) for r in res]
assert all(r["world_size"] == 2 and r["wrong"] == 0 and not r["skipped"] for r in res)
print(f"{len(res)} points, none wrong")
PY

# --- C. the installed sweep.sh's binary lookup -----------------------------------------------
bin=$(bash -c 'set -euo pipefail; REPO=$1; source "$REPO/scripts/lib.sh"; source "$REPO/slurm/lib/options.sh"
  find_binary; echo "$BIN"' _ "$Q/share/collbench") || fail "find_binary in the installed tree"
[[ $bin == "$Q/bin/collbench" ]] || fail "the installed sweep.sh would run '$bin', not $Q/bin/collbench"
step "installed sweep.sh finds $bin"

# --- D. the installed analysis commands -------------------------------------------------------
"$Q/bin/collplot" r.jsonl -o plots >collplot.txt 2>&1 || { cat collplot.txt; fail "installed collplot"; }
[[ -s plots/report.html ]] && compgen -G 'plots/*.png' >/dev/null || fail "installed collplot wrote no report.html/figures"
"$Q/bin/colltune" r.jsonl -o tuning.yaml >colltune.txt 2>&1 || { cat colltune.txt; fail "installed colltune"; }
grep -q 'allreduce' tuning.yaml || fail "tuning.yaml names no allreduce"
"$Q/bin/collcompare" r.jsonl r.jsonl -o compare >collcompare.txt 2>&1 || { cat collcompare.txt; fail "installed collcompare A/A"; }
step "installed collplot ($(find plots -name '*.png' | wc -l) figures), colltune, collcompare: ok"

# --- E. pip into a venv ------------------------------------------------------------------------
mkdir -p "$work/src/results" && cp -r "$src/analysis" "$work/src/" && cp -r "$src/results/schema" "$work/src/results/" ||
  fail "copy analysis/"
rm -rf "$work/src/analysis/build" "$work/src/analysis"/*.egg-info
step "python3 -m venv --system-site-packages; pip install --no-build-isolation --no-index ./analysis"
$PY -m venv --system-site-packages "$work/venv" || fail "python3 -m venv (python3-venv)"
(cd "$work/src" && "$work/venv/bin/pip" install -q --no-build-isolation --no-index ./analysis) >pip.txt 2>&1 ||
  { cat pip.txt; fail "pip install ./analysis"; }
for t in collplot collcompare colltune; do [[ -x $work/venv/bin/$t ]] || fail "no console script venv/bin/$t"; done
loc=$("$work/venv/bin/python" -c 'import collbench_analysis.schema as s; print(s.SCHEMA_FILE, s.schema_id())') ||
  fail "import collbench_analysis from the venv"
[[ $loc == "$work/venv/lib/"*"/site-packages/collbench_analysis/collbench-1.json collbench/1" ]] ||
  fail "the venv's package reads its schema from '$loc', not its own copy"
"$work/venv/bin/collplot" r.jsonl -o venv-plots >venv-collplot.txt 2>&1 || { cat venv-collplot.txt; fail "venv collplot"; }
[[ -s venv-plots/report.html ]] || fail "venv collplot wrote no report.html"
"$work/venv/bin/colltune" r.jsonl -o venv-tuning.yaml >/dev/null 2>&1 || fail "venv colltune"
"$work/venv/bin/collcompare" r.jsonl r.jsonl -o venv-compare >/dev/null 2>&1 || fail "venv collcompare A/A"
"$work/venv/bin/collcompare" --help | grep -q '^usage: collcompare' || fail "venv collcompare --help"
step "venv console scripts collplot, colltune, collcompare: ok (schema $loc)"

# --- F. the installed local-sweep.sh: a real Slurm cluster runs the installed sweep.sh ----------
if [[ $(id -u) != 0 ]] || ! ip netns add "cbinst$$" 2>/dev/null; then
  step "F skipped: needs root and network namespaces"
  skipped_f=1
else
  ip netns del "cbinst$$"
  cat >sweep.yaml <<'YAML'
name: install-test
layouts: ["1x2", "2x1"]
defaults: {min_bytes: 8, max_bytes: 1K, step_factor: 8, iters: 5, warmup: 1}
cases:
  - {op: allreduce, algo: [ring, library]}
YAML
  step "Q/share/collbench/slurm/local-sweep.sh sweep.yaml (1x2, 2x1)"
  rc=0
  COLLBENCH_CLUSTER_STATE=$cluster_state COLLBENCH_RESULTS=$work/run/results \
    "$Q/share/collbench/slurm/local-sweep.sh" --timeout 240 sweep.yaml >local-sweep.txt 2>&1 || rc=$?
  cat local-sweep.txt
  ((rc == 0)) || fail "installed local-sweep.sh: exit $rc"
  out=$(compgen -G 'results/collbench-*.out' | head -n1)
  [[ -n $out ]] || fail "no job output in results/"
  grep -qx "sweep: collbench: $Q/bin/collbench" "$out" || fail "the installed sweep.sh did not run $Q/bin/collbench: $(grep 'collbench:' "$out")"
  jobdir=$(compgen -G 'results/[0-9]*' | head -n1)
  [[ -s $jobdir/plots/report.html ]] || fail "no plots from the installed collplot in $jobdir"
  $PY - "$jobdir/results.jsonl" <<'PY' || fail "the sweep's results"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1])]
res = [r for r in res if r["type"] == "result"]
lay = {f'{r["nodes"]}x{r["ranks_per_node"]}' for r in res}
assert lay == {"1x2", "2x1"}, lay
assert all(r["wrong"] == 0 and not r["skipped"] for r in res)
print(f"{len(res)} points on layouts {sorted(lay)}, none wrong")
PY
  step "installed sweep.sh under Slurm: ok"
fi
if [[ ${skipped_f:-0} == 1 ]]; then
  step "SKIPPED: A-E ok, F (the installed sweep.sh under a local Slurm cluster) not run"
  exit 77
fi
step "ok"
