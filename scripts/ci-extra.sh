#!/usr/bin/env bash
# Extra CI checks, run by scripts/test.sh after the main ctest (skip with COLLBENCH_QUICK=1):
#   1. sanitizers: the thread-transport suite (ctest -L unit) built with ASan + UBSan in build-asan
#   2. fuzzers: libFuzzer targets (tests/fuzz/) built with clang in build-fuzz, each run for
#      COLLBENCH_FUZZ_SECONDS (default 20) over its seed corpus
# Build dirs are kept, so a second run only rebuilds what changed. On a 2-core machine from
# scratch (2026-11-26): ASan build 13 min (23 at -O2 -g), its ctest 4 min, fuzzers 73 s.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
PROG=ci-extra
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${COLLBENCH_JOBS:-$(nproc)}
FUZZ_SECONDS=${COLLBENCH_FUZZ_SECONDS:-20}
step() { say "$* ($(date +%T))"; }

sanitizers() {
  step "ASan+UBSan build (build-asan)"
  # -O1 -g1 (line tables: reports keep file:line): ASan's recommended level; on 2 cores the
  # -O2 -g build of the unit targets took 23 min, and one heavy file compiles in 54 s, not 86.
  cmake -S "$ROOT" -B build-asan -DCOLLBENCH_SANITIZE=ON -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF \
    -DCOLLBENCH_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
  # Only the unit suite's executables: ctest "unit.NAME" is target test_NAME (tests/Collbench.cmake).
  local targets="" t all
  all=$(cmake --build build-asan --target help)
  for t in $(ctest --test-dir build-asan -N -L unit | sed -n 's/.*Test *#[0-9]*: unit\.\(.*\)$/test_\1/p' | sort -u); do
    if grep -q -- "\.\.\. $t\$" <<<"$all"; then targets+=" $t"; fi
  done
  # shellcheck disable=SC2086
  cmake --build build-asan -j"$JOBS" --target $targets
  step "ctest -L unit under ASan+UBSan"
  # halt_on_error: any report fails the test; leaks are reported too.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build-asan -L unit --output-on-failure -j"$JOBS"
}

fuzzers() {
  if ! command -v clang++ >/dev/null; then
    log "clang++ not found: fuzzers skipped (apt-get install clang libclang-rt-14-dev)"
    return 0
  fi
  step "libFuzzer build (build-fuzz)"
  cmake -S "$ROOT" -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCOLLBENCH_FUZZ=ON \
    -DCOLLBENCH_TESTS=OFF -DCOLLBENCH_BENCH=OFF -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF -DCOLLBENCH_NVTX=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-fuzz -j"$JOBS" --target fuzz_size fuzz_config
  local t work
  rm -f "$ROOT"/build-fuzz/crash-*
  for t in size config; do
    step "fuzz_$t for ${FUZZ_SECONDS} s"
    # New inputs go to a scratch copy of the corpus; the repository's seeds stay as they are.
    work=$(mktemp -d)
    cp "$ROOT/tests/fuzz/corpus/$t/"* "$work/"
    (cd "$work" && "$ROOT/build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
      -artifact_prefix="$ROOT/build-fuzz/crash-$t-" "$work" 2>&1 | grep -E '^(stat::number_of_executed_units|==|SUMMARY|#[0-9]+ +DONE)' || true)
    rm -rf "$work"
    if ls "$ROOT"/build-fuzz/crash-"$t"-* >/dev/null 2>&1; then
      log "fuzz_$t found a crash: $(ls "$ROOT"/build-fuzz/crash-"$t"-*)"
      return 1
    fi
  done
}

t0=$(date +%s)
sanitizers
t1=$(date +%s)
fuzzers
t2=$(date +%s)
step "done: sanitizers $((t1 - t0)) s, fuzzers $((t2 - t1)) s"
