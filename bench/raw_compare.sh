#!/usr/bin/env bash
# collbench against the plain-MPI reference (bench/raw_mpi.cpp, built as BUILD_DIR/bench/collbench_raw),
# alternately (A B A B, same mpirun settings), 3 repetitions: per size the ratio collbench / raw
# for each timing mode (--batch, per-iteration, pingpong latency and bw), its spread over the
# repetitions and whether issue 14's targets are met, with the exact commands.
#
# Usage: bench/raw_compare.sh [BUILD_DIR] [raw_compare.py options: --reps N, -b 8, -e 16M, -f 2,
#        --only batch,per_iter,latency,bw, --quick, --keep DIR, --json-out F, --mpirun-args "..."]
#   BUILD_DIR defaults to build (collbench and bench/collbench_raw, Release). The default sweep
#   (8 B - 16 MiB, x2, 3 repetitions) takes a few minutes on an idle 2-core machine; -f 4 about half.
# Exit status: 0 when every run succeeded, whether or not the targets are met (it reports; it is
# not a test); 1 when a run failed, verified wrong or wrote no results; 2 on a bad option.
# Measure on an idle machine (uptime load < 0.5).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
split_build_dir "$@"
exec /usr/bin/python3 bench/raw_compare.py --build "$BUILD_DIR" "${ARGS[@]}"
