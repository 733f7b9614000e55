#!/usr/bin/env bash
# The Debian package, built and installed where nothing of the development machine helps:
#   A. `cpack -G DEB` of the CPU build (this build when it has no CUDA/NCCL, else a CPU build
#      of the same sources in BUILD-cpu: -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF);
#   B. the .deb: Depends names Open MPI, yaml-cpp and the analysis' Python modules; no file in it
#      needs a CUDA/NCCL library or has a RUNPATH into /usr/local or the build folder;
#   C. a clean Debian 12 root (mmdebstrap --variant=apt: Essential + apt, from the archive this
#      machine's apt sources name), then inside it `apt-get install ./collbench_*.deb` (apt
#      resolves the Depends) and tests/install/in_root.sh: a 2-rank mpirun sweep from /usr,
#      the installed sweep.sh's binary lookup, analyze.sh/collplot, colltune (+ --algo auto),
#      collcompare — its report, plots and results are copied out and checked here.
# The root lives under a temporary folder in /tmp and is removed with everything mounted in it
# (mmdebstrap mounts /proc, /sys, /dev for its hooks and unmounts them; a mount left by a killed
# run is unmounted here). Debian packages this machine already has in /var/cache/apt/archives
# are hard-linked into the root's apt cache (apt checks them against the archive's hashes), so
# only what is missing is downloaded.
#
#   deb_test.sh SOURCE_DIR BUILD_DIR HAS_GPU(0|1)
# Exit 0 pass, 1 fail, 77 skip (not root, no mmdebstrap/dpkg-dev, or the archive unreachable).
set -uo pipefail
src=$1 build=$2 gpu=$3
t0=$(date +%s.%N)
step() { printf '[%6.2fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')" "$*"; }
fail() { step "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[[ $(id -u) == 0 ]] || skip "needs root (mmdebstrap's root mode, chroot)"
for c in mmdebstrap dpkg-deb dpkg-shlibdeps cpack objdump; do
  command -v "$c" >/dev/null || skip "'$c' not installed (scripts/deps.sh: mmdebstrap dpkg-dev binutils)"
done

work=$(mktemp -d /tmp/collbench-deb-test.XXXXXX)
cleanup() {
  # anything a killed mmdebstrap left mounted below our folder, deepest first, then the folder
  local m
  for m in $(findmnt -rn -o TARGET | grep -F "$work/" | sort -r); do umount -l "$m" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# --- A. the package ---------------------------------------------------------------------------
if [[ $gpu == 1 ]]; then
  # A sibling of BUILD with its compiler launcher (scripts/build.sh: ccache with the cache in
  # BUILD and paths relative to the checkout), so every object the two trees share is reused.
  pkg=$build-cpu
  if [[ ! -f $pkg/CMakeCache.txt ]]; then
    launcher=()
    cached=$(sed -n 's/^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=//p' "$build/CMakeCache.txt")
    if [[ -n $cached ]]; then
      launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=$cached")
    elif command -v ccache >/dev/null; then
      launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    step "configure the CPU build in $pkg"
    cmake -S "$src" -B "$pkg" -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF \
      -DCOLLBENCH_TESTS=OFF -DCOLLBENCH_BENCH=OFF -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" \
      >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "cmake configure of the CPU build"; }
  fi
else
  pkg=$build
fi
# cpack builds the tree's default target first (its "preinstall"): all of it, tests too when on
step "build $pkg"
cmake --build "$pkg" -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; fail "build"; }
step "cpack -G DEB"
rm -rf "$pkg/package"
(cd "$pkg" && cpack -G DEB -B "$pkg/package") >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack -G DEB"; }
debs=("$pkg"/package/collbench_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "expected one collbench_*.deb in $pkg/package, found: ${debs[*]}"
deb=${debs[0]}
step "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"

# --- B. what the package declares and contains -------------------------------------------------
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for d in libopenmpi3 libyaml-cpp0.7 openmpi-bin python3 python3-matplotlib python3-numpy python3-scipy \
  python3-jsonschema python3-yaml; do
  [[ ", $depends," == *", $d"[\ ,]* ]] || fail "Depends lacks $d"
done
[[ $depends != *cuda* && $depends != *nccl* ]] || fail "Depends names CUDA/NCCL"
dpkg-deb -x "$deb" "$work/deb"
for f in usr/bin/collbench usr/bin/collplot usr/bin/collcompare usr/bin/colltune usr/bin/collmodel \
  usr/share/collbench/slurm/sweep.sh usr/share/collbench/slurm/profile.sh usr/share/collbench/slurm/analyze.sh \
  usr/share/collbench/slurm/sweeps/default.yaml usr/share/collbench/analysis/collbench_analysis/collbench-1.json \
  usr/share/collbench/scripts/installed.sh usr/share/collbench/modulefiles/collbench; do
  [[ -e $work/deb/$f ]] || fail "the package has no /$f"
done
grep -q 'prepend-path PATH *\/usr\/bin$' "$work"/deb/usr/share/collbench/modulefiles/collbench/* ||
  fail "the modulefile does not put /usr/bin on PATH"
nelf=0
while IFS= read -r -d '' f; do
  [[ $(head -c4 "$f" | od -An -c | tr -d ' ') == 177ELF ]] || continue
  nelf=$((nelf + 1))
  dyn=$(objdump -p "$f" | grep -E 'NEEDED|RPATH|RUNPATH')
  echo "${f#"$work/deb"}: $(tr '\n' ' ' <<<"$dyn")"
  if grep -qiE 'cuda|nccl|nvToolsExt' <<<"$dyn"; then fail "${f#"$work/deb"} needs CUDA/NCCL: $dyn"; fi
  if grep -qE "(RPATH|RUNPATH).*(/usr/local|$build|$src)" <<<"$dyn"; then fail "${f#"$work/deb"} has a RUNPATH into /usr/local or the build: $dyn"; fi
done < <(find "$work/deb" -type f -print0)
((nelf >= 3)) || fail "expected collbench and its two libraries in the package, found $nelf ELF files"

# --- C. a clean Debian 12 root ------------------------------------------------------------------
/usr/bin/python3 "$src/tests/install/apt_sources.py" bookworm >"$work/sources.list" || skip "no bookworm apt source on this machine"
step "apt sources for the root: $(paste -sd';' "$work/sources.list")"
mkdir -p "$work/out"
# In the root: no host environment (TMPDIR etc. name host folders); the test's own PATH.
inroot='chroot "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive'
step "mmdebstrap --variant=apt bookworm (Essential + apt), then apt-get install ./$(basename "$deb") in it"
rc=0
TMPDIR=$work timeout --signal=TERM "${DEB_TEST_ROOT_TIMEOUT:-780}" \
  mmdebstrap --variant=apt --format=null --dpkgopt=force-unsafe-io \
  --skip=download/empty --skip=essential/unlink \
  --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
  --setup-hook='find /var/cache/apt/archives -maxdepth 1 -name "*.deb" -exec cp -l -t "$1/var/cache/apt/archives/" {} + 2>/dev/null || true' \
  --customize-hook="mkdir -p \"\$1/tmp/collbench-test\"" \
  --customize-hook="copy-in $deb $src/tests/install/in_root.sh /tmp/collbench-test/" \
  --customize-hook="$inroot apt-get install -y -q --no-install-recommends /tmp/collbench-test/$(basename "$deb")" \
  --customize-hook="$inroot bash /tmp/collbench-test/in_root.sh /tmp/collbench-test/out" \
  --customize-hook="sync-out /tmp/collbench-test/out $work/out" \
  bookworm /dev/null <"$work/sources.list" >"$work/root.log" 2>&1 || rc=$?
grep -E '^\[root|points measured|^Depends|^E:|FAIL|Setting up collbench|^(Get|Fetched)' "$work/root.log" | grep -v '^Get:' || true
if ((rc != 0)); then
  tail -n 60 "$work/root.log"
  grep -qE 'Could not resolve|Failed to fetch|Temporary failure|Unable to connect' "$work/root.log" &&
    ! grep -q 'Setting up collbench' "$work/root.log" && skip "the Debian archive is not reachable from here"
  fail "the clean root (exit $rc)"
fi
grep -q 'Setting up collbench' "$work/root.log" || fail "apt-get did not set up collbench in the root"
step "$(grep -c '^Setting up' "$work/root.log") packages set up in the root"

# --- what the root wrote, checked from outside ---------------------------------------------------
[[ -s $work/out/r.jsonl && -s $work/out/plots/report.html && -s $work/out/tuning.yaml && -s $work/out/compare/compare.md ]] ||
  fail "the root's results, report, tuning file or comparison are missing: $(ls -R "$work/out" | head -n 30)"
npng=$(find "$work/out/plots" -name '*.png' | wc -l)
((npng > 0)) || fail "no figures in the root's plots/"
/usr/bin/python3 - "$work/out/r.jsonl" "$work/out/plots/report.html" <<'PY' || fail "results from the root"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if '"run"' in l]
run = next(r for r in runs if r["type"] == "run")
assert run["argv"][0].endswith("collbench"), run["argv"]
assert run["versions"].get("nccl") in (None, "", "none") and run["versions"].get("cuda") in (None, "", "none"), run["versions"]
html = open(sys.argv[2], encoding="utf-8").read()
assert "allreduce" in html and "<img" in html, "report.html names no allreduce figure"
print(f"run {run['run_id']}: argv {' '.join(run['argv'][:3])} ...; versions {run['versions']}")
PY
step "ok: $npng figures, $(grep -c '"type": *"result"' "$work/out/r.jsonl") result records from the root"
