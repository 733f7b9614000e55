#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every suite — what CI runs
# (.ci/run, on a fresh clone). Stages, each timed and printed at the end with the 20 longest
# tests (the budget per stage: tests/README.md):
#   deps       scripts/deps.sh (Debian packages, only those missing)
#   build      the main tree (build/): every target; CUDA/NCCL code compiled for one
#              architecture when the toolkit exists (CUDA_ARCHS, default 90 here; the default
#              build keeps its list), objects cached for the CPU package build (build/.ccache)
#   ctest      every ctest suite of build/: unit, mpi, harness, slurm, analysis, docs, gpu
#              (skipped with a reason without a GPU), install
#   sanitizers the unit suite under ASan + UBSan (clang, build-asan/), then the libFuzzer
#   fuzzers   targets of the same tree for COLLBENCH_FUZZ_SECONDS each (scripts/ci-extra.sh)
#   mpich      MPICH's tree (build-mpich/): ctest -L mpich and tests/mpich/smoke.py
# Extra arguments go to the main ctest (e.g. -L unit, -R allreduce). COLLBENCH_QUICK=1 skips
# the sanitizer, fuzzer and MPICH stages.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
export CUDA_ARCHS=${CUDA_ARCHS:-90}

STAGES=()
FAILED=()
t_all=$(now)
# stage NAME CMD...: runs CMD and records its seconds. A failed test stage does not stop the
# later ones (their times and failures are worth seeing too); the exit status says it failed.
stage() {
  local name=$1 t0 rc=0
  shift
  t0=$(now)
  say "stage $name ($(date +%T))"
  "$@" || rc=$?
  STAGES+=("$name $(elapsed "$t0" %.0f) $([[ $rc == 0 ]] && echo ok || echo "FAILED($rc)")")
  ((rc == 0)) || FAILED+=("$name")
  return 0
}
summary() {
  local rc=$? s
  ((rc != 0 || ${#FAILED[@]} == 0)) || rc=1
  echo
  say "stage times (seconds; budget: tests/README.md)"
  for s in "${STAGES[@]}"; do printf '  %-11s %6s  %s\n' ${s}; done
  printf '  %-11s %6s  %s\n' total "$(elapsed "$t_all" %.0f)" "${FAILED[*]:+FAILED: ${FAILED[*]}}"
  # this run's ctest output: "  3/89 Test  #3: unit.transport .....   Passed    4.92 sec"
  if [[ -f $build/ctest-output.log ]]; then
    say "the 20 longest tests (seconds)"
    awk '/ Test +#[0-9]+: / && / sec$/ { for (i = 1; i <= NF; i++) if ($i ~ /^#[0-9]+:$/) n = $(i + 1)
         printf "  %8.1f  %s\n", $(NF - 1), n }' "$build/ctest-output.log" | sort -rn | head -20
  fi
  exit "$rc"
}
trap summary EXIT

stage deps scripts/deps.sh
stage build scripts/build.sh
((${#FAILED[@]} == 0)) || exit 1 # nothing to test without the packages or the build
# ctest's output is kept in build/ctest-output.log (the summary and scripts/test-costs.sh read it).
stage ctest bash -c 'set -o pipefail; cd "$1" && shift && ctest --output-on-failure -j"${CTEST_JOBS:-2}" "$@" 2>&1 | tee ctest-output.log' ctest "$build" "$@"
if [[ ${COLLBENCH_QUICK:-0} != 1 ]]; then
  stage sanitizers scripts/ci-extra.sh sanitizers
  stage fuzzers scripts/ci-extra.sh fuzzers
  stage mpich scripts/ci-extra.sh mpich
fi
