#!/usr/bin/env bash
# Side-by-side performance targets (issue #8), measured by collbench itself: every custom
# algorithm runs interleaved with the library in the same invocation (targets 2 and 5: two
# cases of one YAML config), 3 repetitions, medians. Prints one row per target: the ratio's
# median (min-max over repetitions), the threshold, met / not met, and the exact command.
#
# Usage: bench/compare.sh [BUILD_DIR] [targets.py options: --reps N, --quick, --keep DIR, --json-out F]
#   BUILD_DIR defaults to build (must hold the collbench executable, Release).
#   Sizes and iterations: bandwidth points -n 20 -w 5 (1-16 MiB), latency points -n 2000 -w 200
#   (8 B), pingpong bw -n 5 -w 1 (16 MiB, window 64); 3 repetitions on an idle 2-core machine: the
#   seed targets about 1 minute, the zero-copy ones (--only zero-copy) 2m11s on the EPYC VM and
#   3 minutes on the Xeon VM; more under load (--quick: a smoke run only).
# Exit status: 0 when every run succeeded, whether or not the targets are met (it reports; it is
# not a test); 1 when a collbench run failed, wrote wrong results or no results.
# Measure on an idle machine (uptime load < 0.5): only ratios from one run mean anything.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
split_build_dir "$@"
exec /usr/bin/python3 bench/targets.py --build "$BUILD_DIR" "${ARGS[@]}"
