#!/usr/bin/env bash
# Runs the Google Benchmark binaries and exports their JSON into results/bench/.
# Usage: bench/run.sh [BUILD_DIR] [Google Benchmark flags...]   (default BUILD_DIR: build)
#   BENCH_MIN_TIME (default 0.2) seconds per benchmark. About 2-3 minutes on 2 cores.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
split_build_dir "$@"
out=results/bench
mkdir -p "$out"
for b in bench_reduce bench_patterns bench_algorithms; do
  "$BUILD_DIR/bench/$b" --benchmark_out="$out/$b.json" --benchmark_out_format=json \
    --benchmark_min_time=${BENCH_MIN_TIME:-0.2} "${ARGS[@]}"
done
echo "JSON written to $out/"
