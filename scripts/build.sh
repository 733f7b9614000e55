#!/usr/bin/env bash
# Configures and builds collbench into ${BUILD_DIR:-build}. CUDA/NCCL code is compiled when
# the toolkit is present (/usr/local/cuda), even without a GPU. Extra args go to cmake.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
args=("-DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release}" -DPython3_EXECUTABLE=/usr/bin/python3)
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS:-80;90}")
fi
cmake -S . -B "$build" "${args[@]}" "$@" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
