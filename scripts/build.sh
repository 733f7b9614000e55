#!/usr/bin/env bash
# Configures and builds collbench into ${BUILD_DIR:-build}. CUDA/NCCL code is compiled when
# the toolkit is present (/usr/local/cuda), even without a GPU, for CUDA_ARCHS (default 80;90).
# Extra args go to cmake; BUILD_TARGETS="collbench ..." builds only those targets; COLLBENCH_JOBS=N
# (as scripts/ci-extra.sh) compiles N at a time (default: every core).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
args=("-DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release}" -DPython3_EXECUTABLE=/usr/bin/python3)
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS:-80;90}")
fi
if command -v ccache >/dev/null; then
  # Objects cached in the build tree itself (a fresh clone starts cold), paths relative to the
  # checkout: the CPU package build of tests/install/deb_test.sh (a sibling tree) reuses them.
  # Depend mode: hashed from the compiler's own dependency file, no extra preprocessor pass
  # (a cold cache costs ~nothing).
  cache=$build/ccache
  [[ $cache == /* ]] || cache=$PWD/$cache
  args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_DIR=$cache;CCACHE_BASEDIR=$PWD;CCACHE_DEPEND=1;ccache")
fi
cmake -S . -B "$build" "${args[@]}" "$@" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
# BUILD_TARGETS (space-separated) builds only those, e.g. the main job's "collbench".
# shellcheck disable=SC2086
cmake --build "$build" -j"${COLLBENCH_JOBS:-$(nproc)}" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
