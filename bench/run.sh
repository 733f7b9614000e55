#!/usr/bin/env bash
# Runs the Google Benchmark binaries and exports their JSON into results/bench/.
# Usage: bench/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=results/bench
mkdir -p "$out"
for b in bench_reduce bench_patterns bench_algorithms; do
  "$build/bench/$b" --benchmark_out="$out/$b.json" --benchmark_out_format=json \
    --benchmark_min_time=${BENCH_MIN_TIME:-0.2} "$@" | tail -n +1
done
echo "JSON written to $out/"
