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
# Extra arguments go to the main ctest (e.g. -L unit, -R allreduce). COLLBENCH_QUICK=1 skips
# the sanitizer and fuzzer stages.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
export CUDA_ARCHS=${CUDA_ARCHS:-90}

STAGES=()
t_all=$(now)
# stage NAME CMD...: runs CMD, records its seconds; the table is printed on any exit.
stage() {
  local name=$1 t0 rc=0
  shift
  t0=$(now)
  say "stage $name ($(date +%T))"
  "$@" || rc=$?
  STAGES+=("$name $(elapsed "$t0" %.0f)")
  return "$rc"
}
summary() {
  local rc=$? s
  echo
  say "stage times (seconds; budget: tests/README.md)"
  for s in "${STAGES[@]}"; do printf '  %-11s %6s\n' ${s}; done
  printf '  %-11s %6s\n' total "$(elapsed "$t_all" %.0f)"
  # CTestCostData.txt: "name runs average-seconds" per test, written by every ctest run.
  if [[ -f $build/Testing/Temporary/CTestCostData.txt ]]; then
    say "the 20 longest tests (seconds)"
    awk 'NF == 3 { printf "  %8.1f  %s\n", $3, $1 }' "$build/Testing/Temporary/CTestCostData.txt" | sort -rn | head -20
  fi
  exit "$rc"
}
trap summary EXIT

stage deps scripts/deps.sh
stage build scripts/build.sh
stage ctest bash -c 'cd "$1" && shift && ctest --output-on-failure -j"${CTEST_JOBS:-2}" "$@"' ctest "$build" "$@"
if [[ ${COLLBENCH_QUICK:-0} != 1 ]]; then
  stage sanitizers scripts/ci-extra.sh sanitizers
  stage fuzzers scripts/ci-extra.sh fuzzers
fi
