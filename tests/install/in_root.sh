#!/bin/bash
# Runs INSIDE the clean Debian 12 root of deb_test.sh, after `apt-get install ./collbench.deb`:
# collbench and its tools from /usr, as a user of the package would, no checkout anywhere.
#   in_root.sh OUT     (results, plots, tuning file and logs go to OUT)
set -euo pipefail
out=$1
mkdir -p "$out"
t0=$(date +%s.%N)
step() { printf '[root %6.2fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')" "$*"; }
fail() { step "FAIL: $*"; exit 1; }

step "collbench is $(command -v collbench); $(dpkg-query -W -f='${Package} ${Version}' collbench)"
[[ $(command -v collbench) == /usr/bin/collbench ]] || fail "collbench is not /usr/bin/collbench"
# every library resolves, ours from /usr/lib/collbench, nothing from /usr/local (no CUDA here)
ldd /usr/bin/collbench | tee "$out/ldd.txt"
! grep -q 'not found' "$out/ldd.txt" || fail "unresolved libraries"
lib=$(awk '$1 == "libcollbench_collectives.so" { print $3 }' "$out/ldd.txt")
[[ $(readlink -f "$lib") == /usr/lib/collbench/libcollbench_collectives.so ]] || fail "libcollbench_collectives from '$lib', not /usr/lib/collbench"
! grep -qE '/usr/local|cuda|nccl' "$out/ldd.txt" || fail "a library from /usr/local or CUDA/NCCL"
[[ ! -e /usr/local/cuda ]] || fail "this root has /usr/local/cuda: not a clean root"

collbench --list >"$out/list.txt" || fail "collbench --list"
grep -q '^allreduce' "$out/list.txt" || grep -q 'allreduce' "$out/list.txt" || fail "--list names no allreduce"

# the installed sweep.sh's binary lookup (slurm/lib/options.sh find_binary) on the installed tree,
# COLLBENCH unset: the installed program, not a build folder
bin=$(env -u COLLBENCH bash -c 'set -euo pipefail; REPO=/usr/share/collbench; source "$REPO/scripts/lib.sh";
  source "$REPO/slurm/lib/options.sh"; find_binary; echo "$BIN"')
[[ $bin == /usr/bin/collbench ]] || fail "sweep.sh's find_binary chose '$bin', not /usr/bin/collbench"
# Captured, not piped into grep -q: the text is over a pipe buffer's write, and grep leaving early
# would SIGPIPE the rest of it (a failure under pipefail).
help=$(/usr/share/collbench/slurm/sweep.sh --help) && [[ $help == *sbatch* ]] || fail "installed sweep.sh --help"
step "sweep.sh (installed) picks $bin"

# a 2-rank sweep from /usr: every custom and library algorithm of two ops over sizes 8 B - 64 KiB
step "mpirun -np 2 collbench (allreduce, broadcast: all algorithms, 8 B - 64 KiB)"
mpirun --allow-run-as-root --oversubscribe -np 2 collbench --op allreduce,broadcast --algo all \
  -b 8 -e 64K -f 8 -n 5 -w 1 --json "$out/r.jsonl" >"$out/run.txt" 2>&1 || { cat "$out/run.txt"; fail "mpirun collbench"; }
python3 - "$out/r.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
res = [r for r in recs if r["type"] == "result" and not r["skipped"]]
assert any(r["type"] == "run" for r in recs), "no run record"
assert {r["world_size"] for r in res} == {2}, "world size is not 2"
assert {r["op"] for r in res} == {"allreduce", "broadcast"}, {r["op"] for r in res}
assert {"library", "ring"} <= {r["algo"] for r in res}, {r["algo"] for r in res}
bad = [(r["op"], r["algo"], r["bytes"]) for r in res if r["wrong"]]
assert not bad, f"wrong results: {bad}"
print(f"{len(res)} points measured, {len({r['algo'] for r in res})} algorithms, none wrong")
PY

# the installed analysis: analyze.sh (-> collplot), colltune, collcompare, from /usr
step "analyze.sh (installed) -> collplot"
/usr/share/collbench/slurm/analyze.sh "$out" >"$out/analyze.txt" 2>&1 || { cat "$out/analyze.txt"; fail "analyze.sh"; }
[[ -s $out/plots/report.html ]] || fail "no plots/report.html"
ls "$out"/plots/*.png >/dev/null 2>&1 || fail "no PNG in plots/"
step "colltune, collbench --algo auto with its file"
colltune "$out/r.jsonl" -o "$out/tuning.yaml" >"$out/tune.txt" 2>&1 || { cat "$out/tune.txt"; fail "colltune"; }
mpirun --allow-run-as-root --oversubscribe -np 2 collbench --op allreduce --algo auto --tuning "$out/tuning.yaml" \
  -b 1K -e 1K -n 3 -w 1 --json "$out/auto.jsonl" >"$out/auto.txt" 2>&1 || { cat "$out/auto.txt"; fail "--algo auto"; }
grep -q '"chosen"' "$out/auto.jsonl" || fail "--algo auto records name no chosen algorithm"
step "collcompare A/A"
rc=0; collcompare "$out/r.jsonl" "$out/r.jsonl" -o "$out/compare" >"$out/compare.txt" 2>&1 || rc=$?
((rc == 0)) || { cat "$out/compare.txt"; fail "collcompare A/A: exit $rc (0 = no regression expected)"; }
[[ -s $out/compare/compare.md ]] || fail "no compare.md"
# collmodel without PyTorch (only suggested by the package): its help, and one line saying what is missing
step "collmodel without PyTorch"
collmodel --help >/dev/null || fail "collmodel --help"
rc=0; msg=$(collmodel torch.nn:Linear --kwargs '{"in_features": 2, "out_features": 1}' --input 1,2 -o "$out/m" 2>&1) || rc=$?
((rc == 2)) && [[ $msg == "collmodel: error: cannot import torch.nn"*"torch"* && $msg != *$'\n'* ]] ||
  fail "collmodel without PyTorch: exit $rc, '$msg' (expected one line naming the missing torch, exit 2)"

# the modulefile under Lmod (a site's module system; Debian's lmod, installed here for this check)
step "apt-get install lmod; module load collbench"
apt-get install -y -q --no-install-recommends lmod >"$out/lmod-install.txt" 2>&1 || { tail "$out/lmod-install.txt"; fail "apt-get install lmod"; }
init=$(dpkg -L lmod | grep '/init/bash$' | head -n1)
got=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -c "source $init >/dev/null 2>&1
  module use /usr/share/collbench/modulefiles && module load collbench || exit 1
  echo \"\$COLLBENCH_SLURM \$COLLBENCH_ROOT \$(module -t list 2>&1 | grep collbench)\"" 2>&1) || fail "Lmod: module load collbench: $got"
[[ $got == "/usr/share/collbench/slurm /usr collbench/"* ]] || fail "Lmod: after module load collbench: '$got'"
step "Lmod: $got"
step "ok"
