#!/usr/bin/env bash
# The test command: installs what is missing, builds (CUDA/NCCL code compiled when the
# toolkit exists), and runs every ctest suite: unit (thread transport), mpi (mpirun -np 2..5),
# harness (collbench end to end, NVTX), slurm (emulated nodes + a real local Slurm cluster),
# analysis (Python), gpu (skipped with a reason when no GPU), sanitizers and fuzzers.
# Extra arguments go to ctest (e.g. -L unit, -R allreduce).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"${CTEST_JOBS:-2}" "$@")
# Sanitizers (ASan+UBSan unit suite) and fuzzers, in their own build dirs; COLLBENCH_QUICK=1 skips.
if [[ ${COLLBENCH_QUICK:-0} != 1 ]]; then scripts/ci-extra.sh; fi
