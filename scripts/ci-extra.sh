#!/usr/bin/env bash
# The sanitizer and fuzzer stages of the test command (scripts/test.sh runs them after the main
# ctest; COLLBENCH_QUICK=1 skips them there). One clang tree, build-asan/, serves both:
#   sanitizers  the unit suite's executables (ctest -L unit) built with ASan + UBSan and run
#   fuzzers     the libFuzzer targets (tests/fuzz/), each for COLLBENCH_FUZZ_SECONDS (default 20)
#               over a scratch copy of its seed corpus
#   mpich       collbench against MPICH (build-mpich/, its own tree): ctest -L mpich and the smoke test
#   scripts/ci-extra.sh [sanitizers|fuzzers|mpich|all]   (default all)
# Why clang at -O0 with the library at -O1: the heavy translation units (nlohmann/json, CLI11,
# GoogleTest users) are what the build pays for, and clang -O0 compiles them ~3.4x faster than
# GCC -O1 with the same sanitizers (report_json.cpp 8.5 s vs 29 s of CPU); the time the unit
# tests run is spent in collbench_collectives (algorithms, reduce kernels, the thread transport,
# verification), which stays at -O1. Both trees compile their sources in batches (COLLBENCH_UNITY:
# a unity build; the headers are parsed once per batch): the sanitizer tree's unit targets in
# 136 s instead of 234 s, MPICH's suite in 66 s instead of 135 s (2 cores, Xeon VM, 2026-11-28).
# The tree is kept, so a second run rebuilds what changed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
PROG=ci-extra
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${COLLBENCH_JOBS:-$(nproc)}
FUZZ_SECONDS=${COLLBENCH_FUZZ_SECONDS:-20}
TREE=build-asan
step() { say "$* ($(date +%T))"; }

configure() {
  command -v clang++ >/dev/null || die "clang++ not found (scripts/deps.sh installs clang libclang-rt-14-dev)"
  if [[ -f $TREE/CMakeCache.txt ]]; then
    # a tree of this script's (older ones were GCC's, without the fuzzers or batches): keep it, else start anew
    grep -q '^COLLBENCH_FUZZ:BOOL=ON' "$TREE/CMakeCache.txt" &&
      grep -q '^COLLBENCH_UNITY:BOOL=ON' "$TREE/CMakeCache.txt" && return 0
    rm -rf "$TREE"
  fi
  cmake -S "$ROOT" -B "$TREE" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
    -DCOLLBENCH_SANITIZE=ON -DCOLLBENCH_FUZZ=ON -DCOLLBENCH_UNITY=ON \
    -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF -DCOLLBENCH_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" -DCOLLBENCH_COLLECTIVES_OPTIONS=-O1 \
    -DPython3_EXECUTABLE=/usr/bin/python3 >"$TREE.configure.log" 2>&1 || { cat "$TREE.configure.log"; exit 1; }
}

sanitizers() {
  configure
  step "ASan+UBSan build ($TREE)"
  # The unit tests that run an executable of the tree (not the script and CMake checks, which
  # have nothing to instrument), and those executables: "TEST TARGET" pairs from the generated
  # CTestTestfile.cmake files (ctest's own listing leaves out executables not built yet).
  local targets tests pairs
  mapfile -t pairs < <(find "$TREE/tests" -name CTestTestfile.cmake -exec sed -n \
    's|^add_test(\(\[=\[\)\{0,1\}\(unit\.[A-Za-z0-9_]*\)\(\]=\]\)\{0,1\} "[^"]*/\(test_[A-Za-z0-9_]*\)".*|\2 \4|p' {} +)
  ((${#pairs[@]})) || die "no unit test executables in $TREE"
  targets=$(printf '%s\n' "${pairs[@]}" | awk '{ print $2 }' | sort -u | tr '\n' ' ')
  tests=$(printf '%s\n' "${pairs[@]}" | awk '{ print $1 }' | sed 's/\./\\./g' | paste -sd '|')
  # shellcheck disable=SC2086
  cmake --build "$TREE" -j"$JOBS" --target $targets
  step "ctest -L unit under ASan+UBSan"
  # halt_on_error: any report fails the test; leaks are reported too.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir "$TREE" -L unit -R "^(${tests})\$" --output-on-failure -j"$JOBS"
}

# One libFuzzer target over a scratch copy of its seed corpus (new inputs go there; the
# repository's seeds stay as they are); a crash leaves crash-T-* in the tree.
fuzz_one() {
  local t=$1 work
  work=$(mktemp -d)
  cp "$ROOT/tests/fuzz/corpus/$t/"* "$work/"
  (cd "$work" && "$ROOT/$TREE/tests/fuzz/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
    -artifact_prefix="$ROOT/$TREE/crash-$t-" "$work" 2>&1 | grep -E '^(stat::number_of_executed_units|==|SUMMARY|#[0-9]+ +DONE)' || true)
  rm -rf "$work"
}

fuzzers() {
  configure
  step "libFuzzer build ($TREE)"
  cmake --build "$TREE" -j"$JOBS" --target fuzz_size fuzz_config
  local t pids=() rc=0
  rm -f "$ROOT/$TREE"/crash-*
  # The two fuzzers at once: each is one process on one core, so on 2 cores this halves the stage.
  step "fuzz_size and fuzz_config for ${FUZZ_SECONDS} s each, side by side"
  for t in size config; do fuzz_one "$t" >"$ROOT/$TREE/fuzz_$t.log" 2>&1 & pids+=($!); done
  for t in "${pids[@]}"; do wait "$t" || rc=1; done
  for t in size config; do
    sed "s/^/fuzz_$t: /" "$ROOT/$TREE/fuzz_$t.log"
    if ls "$ROOT/$TREE"/crash-"$t"-* >/dev/null 2>&1; then
      log "fuzz_$t found a crash: $(ls "$ROOT/$TREE"/crash-"$t"-*)"
      rc=1
    fi
  done
  return "$rc"
}

# The MPICH build: build-mpich/, clang at -O0 with the collectives at -O1 as the sanitizer tree,
# with Gloo hidden (the project without libgloo-dev: launch.without_gloo checks what it says),
# only the targets of MPICH's suite (collbench_mpich_suite: collbench, the MPI
# test executables, the yield shim), then that suite (ctest -L mpich: what it holds and why,
# tests/README.md) and tests/mpich/smoke.py under mpiexec.hydra. The unit suites do not depend
# on the MPI and run in the main tree only.
mpich() {
  local tree=build-mpich
  command -v mpicxx.mpich >/dev/null || die "mpicxx.mpich not found (scripts/deps.sh installs libmpich-dev mpich)"
  if [[ ! -f $tree/CMakeCache.txt ]]; then
    cmake -S "$ROOT" -B "$tree" -DCOLLBENCH_MPI=mpich -DCOLLBENCH_UNITY=ON \
      -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
      -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF -DCOLLBENCH_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g0 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g0 -DNDEBUG" \
      -DCOLLBENCH_COLLECTIVES_OPTIONS=-O1 -DPython3_EXECUTABLE=/usr/bin/python3 \
      -DCMAKE_DISABLE_FIND_PACKAGE_Gloo=ON >"$tree.configure.log" 2>&1 ||
      { cat "$tree.configure.log"; exit 1; }
  else
    # a kept tree: new targets
    cmake -DCOLLBENCH_UNITY=ON "$tree" >"$tree.configure.log" 2>&1 || { cat "$tree.configure.log"; exit 1; }
  fi
  grep -q "Gloo: not found" "$tree.configure.log" || die "$tree: Gloo was not hidden from the configure"
  step "MPICH build ($tree)"
  cmake --build "$tree" -j"$JOBS" --target collbench_mpich_suite
  step "ctest -L mpich ($tree)"
  local rc=0
  ctest --test-dir "$tree" -L mpich --output-on-failure -j"$JOBS" || rc=$?
  step "tests/mpich/smoke.py"
  /usr/bin/python3 "$ROOT/tests/mpich/smoke.py" "$ROOT/$tree/collbench" "$(command -v mpiexec.hydra)" "$ROOT/$tree/smoke" || rc=$?
  return "$rc"
}

case ${1:-all} in
  sanitizers) sanitizers ;;
  fuzzers) fuzzers ;;
  mpich) mpich ;;
  all)
    sanitizers
    fuzzers
    mpich
    ;;
  *) die "unknown stage '$1' (sanitizers, fuzzers, mpich or all)" ;;
esac
