#!/usr/bin/env bash
# The main job: installs what is missing, builds, starts a local 3-node Slurm cluster on
# emulated nodes (network namespaces), runs the default sweep with `sbatch slurm/sweep.sh`,
# writes results + plots + report into results/<jobid>/, and stops the cluster.
# Usage: scripts/main.sh [SWEEP.yaml]   (default: slurm/sweeps/default.yaml)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
scripts/deps.sh main
# Only what the job runs: the collbench executable (its libraries come with it), not the tests
# and benchmarks of the full build.
BUILD_TARGETS=collbench scripts/build.sh
export COLLBENCH="$PWD/${BUILD_DIR:-build}/collbench"
exec slurm/local-sweep.sh "${1:-slurm/sweeps/default.yaml}"
